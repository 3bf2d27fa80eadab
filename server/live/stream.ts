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
import type { Change } from '@/server/changes/notify';

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
  /** Called once when the stream ends, however it ends (client gone, cut off, `maxAgeMs`, hub closed). */
  onEnd?: () => void;
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
  const { signal, batchMs = 250, heartbeatMs = 15_000, maxAgeMs = 10 * 60_000, maxBatch = 500, maxQueuedChunks = 64, onEnd } = options;
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
    onEnd?.();
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

/** Live-update streams one session may hold open at once in a web process. */
export const MAX_STREAMS_PER_SESSION = 8;

/** What a refused stream is told to wait (s) before trying again. */
export const STREAM_SLOT_RETRY_AFTER_SECONDS = 10;

/**
 * Open streams per session, in this process (each holds a connection, a hub subscription and
 * timers; a page opens one or two). A slot is taken before a stream starts and given back when it
 * ends, however it ends; sessions with none open are forgotten, so the map is bounded by the open
 * streams.
 */
export class StreamSlots {
  private readonly open = new Map<string, number>();

  constructor(private readonly perSession = MAX_STREAMS_PER_SESSION) {}

  /** Takes a slot of `session`: the function that gives it back (once), or undefined when all are taken. */
  take(session: string): (() => void) | undefined {
    const held = this.open.get(session) ?? 0;
    if (held >= this.perSession) return undefined;
    this.open.set(session, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(session) ?? 1) - 1;
      if (left > 0) this.open.set(session, left);
      else this.open.delete(session);
    };
  }

  /** The streams `session` holds open. */
  held(session: string): number {
    return this.open.get(session) ?? 0;
  }
}

const g = globalThis as typeof globalThis & { __meridianStreamSlots?: StreamSlots };

/** The process's stream slots, on globalThis because Next may load this module in several bundles. */
export function streamSlots(): StreamSlots {
  g.__meridianStreamSlots ??= new StreamSlots();
  return g.__meridianStreamSlots;
}

/**
 * The answer to a request for a live-update stream of `session`: the stream, holding one of the
 * session's slots until it ends, or 429 with Retry-After when the session already holds
 * MAX_STREAMS_PER_SESSION.
 */
export function sessionChangeStream(hub: ChangeHub, scope: LiveScope, session: string, options: ChangeStreamOptions & { slots?: StreamSlots } = {}): Response {
  const { slots = streamSlots(), ...streamOptions } = options;
  const release = slots.take(session);
  if (!release) {
    return Response.json(
      {
        error: {
          code: 'RateLimited',
          message: `at most ${MAX_STREAMS_PER_SESSION} live-update streams per session; close one or retry in ${STREAM_SLOT_RETRY_AFTER_SECONDS} s`,
        },
      },
      { status: 429, headers: { 'retry-after': String(STREAM_SLOT_RETRY_AFTER_SECONDS) } },
    );
  }
  return new Response(changeStream(hub, scope, { ...streamOptions, onEnd: release }), { headers: sseHeaders });
}
