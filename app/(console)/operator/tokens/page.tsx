import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { OperatorTokensView } from '@/components/tokens/operator-tokens-view';
import { PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Operator tokens' };

export default async function OperatorTokensPage() {
  await requirePlatformRole('operator');
  await getQueryClient().prefetchQuery(trpc.tokens.operator.list.queryOptions());
  return (
    <>
      <PageHeader
        title="Operator tokens"
        description="API tokens that act for a platform operator: quota administration, the increase-request and machine queues, and capacity over REST. Shown once, stored hashed."
      />
      <HydrateClient>
        <OperatorTokensView />
      </HydrateClient>
    </>
  );
}
