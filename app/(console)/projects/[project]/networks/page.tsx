import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { NetworksView } from '@/components/ipam/networks-view';
import { networksListInput } from '@/components/ipam/queries';

export const metadata: Metadata = { title: 'Networks' };

export default async function NetworksPage({ params }: { params: Promise<{ project: string }> }) {
  const { project } = await params;
  const queryClient = getQueryClient();
  await Promise.all([
    queryClient.prefetchQuery(trpc.projects.get.queryOptions({ project })),
    queryClient.prefetchQuery(trpc.ipam.networks.list.queryOptions(networksListInput(project))),
  ]);
  return (
    <HydrateClient>
      <NetworksView project={project} />
    </HydrateClient>
  );
}
