import 'server-only';
import { dehydrate, HydrationBoundary } from '@tanstack/react-query';
import { createTRPCOptionsProxy } from '@trpc/tanstack-react-query';
import { cache, type ReactNode } from 'react';
import { getDb } from '@/db/client';
import { currentSession } from '@/server/auth/session';
import { appRouter } from '@/server/trpc/root';
import { makeQueryClient } from '@/components/trpc/query-client';

export const getQueryClient = cache(makeQueryClient);

const createContext = cache(async () => {
  const session = await currentSession();
  return { db: getDb(), session: session ? { user: session.user, id: session.sessionId } : null };
});

/** Server-side tRPC: prefetch into the request's query client, or call procedures directly. */
export const trpc = createTRPCOptionsProxy({ ctx: createContext, router: appRouter, queryClient: getQueryClient });

/** A direct caller for server components that need data, not a cache entry. */
export const serverCaller = cache(async () => appRouter.createCaller(await createContext()));

export function HydrateClient({ children }: { children: ReactNode }) {
  return <HydrationBoundary state={dehydrate(getQueryClient())}>{children}</HydrationBoundary>;
}
