/**
 * The process's one LISTEN connection, fanned out to any number of subscribers (the browsers'
 * server-sent-event streams): a web process holds a single extra database connection however many
 * consoles are open. The connection is opened on the first subscription and re-opened with capped
 * backoff when it drops; notifications sent while it was down are lost, so every reconnect tells
 * subscribers to resynchronise (refetch what they show) instead.
 */
import type pg from 'pg';
import { createPgClient } from '@/db/pg';
import { env } from '@/server/env';
import { log } from '@/server/observability/log';
import { CHANGES_CHANNEL, changeSchema, type Change } from '@/server/changes/notify';

/** `closed`: the process is stopping; streams end (their browsers reconnect to another replica). */
export type HubEvent = { type: 'change'; change: Change } | { type: 'resync' } | { type: 'closed' };
export type HubSubscriber = (event: HubEvent) => void;

export interface ChangeHub {
  /** Adds a subscriber (opening the connection if needed); returns its unsubscribe function. */
  subscribe(subscriber: HubSubscriber): () => void;
  /** Resolves once LISTEN is active (the first time; later reconnects announce themselves as `resync`). */
  ready(): Promise<void>;
  /** Subscribers now, for tests and metrics. */
  subscriberCount(): number;
  /** Ends every subscriber's stream and the LISTEN connection. */
  close(): Promise<void>;
}

const MAX_BACKOFF_MS = 5_000;

export function createChangeHub(connectionString: string): ChangeHub {
  const subscribers = new Set<HubSubscriber>();
  let client: pg.Client | null = null;
  let started = false;
  let closed = false;
  let everListened = false;
  let attempts = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let markReady: () => void = () => {};
  const readyPromise = new Promise<void>((resolve) => (markReady = resolve));

  const emit = (event: HubEvent) => {
    for (const subscriber of subscribers) {
      try {
        subscriber(event);
      } catch (error) {
        log('warn', `live subscriber failed: ${(error as Error).message}`);
      }
    }
  };

  const onNotification = (message: pg.Notification) => {
    if (message.channel !== CHANGES_CHANNEL || !message.payload) return;
    let raw: unknown;
    try {
      raw = JSON.parse(message.payload);
    } catch {
      return;
    }
    const parsed = changeSchema.safeParse(raw);
    if (parsed.success) emit({ type: 'change', change: parsed.data });
  };

  const scheduleReconnect = () => {
    if (closed || retryTimer) return;
    const delay = Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(attempts++, 10));
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void connect();
    }, delay);
    retryTimer.unref?.();
  };

  const drop = (c: pg.Client, why: string) => {
    if (client !== c) return;
    client = null;
    log('warn', `live updates: LISTEN connection lost (${why}); reconnecting`);
    c.removeAllListeners('notification');
    c.end().catch(() => {});
    scheduleReconnect();
  };

  async function connect() {
    if (closed) return;
    const c = createPgClient(connectionString, { application_name: 'meridian-live', connectionTimeoutMillis: 5_000 });
    c.on('error', (error) => drop(c, error.message));
    c.on('end', () => drop(c, 'connection ended'));
    c.on('notification', onNotification);
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (error) {
      c.removeAllListeners();
      c.on('error', () => {});
      c.end().catch(() => {});
      if (!closed) log('warn', `live updates: cannot LISTEN (${(error as Error).message}); retrying`);
      scheduleReconnect();
      return;
    }
    if (closed) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    attempts = 0;
    // Anything committed while no connection listened was missed: subscribers refetch.
    if (everListened) emit({ type: 'resync' });
    everListened = true;
    markReady();
  }

  return {
    subscribe(subscriber) {
      subscribers.add(subscriber);
      if (!started) {
        started = true;
        void connect();
      }
      return () => {
        subscribers.delete(subscriber);
      };
    },
    ready: () => readyPromise,
    subscriberCount: () => subscribers.size,
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      emit({ type: 'closed' });
      subscribers.clear();
      const c = client;
      client = null;
      if (c) {
        c.removeAllListeners('end');
        await c.end().catch(() => {});
      }
    },
  };
}

const g = globalThis as typeof globalThis & { __meridianChangeHub?: ChangeHub };

/**
 * Stops the process-wide hub if there is one (web shutdown): every live stream ends, so the HTTP
 * server's connections can close instead of waiting for streams that would run for minutes.
 */
export async function closeChangeHub(): Promise<void> {
  const hub = g.__meridianChangeHub;
  g.__meridianChangeHub = undefined;
  await hub?.close();
}

/**
 * The process-wide hub on DATABASE_URL (kept on `globalThis`: Next may load this module in more
 * than one bundle, and there must be one LISTEN connection per process).
 */
export function changeHub(): ChangeHub {
  if (!g.__meridianChangeHub) {
    const url = env().DATABASE_URL;
    if (!url) throw new Error('DATABASE_URL is not set (npm start sets it for the embedded database)');
    g.__meridianChangeHub = createChangeHub(url);
  }
  return g.__meridianChangeHub;
}
