import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { phaseOrder } from '@/components/fleet/format';
import { MachinesCardBody } from '@/components/fleet/machines-card';
import { dashboardMachinesInput, phaseCountInput } from '@/components/fleet/queries';
import { NetworksCardBody } from '@/components/ipam/networks-card';
import { dashboardNetworksInput } from '@/components/ipam/queries';
import { QuotaCardBody } from '@/components/quota/quota-card';
import { PodAddressesCardBody } from '@/components/cni/pod-addresses-card';
import { Card } from '@/components/ui/primitives';

export const metadata: Metadata = { title: 'Project' };

export default async function ProjectDashboard({ params }: { params: Promise<{ project: string }> }) {
  const { project } = await params;
  await getQueryClient().prefetchQuery(trpc.ipam.networks.list.queryOptions(dashboardNetworksInput(project)));
  await getQueryClient().prefetchQuery(trpc.quota.buckets.list.queryOptions({ project }));
  await Promise.all(
    [dashboardMachinesInput(project), ...phaseOrder.map((phase) => phaseCountInput(project, phase))].map((input) =>
      getQueryClient().prefetchQuery(trpc.fleet.machines.list.queryOptions(input)),
    ),
  );
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <Card title="Networks">
        <HydrateClient>
          <NetworksCardBody project={project} />
        </HydrateClient>
      </Card>
      <Card title="Pod addresses">
        <PodAddressesCardBody project={project} />
      </Card>
      <Card title="Quota">
        <HydrateClient>
          <QuotaCardBody project={project} />
        </HydrateClient>
      </Card>
      <Card title="Machines">
        <HydrateClient>
          <MachinesCardBody project={project} />
        </HydrateClient>
      </Card>
    </div>
  );
}
