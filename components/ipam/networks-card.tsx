'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useTRPC } from '@/components/trpc/client';
import { EmptyState } from '@/components/ui/primitives';
import { dashboardNetworksInput } from './queries';
import { FamilyBars } from './utilization';

/** The project dashboard's Networks card body: the first networks with their IPv4/IPv6 utilization. */
export function NetworksCardBody({ project }: { project: string }) {
  const trpc = useTRPC();
  const { data } = useQuery(trpc.ipam.networks.list.queryOptions(dashboardNetworksInput(project)));
  if (!data) return <p className="text-sm text-slate-500">Loading networks…</p>;
  if (data.items.length === 0) {
    return <EmptyState title="No networks yet">Networks (VPCs) of this project appear here with their IPv4 and IPv6 utilization.</EmptyState>;
  }
  return (
    <div>
      <ul className="divide-y divide-slate-100" aria-label="Networks">
        {data.items.map((n) => (
          <li key={n.id} className="py-3 first:pt-0">
            <div className="mb-1.5 flex items-baseline justify-between gap-2">
              <Link href={`/projects/${project}/networks/${n.name}`} className="truncate text-sm font-semibold text-brand-600 hover:underline">
                {n.name}
              </Link>
              <span className="truncate font-mono text-xs text-slate-500">
                {n.pools
                  .filter((p) => p.parentPoolId === null)
                  .map((p) => p.cidr)
                  .join(', ')}
              </span>
            </div>
            <FamilyBars utilization={n.utilization} compact />
          </li>
        ))}
      </ul>
      <Link href={`/projects/${project}/networks`} className="mt-2 inline-block text-sm font-medium text-brand-600 hover:underline">
        {data.nextOffset != null ? 'All networks →' : 'Manage networks →'}
      </Link>
    </div>
  );
}
