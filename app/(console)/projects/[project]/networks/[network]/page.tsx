import { TRPCError } from '@trpc/server';
import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { NetworkView } from '@/components/ipam/network-view';
import { claimsListInput } from '@/components/ipam/queries';

export async function generateMetadata({ params }: { params: Promise<{ network: string }> }): Promise<Metadata> {
  const { network } = await params;
  return { title: `Network ${network}` };
}

export default async function NetworkPage({ params }: { params: Promise<{ project: string; network: string }> }) {
  const { project, network } = await params;
  const queryClient = getQueryClient();
  try {
    // Fetched (not just prefetched) so an unknown network is the not-found page, not an empty shell.
    await queryClient.fetchQuery(trpc.ipam.networks.get.queryOptions({ project, name: network }));
  } catch (e) {
    if (e instanceof TRPCError && (e.code === 'NOT_FOUND' || e.code === 'BAD_REQUEST')) notFound();
    throw e;
  }
  await Promise.all([
    queryClient.prefetchQuery(trpc.projects.get.queryOptions({ project })),
    queryClient.prefetchQuery(trpc.ipam.networks.map.queryOptions({ project, network })),
    queryClient.prefetchQuery(trpc.ipam.claims.list.queryOptions(claimsListInput(project, network))),
  ]);
  return (
    <HydrateClient>
      <NetworkView project={project} network={network} />
    </HydrateClient>
  );
}
