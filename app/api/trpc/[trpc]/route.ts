import { TRPCError } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { withDeadline } from '@/db/deadline';
import { env } from '@/server/env';
import { asDomainError, DATABASE_RETRY_AFTER_SECONDS } from '@/server/errors';
import { getDb } from '@/db/client';
import { currentSession } from '@/server/auth/session';
import { checkCsrf } from '@/server/http/csrf';
import { logError } from '@/server/observability/log';
import { appRouter } from '@/server/trpc/root';

async function handler(req: Request) {
  const csrf = checkCsrf(req);
  if (csrf) return csrf;
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    createContext: async () => {
      try {
        const session = await withDeadline(env().DB_REQUEST_TIMEOUT_MS, () => currentSession());
        return { db: getDb(), session: session ? { user: session.user, id: session.sessionId } : null };
      } catch (e) {
        const unavailable = asDomainError(e);
        if (unavailable?.code === 'DatabaseUnavailable') throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: unavailable.message, cause: unavailable });
        throw e;
      }
    },
    responseMeta({ errors }) {
      // A client told the database is unavailable is told when to try again.
      const unavailable = errors.some((e) => asDomainError(e.cause)?.code === 'DatabaseUnavailable');
      return unavailable ? { headers: new Headers({ 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) }) } : {};
    },
    onError({ error, path }) {
      if (error.code === 'INTERNAL_SERVER_ERROR') logError(`trpc ${path ?? '?'}`, error.cause ?? error);
    },
  });
}

export { handler as GET, handler as POST };
