import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { phaseOrder } from '@/components/fleet/format';
import { MachinesView } from '@/components/fleet/machines-view';
import { machinesListInput, networkChoicesInput, phaseCountInput } from '@/components/fleet/queries';
import type { MachinePhase } from '@/server/fleet/phases';

export const metadata: Metadata = { title: 'Machines' };

export default async function MachinesPage({
  params,
  searchParams,
}: {
  params: Promise<{ project: string }>;
  searchParams: Promise<{ phase?: string | string[]; request?: string | string[] }>;
}) {
  const { project } = await params;
  const query = await searchParams;
  // The dashboard's links: `?phase=Ready` opens the list filtered (unknown phases are ignored), `?request=1` the request form.
  const phase = typeof query.phase === 'string' && (phaseOrder as string[]).includes(query.phase) ? (query.phase as MachinePhase) : '';
  const queryClient = getQueryClient();
  await Promise.all([
    queryClient.prefetchQuery(trpc.projects.get.queryOptions({ project })),
    queryClient.prefetchQuery(trpc.fleet.machines.list.queryOptions(machinesListInput(project, 0, phase))),
    // Whether the project has released machines decides whether the form starts open: hydrated, so it does not flicker.
    queryClient.prefetchQuery(trpc.fleet.machines.list.queryOptions(phaseCountInput(project, 'Released'))),
    queryClient.prefetchQuery(trpc.fleet.catalogue.queryOptions()),
    queryClient.prefetchQuery(trpc.ipam.networks.list.queryOptions(networkChoicesInput(project))),
  ]);
  return (
    <HydrateClient>
      <MachinesView project={project} initialPhase={phase} openForm={query.request === '1'} />
    </HydrateClient>
  );
}
