import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { claimLogInput, increasesInput } from '@/components/quota/queries';
import { QuotaView } from '@/components/quota/quota-view';

export const metadata: Metadata = { title: 'Quota' };

export default async function QuotaPage({ params }: { params: Promise<{ project: string }> }) {
  const { project } = await params;
  const queryClient = getQueryClient();
  await Promise.all([
    queryClient.prefetchQuery(trpc.projects.get.queryOptions({ project })),
    queryClient.prefetchQuery(trpc.quota.buckets.list.queryOptions({ project })),
    queryClient.prefetchQuery(trpc.quota.resourceTypes.queryOptions()),
    queryClient.prefetchQuery(trpc.quota.increases.list.queryOptions(increasesInput(project))),
    queryClient.prefetchQuery(trpc.quota.claims.list.queryOptions(claimLogInput(project))),
  ]);
  return (
    <HydrateClient>
      <QuotaView project={project} />
    </HydrateClient>
  );
}
