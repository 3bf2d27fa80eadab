'use client';
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Button } from '@/components/ui/primitives';
import { exactCount, formatCount } from './format';

/** A free block chosen from the list, to pre-fill the claim form with (`nonce` tells two choices of one block apart). */
export interface ClaimPrefill {
  cidr: string;
  pool: string;
  family: 'IPv4' | 'IPv6';
  nonce: number;
}

/**
 * The largest free blocks of the pool the map shows, from its free-block table (the blocks a claim
 * naming them as its address gets). Editors get "Claim this", which pre-fills the claim form.
 */
export function FreePrefixes({
  project,
  network,
  pool,
  onClaim,
}: {
  project: string;
  network: string;
  pool: string;
  /** Absent for those who cannot create claims. */
  onClaim?: (prefill: Omit<ClaimPrefill, 'nonce'>) => void;
}) {
  const trpc = useTRPC();
  const free = useQuery(trpc.ipam.pools.available.queryOptions({ project, network, pool, limit: 8 }));
  if (free.error) return <Alert testId="free-prefixes-error">{errorMessage(free.error)}</Alert>;
  const answer = free.data;
  if (!answer) return <p className="text-sm text-slate-500">Loading free prefixes…</p>;
  if (answer.items.length === 0) return <p className="text-sm text-slate-600">Pool {answer.pool.name} has no free addresses.</p>;
  return (
    <div>
      <p className="mb-2 text-xs text-slate-500">
        The largest free blocks of pool <span className="font-medium">{answer.pool.name}</span>, largest first.
      </p>
      <ul aria-label="Free prefixes" className="divide-y divide-slate-100 rounded-md border border-slate-200">
        {answer.items.map((b) => (
          <li key={b.cidr} className="flex flex-wrap items-center justify-between gap-2 px-2.5 py-1.5 text-sm">
            <span className="min-w-0">
              <span className="block font-mono text-slate-900">{b.cidr}</span>
              <span className="text-xs text-slate-500" title={`${exactCount(b.size)} addresses`}>
                {formatCount(b.size)} {b.size === '1' ? 'address' : 'addresses'}
              </span>
            </span>
            {onClaim &&
              (b.claimable ? (
                <Button
                  variant="secondary"
                  className="px-2 py-0.5 text-xs"
                  aria-label={`Claim ${b.cidr}`}
                  onClick={() => onClaim({ cidr: b.cidr, pool: answer.pool.name, family: answer.pool.family })}
                >
                  Claim this
                </Button>
              ) : (
                <span className="text-xs text-slate-500">
                  Pool claims are /{answer.pool.minPrefixLength}–/{answer.pool.maxPrefixLength}
                </span>
              ))}
          </li>
        ))}
      </ul>
    </div>
  );
}
