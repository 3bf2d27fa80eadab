import { TRPCError } from '@trpc/server';
import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { MachineView } from '@/components/fleet/machine-view';

export async function generateMetadata({ params }: { params: Promise<{ name: string }> }): Promise<Metadata> {
  const { name } = await params;
  return { title: `Machine ${name}` };
}

export default async function MachinePage({ params }: { params: Promise<{ project: string; name: string }> }) {
  const { project, name } = await params;
  const queryClient = getQueryClient();
  try {
    // Fetched (not just prefetched) so an unknown machine is the not-found page, not an empty shell.
    await queryClient.fetchQuery(trpc.fleet.machines.get.queryOptions({ project, name }));
  } catch (e) {
    if (e instanceof TRPCError && (e.code === 'NOT_FOUND' || e.code === 'BAD_REQUEST')) notFound();
    throw e;
  }
  await queryClient.prefetchQuery(trpc.projects.get.queryOptions({ project }));
  return (
    <HydrateClient>
      <MachineView project={project} name={name} />
    </HydrateClient>
  );
}
