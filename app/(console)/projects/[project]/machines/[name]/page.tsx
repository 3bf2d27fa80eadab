import { TRPCError } from '@trpc/server';
import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { MachineView } from '@/components/fleet/machine-view';
import { machineInput } from '@/components/fleet/queries';

export async function generateMetadata({ params }: { params: Promise<{ name: string }> }): Promise<Metadata> {
  const { name } = await params;
  return { title: `Machine ${name}` };
}

export default async function MachinePage({
  params,
  searchParams,
}: {
  params: Promise<{ project: string; name: string }>;
  searchParams: Promise<{ uid?: string | string[] }>;
}) {
  const { project, name } = await params;
  // `?uid=` opens one released machine of a name that may be in use again (the list's links to released machines).
  const { uid } = await searchParams;
  const id = typeof uid === 'string' ? uid : undefined;
  const queryClient = getQueryClient();
  try {
    // Fetched (not just prefetched) so an unknown machine is the not-found page, not an empty shell.
    await queryClient.fetchQuery(trpc.fleet.machines.get.queryOptions(machineInput(project, name, id)));
  } catch (e) {
    if (e instanceof TRPCError && (e.code === 'NOT_FOUND' || e.code === 'BAD_REQUEST')) notFound();
    throw e;
  }
  await queryClient.prefetchQuery(trpc.projects.get.queryOptions({ project }));
  return (
    <HydrateClient>
      <MachineView project={project} name={name} id={id} />
    </HydrateClient>
  );
}
