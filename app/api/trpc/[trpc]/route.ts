import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { getDb } from '@/db/client';
import { currentUser } from '@/server/auth/session';
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
      const user = await currentUser();
      return { db: getDb(), session: user ? { user } : null };
    },
    onError({ error, path }) {
      if (error.code === 'INTERNAL_SERVER_ERROR') logError(`trpc ${path ?? '?'}`, error.cause ?? error);
    },
  });
}

export { handler as GET, handler as POST };
