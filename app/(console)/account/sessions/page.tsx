import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { ChangePasswordForm, SessionsView } from '@/components/sessions/sessions-view';
import { PageHeader } from '@/components/ui/primitives';

export const metadata: Metadata = { title: 'Sessions' };

export default async function AccountSessionsPage() {
  await getQueryClient().prefetchQuery(trpc.sessions.list.queryOptions(undefined));
  return (
    <>
      <PageHeader
        title="Sessions"
        description="The browsers signed in as you. Signing one out ends it at once; a password change signs out all but this one."
      />
      <HydrateClient>
        <div className="space-y-6">
          <SessionsView />
          <ChangePasswordForm />
        </div>
      </HydrateClient>
    </>
  );
}
