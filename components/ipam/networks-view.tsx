'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { Pager } from '@/components/ui/pager';
import { Alert, Badge, Card, EmptyState, formatTime } from '@/components/ui/primitives';
import { SearchBox, useSearchText } from '@/components/ui/search-box';
import { useCanEdit } from '@/components/projects/hooks';
import { CreateNetworkForm } from './create-network-form';
import { NETWORKS_PAGE_SIZE, networksListInput } from './queries';
import { FamilyBars } from './utilization';

/** The project's networks with per-family utilization, searchable and paginated on the server. */
export function NetworksView({ project }: { project: string }) {
  const trpc = useTRPC();
  const canEdit = useCanEdit(project);
  const search = useSearchText();
  const [offset, setOffset] = useState(0);
  const debounced = search.settled;
  const list = useQuery({ ...trpc.ipam.networks.list.queryOptions(networksListInput(project, offset, debounced)), placeholderData: keepPreviousData });
  const items = list.data?.items ?? [];
  const noneAtAll = list.isSuccess && items.length === 0 && offset === 0 && !debounced;

  return (
    <div className={canEdit ? 'grid items-start gap-6 lg:grid-cols-[minmax(0,1fr)_22rem]' : ''}>
      <section aria-labelledby="networks-heading" className="min-w-0 space-y-3">
        <div className="flex flex-wrap items-end justify-between gap-3">
          <div>
            <h1 id="networks-heading" className="text-xl font-semibold text-slate-900">
              Networks
            </h1>
            <p className="mt-1 text-sm text-slate-600">Address spaces (VPCs) of this project: their root ranges, pools and how full each family is.</p>
          </div>
          {!noneAtAll && <SearchBox label="Search networks" placeholder="Search by name" search={search} onChange={() => setOffset(0)} className="w-56" />}
        </div>
        {list.error && <Alert testId="networks-error">{errorMessage(list.error)}</Alert>}
        {noneAtAll ? (
          <EmptyState title="No networks yet">
            Networks appear here with their root CIDRs, IPv4 and IPv6 utilization and claim counts.{' '}
            {canEdit ? 'Create one with a root range such as 10.20.0.0/16 or 2001:db8:20::/48.' : 'An editor of this project can create one.'}
          </EmptyState>
        ) : list.isSuccess && items.length === 0 ? (
          <EmptyState title="No networks match">No network name contains “{debounced}”.</EmptyState>
        ) : (
          <ul className="space-y-3" aria-label="Networks">
            {items.map((n) => (
              <li key={n.id} className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm">
                <div className="mb-3 flex flex-wrap items-start justify-between gap-2">
                  <div className="min-w-0">
                    <Link href={`/projects/${project}/networks/${n.name}`} className="text-base font-semibold text-brand-600 hover:underline">
                      {n.name}
                    </Link>
                    {n.description && <p className="text-sm text-slate-600">{n.description}</p>}
                    <p className="mt-1 flex flex-wrap gap-1">
                      {n.pools
                        .filter((p) => p.parentPoolId === null)
                        .map((p) => (
                          <code key={p.id} className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-700">
                            {p.cidr}
                          </code>
                        ))}
                    </p>
                  </div>
                  <div className="flex items-center gap-2 text-xs text-slate-500">
                    <ClaimCount project={project} network={n.name} />
                    <Badge>{plural(n.pools.filter((p) => p.kind !== 'NodeBlock').length, 'pool')}</Badge>
                    <span title="Created">{formatTime(n.createdAt).slice(0, 10)}</span>
                  </div>
                </div>
                <FamilyBars utilization={n.utilization} />
              </li>
            ))}
          </ul>
        )}
        <Pager
          label="Networks pages"
          offset={offset}
          count={items.length}
          pageSize={NETWORKS_PAGE_SIZE}
          total={list.data?.total}
          hasNext={list.data?.nextOffset != null}
          nextOffset={list.data?.nextOffset}
          onChange={setOffset}
        />
      </section>
      {canEdit && (
        <Card title="Create network">
          <CreateNetworkForm project={project} />
        </Card>
      )}
    </div>
  );
}

/** A network's claim count (the list procedure has none; one batched count query per shown row). */
function ClaimCount({ project, network }: { project: string; network: string }) {
  const trpc = useTRPC();
  const { data } = useQuery(trpc.ipam.claims.list.queryOptions({ project, network, limit: 1, offset: 0 }));
  return <Badge tone="blue">{data ? plural(data.total, 'claim') : '… claims'}</Badge>;
}

const plural = (n: number, noun: string) => `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;
