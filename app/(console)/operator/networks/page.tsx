import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { OperatorClustersSection } from '@/components/cni/operator-clusters';
import { OperatorNetworksView } from '@/components/ipam/operator-networks-view';
import { adminPoolsInput, adminRetainedInput } from '@/components/ipam/queries';
import { Card, PageHeader } from '@/components/ui/primitives';
import { OperatorCapacityAlerts } from '@/components/capacity/alerts-banner';
import { FleetUtilizationHistory } from '@/components/capacity/history-chart';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Networks' };

export default async function Page() {
  await requirePlatformRole('operator');
  const queryClient = getQueryClient();
  await Promise.all([
    queryClient.prefetchQuery(trpc.ipam.admin.pools.queryOptions(adminPoolsInput())),
    queryClient.prefetchQuery(trpc.ipam.admin.retained.queryOptions(adminRetainedInput())),
  ]);
  return (
    <>
      <PageHeader title="Networks" description="All networks and pools across projects, with utilization and retained allocations." />
      <HydrateClient>
        <Card title="Fleet address utilization">
          <FleetUtilizationHistory />
        </Card>
        <Card title="Capacity alerts">
          <OperatorCapacityAlerts />
        </Card>
        <OperatorNetworksView />
        <OperatorClustersSection />
      </HydrateClient>
    </>
  );
}
