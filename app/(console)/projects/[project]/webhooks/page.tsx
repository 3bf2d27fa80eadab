import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { AlertRuleCard } from '@/components/capacity/alert-rule-card';
import { WebhooksView } from '@/components/capacity/webhooks-view';

export const metadata: Metadata = { title: 'Alert webhooks' };

export default async function ProjectWebhooksPage({ params }: { params: Promise<{ project: string }> }) {
  const { project } = await params;
  await Promise.all([
    getQueryClient().prefetchQuery(trpc.capacity.webhooks.list.queryOptions({ project })),
    getQueryClient().prefetchQuery(trpc.capacity.alertRule.queryOptions({ project })),
  ]);
  return (
    <HydrateClient>
      <div className="space-y-6">
        <AlertRuleCard project={project} />
        <WebhooksView scope={{ kind: 'project', project }} />
      </div>
    </HydrateClient>
  );
}
