import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { z } from 'zod';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { SessionsView } from '@/components/sessions/sessions-view';
import { PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'User sessions' };

export default async function UserSessionsPage({ params }: { params: Promise<{ id: string }> }) {
  await requirePlatformRole('admin');
  const { id } = await params;
  if (!z.uuid().safeParse(id).success) notFound();
  await getQueryClient().prefetchQuery(trpc.sessions.list.queryOptions({ userId: id }));
  return (
    <>
      <PageHeader title="User sessions" description="Sign this user out of one browser, or everywhere, at once." />
      <HydrateClient>
        <SessionsView userId={id} />
      </HydrateClient>
    </>
  );
}
