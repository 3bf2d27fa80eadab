import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { UserTokensView } from '@/components/tokens/user-tokens-view';
import { PageHeader } from '@/components/ui/primitives';

export const metadata: Metadata = { title: 'User tokens' };

export default async function AccountTokensPage() {
  await Promise.all([
    getQueryClient().prefetchQuery(trpc.tokens.user.list.queryOptions()),
    getQueryClient().prefetchQuery(trpc.organizations.list.queryOptions()),
  ]);
  return (
    <>
      <PageHeader
        title="User tokens"
        description="API tokens that act for you on the REST API's organization, project and member routes, with your current rights. Shown once, stored hashed."
      />
      <HydrateClient>
        <UserTokensView />
      </HydrateClient>
    </>
  );
}
