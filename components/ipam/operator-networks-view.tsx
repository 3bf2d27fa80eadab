'use client';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import type { RetainedAllocationView } from '@/server/ipam/claims';
import { errorMessage } from '@/components/ui/errors';
import { Pager } from '@/components/ui/pager';
import { Alert, Badge, Card, EmptyState, Table, Td, formatTime } from '@/components/ui/primitives';
import { SearchBox, useSearchText } from '@/components/ui/search-box';
import { familyLabel } from './format';
import { useInvalidateIpam } from './hooks';
import { ADMIN_PAGE_SIZE, adminPoolsInput, adminRetainedInput } from './queries';
import { ReleaseButton, ReleaseRetainedDialog } from './retained-section';
import { Count, MiniBar } from './utilization';

/** Operator view: every pool of every project by utilization, and retained allocations to release. */
export function OperatorNetworksView() {
  return (
    <div className="space-y-6">
      <Card title="Pools across projects">
        <AllPools />
      </Card>
      <Card title="Retained allocations">
        <Retained />
      </Card>
    </div>
  );
}

function AllPools() {
  const trpc = useTRPC();
  const search = useSearchText();
  const [offset, setOffset] = useState(0);
  const debounced = search.settled;
  const pools = useQuery({ ...trpc.ipam.admin.pools.queryOptions(adminPoolsInput(offset, debounced)), placeholderData: keepPreviousData });
  const items = pools.data?.items ?? [];
  const total = pools.data?.total ?? 0;
  return (
    <div>
      <div className="mb-3 flex flex-wrap items-center justify-between gap-2">
        <p className="text-sm text-slate-600">Fullest first. Child pools are inside their roots, so a root&apos;s figures include them.</p>
        <SearchBox label="Search pools" placeholder="Project, network or pool" search={search} onChange={() => setOffset(0)} className="w-64" />
      </div>
      {pools.error && <Alert testId="pools-error">{errorMessage(pools.error)}</Alert>}
      {pools.isSuccess && total === 0 ? (
        <EmptyState title={debounced ? 'No pools match' : 'No networks yet'}>
          {debounced
            ? `No project, network or pool name contains “${debounced}”.`
            : 'Every project’s networks and pools appear here with their capacity, allocation and utilization.'}
        </EmptyState>
      ) : (
        <Table head={['Project', 'Network', 'Pool', 'CIDR', 'Capacity', 'Allocated', 'Reserved', 'Utilization', 'Allocations']}>
          {items.map((p) => (
            <tr key={p.id}>
              <Td>{p.project}</Td>
              <Td>{p.network}</Td>
              <Td>
                <span className="font-medium text-slate-900">{p.name}</span> <Badge tone={p.kind === 'Root' ? 'blue' : 'slate'}>{p.kind}</Badge>
              </Td>
              <Td>
                <code className="font-mono text-xs">{p.cidr}</code> <span className="text-xs text-slate-500">{familyLabel(p.family)}</span>
              </Td>
              <Td className="text-right">
                <Count value={p.capacity} />
              </Td>
              <Td className="text-right">
                <Count value={p.allocated} />
              </Td>
              <Td className="text-right">
                <Count value={p.reserved} />
              </Td>
              <Td>
                <MiniBar label={`${p.project}/${p.network}/${p.name} utilization`} utilization={p.utilization} />
              </Td>
              <Td className="text-right tabular-nums">{p.allocationCount.toLocaleString('en-US')}</Td>
            </tr>
          ))}
        </Table>
      )}
      <Pager
        label="Pools pages"
        offset={offset}
        count={items.length}
        pageSize={ADMIN_PAGE_SIZE}
        total={total}
        hasNext={offset + items.length < total}
        onChange={setOffset}
      />
    </div>
  );
}

function Retained() {
  const trpc = useTRPC();
  const invalidate = useInvalidateIpam();
  const [offset, setOffset] = useState(0);
  const retained = useQuery({ ...trpc.ipam.admin.retained.queryOptions(adminRetainedInput(offset)), placeholderData: keepPreviousData });
  const rows = (retained.data ?? []).slice(0, ADMIN_PAGE_SIZE);
  const hasNext = (retained.data?.length ?? 0) > ADMIN_PAGE_SIZE;
  const [releasing, setReleasing] = useState<RetainedAllocationView | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const release = useMutation(
    trpc.ipam.admin.releaseRetained.mutationOptions({
      onSuccess: (r) => {
        setNotice(r.released ? `Released ${releasing?.cidr} (${releasing?.name}).` : `${releasing?.cidr} was already released.`);
        setReleasing(null);
        void invalidate();
      },
    }),
  );
  return (
    <div>
      <p className="mb-3 text-sm text-slate-600">
        Blocks of deleted claims with reclaim policy Retain. They stay counted, and their names stay taken, until released here or until the retention lease
        ends.
      </p>
      {notice && (
        <div className="mb-3">
          <Alert tone="green" testId="retained-notice">
            {notice}
          </Alert>
        </div>
      )}
      {retained.error && <Alert testId="retained-error">{errorMessage(retained.error)}</Alert>}
      {retained.isSuccess && rows.length === 0 && offset === 0 ? (
        <EmptyState title="No retained allocations">
          When a claim with reclaim policy Retain is deleted, its block appears here until it is released or its retention lease expires.
        </EmptyState>
      ) : (
        <Table head={['Name', 'CIDR', 'Project', 'Network / pool', 'Addresses', 'Retained until', '']}>
          {rows.map((r) => (
            <tr key={r.id}>
              <Td className="font-medium text-slate-900">{r.name}</Td>
              <Td>
                <code className="font-mono text-xs">{r.cidr}</code>
              </Td>
              <Td>{r.project}</Td>
              <Td>
                {r.network} <span className="text-slate-500">/</span> {r.pool}
              </Td>
              <Td className="text-right">
                <Count value={r.size} />
              </Td>
              <Td className="whitespace-nowrap font-mono text-xs">{formatTime(r.retainedUntil)}</Td>
              <Td className="text-right">
                <ReleaseButton
                  row={r}
                  onClick={() => {
                    setNotice(null);
                    release.reset();
                    setReleasing(r);
                  }}
                />
              </Td>
            </tr>
          ))}
        </Table>
      )}
      <Pager label="Retained pages" offset={offset} count={rows.length} pageSize={ADMIN_PAGE_SIZE} hasNext={hasNext} onChange={setOffset} />
      {releasing && (
        <ReleaseRetainedDialog
          row={releasing}
          pending={release.isPending}
          error={release.error ? errorMessage(release.error) : null}
          onCancel={() => setReleasing(null)}
          onConfirm={() => release.mutate({ allocationId: releasing.id })}
        />
      )}
    </div>
  );
}
