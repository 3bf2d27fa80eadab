import { getDb } from '@/db/client';
import { currentSession } from '@/server/auth/session';
import { routeErrorResponse } from '@/server/http/route-error';
import { changeHub } from '@/server/live/hub';
import { resolveLiveScope } from '@/server/live/scope';
import { sessionChangeStream } from '@/server/live/stream';

/**
 * Live change notifications for the console, as server-sent events: `?project=<slug>` for a
 * project's members (its machines, their allocations and operations), no parameter for operators
 * (everything, capacity included). Payloads are ids only; pages refetch what they show through
 * tRPC, which applies the usual access checks. All streams of this process share one LISTEN
 * connection (server/live/hub.ts). A session holds at most MAX_STREAMS_PER_SESSION open at once
 * per web process; one more is 429 with Retry-After until one of them ends.
 */
export const dynamic = 'force-dynamic';

export async function GET(req: Request): Promise<Response> {
  try {
    const session = await currentSession();
    if (!session) return Response.json({ error: { code: 'Unauthenticated', message: 'sign in first' } }, { status: 401 });
    const project = new URL(req.url).searchParams.get('project');
    const scope = await resolveLiveScope(getDb(), session.user, project);
    return sessionChangeStream(changeHub(), scope, session.sessionId, { signal: req.signal });
  } catch (e) {
    return routeErrorResponse('live', e);
  }
}
