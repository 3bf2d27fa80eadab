import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { FleetView } from '@/components/fleet/fleet-view';
import { allocationsInput, capacityInput, operationsInput } from '@/components/fleet/queries';
import { PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Fleet' };

export default async function Page() {
  await requirePlatformRole('operator');
  const queryClient = getQueryClient();
  await Promise.all([
    queryClient.prefetchQuery(trpc.fleet.inventory.queryOptions()),
    queryClient.prefetchQuery(trpc.fleet.catalogue.queryOptions()),
    queryClient.prefetchQuery(trpc.fleet.capacity.list.queryOptions(capacityInput())),
    queryClient.prefetchQuery(trpc.fleet.allocations.list.queryOptions(allocationsInput())),
    queryClient.prefetchQuery(trpc.fleet.operations.list.queryOptions(operationsInput)),
  ]);
  return (
    <>
      <PageHeader
        title="Fleet"
        description="Bare-metal capacity by location and class, with health and state; quarantined machines, live allocations and provider operations that need attention."
      />
      <HydrateClient>
        <FleetView />
      </HydrateClient>
    </>
  );
}
