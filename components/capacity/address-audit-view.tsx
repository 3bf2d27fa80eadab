'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { formatCount } from '@/components/ui/numbers';
import { Alert, Badge, Button, Card, Table, Td, formatTime } from '@/components/ui/primitives';

const PAGE = 200;

const KIND_TONE: Record<string, 'slate' | 'green' | 'amber' | 'blue' | 'red'> = {
  Free: 'green',
  Reservation: 'slate',
  Retained: 'amber',
  Claim: 'blue',
  PoolCarve: 'blue',
  PodAddress: 'blue',
};

/**
 * A network's address audit: each pool's counters beside the totals of what is listed (read in one
 * snapshot), then every allocation with its owner, every reservation and free block, a page at a
 * time, and the CSV download of the whole report.
 */
export function AddressAuditView({ project, network }: { project: string; network: string }) {
  const trpc = useTRPC();
  // The cursors of the pages seen so far: going back is going to an earlier cursor.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const q = useQuery(trpc.capacity.audit.queryOptions({ project, network, limit: PAGE, cursor }));
  const csvHref = `/api/capacity/address-audit?project=${encodeURIComponent(project)}&network=${encodeURIComponent(network)}`;

  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <Link href={`/projects/${project}/networks/${network}`} className="text-xs font-medium text-brand-600 hover:underline">
            ← Network {network}
          </Link>
          <h1 className="mt-1 text-xl font-semibold text-slate-900">Address audit</h1>
          <p className="mt-0.5 max-w-3xl text-sm text-slate-600">
            Every allocation of {network} with its owner, every reservation and every free block, pool by pool. The counters and the rows are read in one
            snapshot, so each pool&apos;s rows add up to its counters.
          </p>
        </div>
        <a href={csvHref} download className="rounded-md bg-brand-600 px-3 py-1.5 text-sm font-medium text-white hover:bg-brand-700">
          Download CSV
        </a>
      </div>
      {q.error && <Alert testId="audit-error">{errorMessage(q.error)}</Alert>}
      {q.data && (
        <>
          <Card title="Pools">
            <Table label="Pool totals" head={['Pool', 'CIDR', 'Addresses', 'Allocated', 'Reserved', 'Free', 'Counters']}>
              {q.data.pools.map((p) => (
                <tr key={p.id}>
                  <Td className="font-medium">{p.name}</Td>
                  <Td className="font-mono text-xs">{p.cidr}</Td>
                  <Td>{formatCount(p.size)}</Td>
                  <Td>{formatCount(p.totals.allocated)}</Td>
                  <Td>{formatCount(p.totals.reserved)}</Td>
                  <Td>{formatCount(p.totals.free)}</Td>
                  <Td>{p.consistent ? <Badge tone="green">match</Badge> : <Badge tone="red">differ</Badge>}</Td>
                </tr>
              ))}
            </Table>
          </Card>
          <Card title="Blocks">
            <Table label="Address audit" head={['Pool', 'CIDR', 'Kind', 'Addresses', 'Owner', 'Detail', 'Since']} empty="Nothing more to list.">
              {q.data.items.map((r) => (
                <tr key={`${r.pool}:${r.cidr}`}>
                  <Td className="whitespace-nowrap">{r.pool}</Td>
                  <Td className="whitespace-nowrap font-mono text-xs">{r.cidr}</Td>
                  <Td>
                    <Badge tone={KIND_TONE[r.kind] ?? 'slate'}>{r.kind}</Badge>
                  </Td>
                  <Td>{formatCount(r.addresses)}</Td>
                  <Td className="whitespace-nowrap">
                    {r.owner ? (
                      <>
                        <span className="text-xs text-slate-500">{r.ownerKind}</span> {r.owner}
                      </>
                    ) : (
                      (r.ownerKind ?? '—')
                    )}
                  </Td>
                  <Td className="text-xs text-slate-600">{r.detail ?? ''}</Td>
                  <Td className="whitespace-nowrap text-xs">{r.createdAt ? formatTime(r.createdAt) : ''}</Td>
                </tr>
              ))}
            </Table>
            <nav aria-label="Audit pages" className="mt-3 flex items-center justify-between gap-2 text-sm">
              <span className="text-slate-500">Page {cursors.length}</span>
              <span className="flex gap-2">
                <Button variant="secondary" disabled={cursors.length === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
                  Previous
                </Button>
                <Button variant="secondary" disabled={!q.data.next} onClick={() => setCursors((c) => [...c, q.data?.next ?? undefined])}>
                  Next
                </Button>
              </span>
            </nav>
          </Card>
        </>
      )}
      {!q.data && !q.error && <p className="text-sm text-slate-500">Loading the audit…</p>}
    </div>
  );
}
