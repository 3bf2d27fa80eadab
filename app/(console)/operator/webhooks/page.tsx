import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { WebhooksView } from '@/components/capacity/webhooks-view';
import { PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Alert webhooks' };

export default async function OperatorWebhooksPage() {
  await requirePlatformRole('operator');
  await getQueryClient().prefetchQuery(trpc.capacity.operatorWebhooks.list.queryOptions());
  return (
    <>
      <PageHeader
        title="Alert webhooks"
        description="Endpoints that receive every project's capacity alerts, signed and retried until delivered, with each endpoint's delivery log."
      />
      <HydrateClient>
        <WebhooksView scope={{ kind: 'operator' }} />
      </HydrateClient>
    </>
  );
}
