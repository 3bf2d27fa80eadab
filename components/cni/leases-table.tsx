'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { familyLabel } from '@/components/ipam/format';
import { errorMessage } from '@/components/ui/errors';
import { Pager } from '@/components/ui/pager';
import { Alert, Badge, EmptyState, Select, Table, Td, formatTime } from '@/components/ui/primitives';
import { SearchBox, useSearchText } from '@/components/ui/search-box';
import { LEASES_PAGE_SIZE, leasesListInput } from './queries';

/**
 * Pod address leases, newest first, searched on the server by IP (exact), pod, namespace, node or
 * container id prefix, and paginated. `clusters` are the clusters this view may show; when
 * `allowAll` is false (other clusters of the project are on other networks) one must be chosen,
 * since the lease list filters by cluster, not by network.
 */
export function LeasesTable({ project, clusters, allowAll }: { project: string; clusters: string[]; allowAll: boolean }) {
  const trpc = useTRPC();
  const search = useSearchText();
  const [cluster, setCluster] = useState<string>(allowAll ? '' : (clusters[0] ?? ''));
  const [offset, setOffset] = useState(0);
  const debounced = search.settled;
  const selected = allowAll || clusters.includes(cluster) ? cluster : (clusters[0] ?? '');
  const leases = useQuery({ ...trpc.cni.leases.list.queryOptions(leasesListInput(project, selected, debounced, offset)), placeholderData: keepPreviousData });
  const items = leases.data?.items ?? [];
  const total = leases.data?.total ?? 0;

  return (
    <div>
      <div className="mb-3 flex flex-wrap items-center gap-2">
        <SearchBox
          label="Search leases"
          placeholder="IP address, pod, namespace or node"
          search={search}
          spellCheck={false}
          onChange={() => setOffset(0)}
          className="w-72"
        />
        {(clusters.length > 1 || !allowAll) && (
          <div className="w-48">
            <Select
              aria-label="Cluster"
              value={selected}
              onChange={(e) => {
                setCluster(e.target.value);
                setOffset(0);
              }}
            >
              {allowAll && <option value="">All clusters</option>}
              {clusters.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </Select>
          </div>
        )}
        {leases.isFetching && <span className="text-xs text-slate-500">Loading…</span>}
      </div>
      {leases.error && <Alert testId="leases-error">{errorMessage(leases.error)}</Alert>}
      {leases.isSuccess && total === 0 ? (
        <EmptyState title={debounced ? 'No leases match' : 'No pod addresses leased yet'}>
          {debounced
            ? `No lease has the address “${debounced}” or a pod, namespace or node containing it.`
            : 'Each pod address the meridian-ipam CNI plugin leases on this network appears here with its pod, node, container and interface.'}
        </EmptyState>
      ) : (
        <Table head={['Address', 'Pod', 'Node', 'Cluster', 'Container / ifname', 'Leased', 'Checked']}>
          {items.map((l) => (
            <tr key={l.id}>
              <Td className="whitespace-nowrap font-mono text-xs">
                {l.address} <Badge tone={l.family === 6 ? 'blue' : 'slate'}>{familyLabel(l.family)}</Badge>
              </Td>
              <Td>
                {l.podName ? (
                  <span className="font-mono text-xs">
                    <span className="text-slate-500">{l.podNamespace ?? '—'}/</span>
                    {l.podName}
                  </span>
                ) : (
                  <span className="text-xs text-slate-500">unknown</span>
                )}
              </Td>
              <Td className="font-mono text-xs">{l.node}</Td>
              <Td>{l.cluster}</Td>
              <Td className="font-mono text-xs">
                <span title={l.containerId}>{l.containerId.slice(0, 12)}</span>
                <span className="text-slate-500"> / </span>
                {l.ifname}
                <span className="block text-slate-500">{l.cniNetwork}</span>
              </Td>
              <Td className="whitespace-nowrap text-xs">{formatTime(l.createdAt)}</Td>
              <Td className="whitespace-nowrap text-xs">{formatTime(l.checkedAt)}</Td>
            </tr>
          ))}
        </Table>
      )}
      <Pager
        label="Leases pages"
        offset={offset}
        count={items.length}
        pageSize={LEASES_PAGE_SIZE}
        total={total}
        hasNext={leases.data?.nextOffset != null}
        nextOffset={leases.data?.nextOffset}
        onChange={setOffset}
      />
    </div>
  );
}
