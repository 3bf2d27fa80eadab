import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { WebhooksView } from '@/components/capacity/webhooks-view';

export const metadata: Metadata = { title: 'Alert webhooks' };

export default async function ProjectWebhooksPage({ params }: { params: Promise<{ project: string }> }) {
  const { project } = await params;
  await getQueryClient().prefetchQuery(trpc.capacity.webhooks.list.queryOptions({ project }));
  return (
    <HydrateClient>
      <WebhooksView scope={{ kind: 'project', project }} />
    </HydrateClient>
  );
}
