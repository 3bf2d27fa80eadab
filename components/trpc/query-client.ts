import { defaultShouldDehydrateQuery, QueryClient } from '@tanstack/react-query';
import superjson from 'superjson';

export function makeQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 15_000,
        // A refusal is final: retrying it only delays the answer (the not-found page of a missing
        // project would wait for every prefetch's back-off). The browser's client errors carry the
        // code in `data.code`; the server-side caller's TRPCError in `code`.
        retry: (count, error) => count < 2 && !isRefusal(error),
      },
      dehydrate: {
        serializeData: superjson.serialize,
        shouldDehydrateQuery: (query) => defaultShouldDehydrateQuery(query) || query.state.status === 'pending',
      },
      hydrate: { deserializeData: superjson.deserialize },
    },
  });
}

const refusals = new Set(['UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_REQUEST', 'CONFLICT', 'PRECONDITION_FAILED', 'UNPROCESSABLE_CONTENT']);

/** Whether a failed query was refused (retrying cannot help), from a tRPC client error or a server-side TRPCError. */
export function isRefusal(error: unknown): boolean {
  const e = error as { code?: unknown; data?: { code?: unknown } | null } | null;
  return refusals.has(String(e?.data?.code)) || refusals.has(String(e?.code));
}
