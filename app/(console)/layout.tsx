import { redirect } from 'next/navigation';
import type { ReactNode } from 'react';
import { HydrateClient, trpc, getQueryClient } from '@/app/_trpc/server';
import { navFor } from '@/components/shell/nav';
import { Shell } from '@/components/shell/shell';
import { currentUser } from '@/server/auth/session';

export const dynamic = 'force-dynamic';

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const user = await currentUser();
  if (!user) redirect('/sign-in');
  await getQueryClient().prefetchQuery(trpc.projects.list.queryOptions());
  return (
    <HydrateClient>
      <Shell user={user} nav={navFor(user)}>
        {children}
      </Shell>
    </HydrateClient>
  );
}
