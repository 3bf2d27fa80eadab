import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { UnverifiedAccountsView, UsersAdminView } from '@/components/tenancy/users-admin';
import { PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Users' };

export default async function UsersPage() {
  const me = await requirePlatformRole('admin');
  await Promise.all([getQueryClient().prefetchQuery(trpc.users.list.queryOptions()), getQueryClient().prefetchQuery(trpc.users.unverified.queryOptions())]);
  return (
    <>
      <PageHeader
        title="Users"
        description="Every user: platform roles, disable or enable (their sessions and tokens stop at once), a one-time password-reset link, and their live sessions."
      />
      <HydrateClient>
        <div className="space-y-6">
          <UsersAdminView userId={me.id} />
          <UnverifiedAccountsView userId={me.id} />
        </div>
      </HydrateClient>
    </>
  );
}
