'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { Pager } from '@/components/ui/pager';
import { Alert, Card, EmptyState, Table, Td, formatTime } from '@/components/ui/primitives';
import { CountBar } from './bars';
import { ADMIN_CLUSTERS_PAGE_SIZE, adminClustersInput } from './queries';

/** Operator view: Kubernetes clusters across projects with their pod address lease counts. */
export function OperatorClustersSection() {
  const trpc = useTRPC();
  const [offset, setOffset] = useState(0);
  const q = useQuery({ ...trpc.cni.admin.clusters.queryOptions(adminClustersInput(offset)), placeholderData: keepPreviousData });
  const rows = q.data?.slice(0, ADMIN_CLUSTERS_PAGE_SIZE) ?? [];
  const hasNext = (q.data?.length ?? 0) > ADMIN_CLUSTERS_PAGE_SIZE;
  const maxLeases = Math.max(1, ...rows.map((r) => r.leases));
  return (
    <Card title="Kubernetes clusters" className="mt-6">
      {q.error && <Alert testId="admin-clusters-error">{errorMessage(q.error)}</Alert>}
      {!q.data ? (
        !q.error && <p className="text-sm text-slate-500">Loading clusters…</p>
      ) : rows.length === 0 && offset === 0 ? (
        <EmptyState title="No clusters yet">
          Every project&apos;s registered Kubernetes clusters appear here with their network and their pod address leases, nodes and node blocks.
        </EmptyState>
      ) : (
        <>
          <Table head={['Project', 'Cluster', 'Network', 'Leases', 'Nodes', 'Blocks', 'Registered']}>
            {rows.map((c) => (
              <tr key={c.id}>
                <Td>{c.project}</Td>
                <Td className="font-medium text-slate-900">{c.name}</Td>
                <Td>{c.network}</Td>
                <Td>
                  <CountBar label={`${c.project}/${c.name} leases`} value={c.leases} max={maxLeases} />
                </Td>
                <Td className="tabular-nums">{c.nodes.toLocaleString('en-US')}</Td>
                <Td className="tabular-nums">{c.blocks.toLocaleString('en-US')}</Td>
                <Td className="whitespace-nowrap text-xs">{formatTime(c.createdAt)}</Td>
              </tr>
            ))}
          </Table>
          <Pager label="Clusters pages" offset={offset} count={rows.length} pageSize={ADMIN_CLUSTERS_PAGE_SIZE} hasNext={hasNext} onChange={setOffset} />
        </>
      )}
    </Card>
  );
}
