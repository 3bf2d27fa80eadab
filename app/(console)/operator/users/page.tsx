import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { UsersView } from '@/components/sessions/sessions-view';
import { PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Users' };

export default async function UsersPage() {
  await requirePlatformRole('admin');
  await getQueryClient().prefetchQuery(trpc.users.list.queryOptions());
  return (
    <>
      <PageHeader title="Users" description="Every user, with their live sessions. Open a user's sessions to sign them out of one browser or everywhere." />
      <HydrateClient>
        <UsersView />
      </HydrateClient>
    </>
  );
}
