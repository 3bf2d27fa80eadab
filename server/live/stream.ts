/**
 * One browser's server-sent-event stream of change notifications, cut from the process's hub:
 * only the changes its scope allows (a tenant: its project's; an operator: all), coalesced into
 * small batches so a burst of work costs the browser one refetch, not hundreds.
 *
 * Events: `ready` once the hub listens; unnamed `data: {"changes":[{k,id}…]}` batches; `resync`
 * when notifications may have been missed (the hub reconnected, or a batch overflowed) — refetch
 * everything shown. The stream ends after `maxAgeMs` so a long-lived page re-authenticates (the
 * browser's EventSource reconnects by itself; the client treats a reconnect as a resync).
 */
import type { ChangeHub, HubEvent } from './hub';
import type { Change } from './notify';

/** Whose changes a stream carries: one project's, or (operators) every project's and the fleet's. */
export type LiveScope = { projectId: string } | { allProjects: true };

export interface ChangeStreamOptions {
  signal?: AbortSignal;
  /** Coalescing window (ms). */
  batchMs?: number;
  heartbeatMs?: number;
  maxAgeMs?: number;
  /** Distinct changes per batch; a bigger burst is sent as one `resync`. */
  maxBatch?: number;
  /** Unread chunks tolerated before a client that does not read is cut off (it resyncs on reconnect). */
  maxQueuedChunks?: number;
}

export const RETRY_MS = 3_000;

export const sseHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  // no-transform: keeps compression from buffering the stream.
  'cache-control': 'no-cache, no-store, no-transform',
  'x-accel-buffering': 'no',
};

/** Whether a change belongs in a stream of this scope. Fleet-wide changes (no project) are for operators only. */
export function inScope(scope: LiveScope, change: Change): boolean {
  return 'allProjects' in scope || (change.p !== null && change.p === scope.projectId);
}

export function changeStream(hub: ChangeHub, scope: LiveScope, options: ChangeStreamOptions = {}): ReadableStream<Uint8Array> {
  const { signal, batchMs = 250, heartbeatMs = 15_000, maxAgeMs = 10 * 60_000, maxBatch = 500, maxQueuedChunks = 64 } = options;
  const encoder = new TextEncoder();
  const operatorView = 'allProjects' in scope;
  let pending = new Map<string, { k: string; id: string; p?: string | null }>();
  let overflow = false;
  let flushTimer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let maxAge: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let done = false;

  const stop = () => {
    if (done) return;
    done = true;
    unsubscribe?.();
    clearTimeout(flushTimer);
    clearInterval(heartbeat);
    clearTimeout(maxAge);
    signal?.removeEventListener('abort', onAbort);
  };
  let onAbort = () => {};

  return new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string) => {
        if (done) return;
        if ((controller.desiredSize ?? 0) < -maxQueuedChunks) {
          // The client stopped reading: cut it off rather than buffer without bound.
          stop();
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(text));
      };
      const flush = () => {
        flushTimer = undefined;
        if (overflow) {
          overflow = false;
          pending = new Map();
          send('event: resync\ndata: {}\n\n');
          return;
        }
        if (pending.size === 0) return;
        const changes = [...pending.values()];
        pending = new Map();
        send(`data: ${JSON.stringify({ changes })}\n\n`);
      };
      const onEvent = (event: HubEvent) => {
        if (event.type === 'closed') return onAbort();
        if (event.type === 'resync') {
          overflow = true;
        } else {
          const { change } = event;
          if (!inScope(scope, change)) return;
          if (pending.size >= maxBatch) overflow = true;
          else pending.set(`${change.k}:${change.id}`, operatorView ? { k: change.k, id: change.id, p: change.p } : { k: change.k, id: change.id });
        }
        flushTimer ??= setTimeout(flush, batchMs);
      };
      onAbort = () => {
        stop();
        try {
          controller.close();
        } catch {
          // already closed
        }
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });

      send(`retry: ${RETRY_MS}\n\n`);
      unsubscribe = hub.subscribe(onEvent);
      heartbeat = setInterval(() => send(': ping\n\n'), heartbeatMs);
      maxAge = setTimeout(onAbort, maxAgeMs);
      void hub.ready().then(() => send('event: ready\ndata: {}\n\n'));
    },
    cancel() {
      stop();
    },
  });
}
