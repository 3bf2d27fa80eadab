import { currentUser } from '@/server/auth/session';
import { routeErrorResponse } from '@/server/http/route-error';
import type { ProviderAdminClient } from '@/server/provider/client';
import { providerAdminClient } from '@/server/provider/connection';
import { NOT_CONFIGURED_MESSAGE, outcomeReason } from '@/server/provider/qa';
import { hasPlatformRole } from '@/server/tenancy/roles';

/**
 * The simulator's live operation log for the QA console, relayed as server-sent events (the browser never
 * sees the admin token). Sends the newest entries first when the client has seen none, then follows the
 * simulator's stream. When the simulator is unreachable or its stream ends (crash, restart), it sends an
 * `unavailable` event and ends; the browser's EventSource reconnects after `retry` ms with `Last-Event-ID`,
 * so nothing is missed or repeated.
 */
export const dynamic = 'force-dynamic';

const RETRY_MS = 2_000;
const HEARTBEAT_MS = 15_000;
const BACKLOG = 100;

const sseHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  // no-transform: keeps compression from buffering the stream.
  'cache-control': 'no-cache, no-store, no-transform',
  'x-accel-buffering': 'no',
};

function parseSeq(value: string | null): number | undefined {
  return value && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

const event = (data: unknown, id?: number, name?: string) =>
  `${name ? `event: ${name}\n` : ''}${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`;

/** The SSE text of the relay, chunk by chunk, until the upstream ends or `signal` aborts. */
async function* relay(client: ProviderAdminClient, lastSeen: number | undefined, signal: AbortSignal): AsyncGenerator<string> {
  yield `retry: ${RETRY_MS}\n\n`;
  let afterSeq = lastSeen;
  if (afterSeq === undefined) {
    const page = await client.getLog({ limit: BACKLOG, timeoutMs: 3_000, signal });
    if (page.type !== 'result') {
      yield event({ reason: outcomeReason(page) }, undefined, 'unavailable');
      return;
    }
    for (const entry of page.value.items) yield event(entry, entry.seq);
    // An empty log still gets an id, so a reconnect does not fetch the backlog again.
    if (page.value.items.length === 0) yield `id: ${page.value.lastSeq}\n\n`;
    afterSeq = page.value.lastSeq;
  }
  yield event({ afterSeq }, undefined, 'live');

  const upstream = client.streamLog({ afterSeq, signal })[Symbol.asyncIterator]();
  let next: Promise<IteratorResult<unknown>> | null = null;
  try {
    while (!signal.aborted) {
      next ??= upstream.next();
      let timer: NodeJS.Timeout | undefined;
      const beat = new Promise<'beat'>((resolve) => (timer = setTimeout(() => resolve('beat'), HEARTBEAT_MS)));
      const step = await Promise.race([next, beat]).finally(() => clearTimeout(timer));
      if (step === 'beat') {
        yield ': ping\n\n';
        continue;
      }
      next = null;
      if (step.done) break;
      const entry = step.value as { seq: number };
      yield event(entry, entry.seq);
    }
  } catch (error) {
    yield event({ reason: `the simulator is not reachable (${error instanceof Error ? error.message : String(error)})` }, undefined, 'unavailable');
    return;
  } finally {
    await upstream.return?.();
  }
  if (!signal.aborted) yield event({ reason: 'the simulator closed the log stream (stopped or restarting)' }, undefined, 'unavailable');
}

export async function GET(req: Request): Promise<Response> {
  let user;
  try {
    user = await currentUser();
  } catch (e) {
    return routeErrorResponse('qa simulator log', e);
  }
  if (!user) return Response.json({ error: { code: 'Unauthenticated', message: 'sign in first' } }, { status: 401 });
  // Like the page: someone without the role is not told that this exists.
  if (!hasPlatformRole(user, 'qa')) return Response.json({ error: { code: 'NotFound', message: 'not found' } }, { status: 404 });
  const client = providerAdminClient();
  if (!client) return Response.json({ error: { code: 'Unavailable', message: NOT_CONFIGURED_MESSAGE } }, { status: 503 });

  const url = new URL(req.url);
  const lastSeen = parseSeq(req.headers.get('last-event-id')) ?? parseSeq(url.searchParams.get('afterSeq'));
  const abort = new AbortController();
  const onClientGone = () => abort.abort();
  req.signal.addEventListener('abort', onClientGone, { once: true });
  const chunks = relay(client, lastSeen, abort.signal);
  const encoder = new TextEncoder();

  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await chunks.next();
        if (done) {
          req.signal.removeEventListener('abort', onClientGone);
          controller.close();
        } else controller.enqueue(encoder.encode(value));
      } catch (error) {
        controller.error(error);
      }
    },
    async cancel() {
      abort.abort();
      req.signal.removeEventListener('abort', onClientGone);
      await chunks.return(undefined);
    },
  });
  return new Response(body, { headers: sseHeaders });
}
