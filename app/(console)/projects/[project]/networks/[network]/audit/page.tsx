import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { AddressAuditView } from '@/components/capacity/address-audit-view';

export async function generateMetadata({ params }: { params: Promise<{ network: string }> }): Promise<Metadata> {
  const { network } = await params;
  return { title: `Address audit of ${network}` };
}

export default async function AddressAuditPage({ params }: { params: Promise<{ project: string; network: string }> }) {
  const { project, network } = await params;
  const queryClient = getQueryClient();
  await queryClient.prefetchQuery(trpc.capacity.audit.queryOptions({ project, network, limit: 200 }));
  return (
    <HydrateClient>
      <AddressAuditView project={project} network={network} />
    </HydrateClient>
  );
}
