'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { Alert, EmptyState } from '@/components/ui/primitives';
import { CountBar } from './bars';
import { podUsageInput } from './queries';

/** The project dashboard's Pod addresses card body: leases per cluster against its node blocks' capacity. */
export function PodAddressesCardBody({ project }: { project: string }) {
  const trpc = useTRPC();
  const { data, error } = useQuery(trpc.cni.usage.queryOptions(podUsageInput(project)));
  if (error) return <Alert testId="pod-usage-error">{errorMessage(error)}</Alert>;
  if (!data) return <p className="text-sm text-slate-500">Loading pod addresses…</p>;
  if (data.byCluster.length === 0) {
    return (
      <EmptyState title="No clusters yet">Kubernetes clusters attached to this project&apos;s networks appear here with their pod address counts.</EmptyState>
    );
  }
  return (
    <ul className="divide-y divide-slate-100" aria-label="Pod addresses per cluster">
      {data.byCluster.map((c) => (
        <li key={c.cluster} className="flex flex-wrap items-center justify-between gap-x-4 gap-y-1 py-2.5 first:pt-0">
          <div className="min-w-0">
            <p className="truncate text-sm font-semibold text-slate-800">{c.cluster}</p>
            <p className="text-xs text-slate-500">
              on{' '}
              <Link href={`/projects/${project}/networks/${c.network}#pod-addresses`} className="font-medium text-brand-600 hover:underline">
                {c.network}
              </Link>{' '}
              · {c.nodes} {c.nodes === 1 ? 'node' : 'nodes'} · {c.blocks} {c.blocks === 1 ? 'block' : 'blocks'}
            </p>
          </div>
          <CountBar
            label={`${c.cluster} pod addresses of block capacity`}
            value={c.leases}
            max={Number(c.blockCapacity) || 0}
            fill
            suffix={c.leases === 1 ? 'pod address' : 'pod addresses'}
          />
        </li>
      ))}
    </ul>
  );
}
