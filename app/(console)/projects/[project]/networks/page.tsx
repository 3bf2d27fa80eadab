import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { NetworksView } from '@/components/ipam/networks-view';
import { networksListInput } from '@/components/ipam/queries';
import { DeletedNotice } from '@/components/ui/not-found';

export const metadata: Metadata = { title: 'Networks' };

export default async function NetworksPage({ params, searchParams }: { params: Promise<{ project: string }>; searchParams: Promise<{ deleted?: string }> }) {
  const { project } = await params;
  const { deleted } = await searchParams;
  const queryClient = getQueryClient();
  await Promise.all([
    queryClient.prefetchQuery(trpc.projects.get.queryOptions({ project })),
    queryClient.prefetchQuery(trpc.ipam.networks.list.queryOptions(networksListInput(project))),
  ]);
  return (
    <HydrateClient>
      {deleted && <DeletedNotice>Network {deleted} was deleted; its address range is free again.</DeletedNotice>}
      <NetworksView project={project} />
    </HydrateClient>
  );
}
