import { TRPCError } from '@trpc/server';
import { withDeadline } from '@/db/deadline';
import { env } from '@/server/env';
import { asDomainError } from '@/server/errors';
import { getDb } from '@/db/client';
import { currentSession } from '@/server/auth/session';
import { serveTrpc } from '@/server/trpc/http';

async function handler(req: Request) {
  return serveTrpc(req, async () => {
    try {
      const session = await withDeadline(env().DB_REQUEST_TIMEOUT_MS, () => currentSession());
      return { db: getDb(), session: session ? { user: session.user, id: session.sessionId } : null };
    } catch (e) {
      const unavailable = asDomainError(e);
      if (unavailable?.code === 'DatabaseUnavailable') throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: unavailable.message, cause: unavailable });
      throw e;
    }
  });
}

export { handler as GET, handler as POST };
