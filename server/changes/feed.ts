/**
 * The change feed: every transaction committed on the tables of the `meridian_feed` publication,
 * in commit order, read once per process from PostgreSQL's logical decoding (a temporary slot with
 * the built-in `pgoutput` plugin, read through `pg_logical_slot_get_binary_changes` on one
 * dedicated connection) and fanned out in memory to any number of subscribers (Kubernetes API
 * watches, the console's live updates). Writers do nothing for it: the WAL they write anyway is the
 * log, so no NOTIFY and no extra row on any write path.
 *
 * A transaction's commit LSN is its position: strictly increasing in commit order across the
 * whole database, and the same number on every web process — the Kubernetes API's
 * resourceVersion (docs/watch.md). The feed keeps the last WATCH_WINDOW_SECONDS of transactions
 * so a reader can resume from a position; a position before the window is expired. When the
 * connection is lost (PostgreSQL restarted, failed over), the slot goes with it: a new one starts
 * at a later position, and subscribers are told (`reset`) that what lies between is unknown —
 * never a silent gap.
 */
import type pg from 'pg';
import { createPgClient } from '@/db/pg';
import { env } from '@/server/env';
import { log } from '@/server/observability/log';
import { PgOutputDecoder, lsnToBigInt, type FeedChange } from './pgoutput';

export type { FeedChange, FeedRow } from './pgoutput';

/** The publication naming the tables the feed carries (db/migrations). */
const FEED_PUBLICATION = 'meridian_feed';

export interface FeedTxn {
  xid: number;
  /** The commit LSN: the transaction's position. */
  lsn: bigint;
  committedAt: Date;
  /** When this process read it (ms since the epoch). */
  receivedAt: number;
  changes: FeedChange[];
}

/** `txn`: one committed transaction, in commit order; `reset`: knowledge restarts at `from` (changes before it may be missing); `closed`: the process is stopping. */
export type FeedEvent = { type: 'txn'; txn: FeedTxn } | { type: 'reset'; from: bigint } | { type: 'closed' };

export interface ChangeFeed {
  subscribe(subscriber: (event: FeedEvent) => void): () => void;
  /** Resolves once the slot exists (the first time). */
  ready(): Promise<void>;
  /** Every transaction with a commit LSN below this has been delivered. */
  position(): bigint;
  /** The oldest position a reader may resume from: every transaction after it is retained or still to come. */
  windowStart(): bigint;
  /** The retained transactions after `from`, in commit order; `expired` when `from` is before the window. */
  since(from: bigint): FeedTxn[] | 'expired';
  /** Resolves, with the position, once every transaction committed before the call has been delivered. */
  sync(): Promise<bigint>;
  /** Statements the feed has sent to the database (for bench/watch). */
  statements(): number;
  /** The server process of the feed's connection (tests end it to see the feed restart). */
  backendPid(): number | undefined;
  close(): Promise<void>;
}

const MAX_BACKOFF_MS = 5_000;

interface FeedOptions {
  /** `stream` (default): a replication connection streams the decoded WAL; `poll`: a normal connection asks for it every `pollMs`. */
  mode?: 'stream' | 'poll';
  pollMs?: number;
  /** The connection's application_name (default `meridian-feed`). */
  applicationName?: string;
  windowMs?: number;
  maxTransactions?: number;
}

export function createChangeFeed(connectionString: string, options: FeedOptions = {}): ChangeFeed {
  if ((options.mode ?? 'stream') === 'stream') return createStreamingFeed(connectionString, options);
  const pollMs = options.pollMs ?? 25;
  const windowMs = options.windowMs ?? 300_000;
  const maxTransactions = options.maxTransactions ?? 1_000_000;
  const subscribers = new Set<(event: FeedEvent) => void>();
  const decoder = new PgOutputDecoder();
  let retained: FeedTxn[] = [];
  let head = 0; // retained[head…] are live; compacted now and then
  let start = 0n;
  let known = 0n;
  let client: pg.Client | null = null;
  let slot = '';
  let closed = false;
  let started = false;
  let everConnected = false;
  let attempts = 0;
  let statementCount = 0;
  let timer: NodeJS.Timeout | undefined;
  let polling = false;
  let pollAgain = false;
  let waiting: (() => void)[] = [];
  let markReady: () => void = () => {};
  const readyPromise = new Promise<void>((resolve) => (markReady = resolve));

  const emit = (event: FeedEvent) => {
    for (const s of subscribers) {
      try {
        s(event);
      } catch (error) {
        log('warn', `change feed subscriber failed: ${(error as Error).message}`);
      }
    }
  };

  const prune = () => {
    const oldest = Date.now() - windowMs;
    while (head < retained.length && (retained[head].receivedAt < oldest || retained.length - head > maxTransactions)) {
      start = retained[head].lsn;
      head++;
    }
    if (head > 1024 && head * 2 > retained.length) {
      retained = retained.slice(head);
      head = 0;
    }
  };

  const schedule = (delay: number) => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void poll();
    }, delay);
    timer.unref?.();
  };

  async function poll(): Promise<void> {
    if (closed) return;
    const c = client;
    if (!c) return;
    if (polling) {
      pollAgain = true;
      return;
    }
    polling = true;
    const waiters = waiting;
    waiting = [];
    let busy = false;
    try {
      statementCount++;
      const result = await c.query<{ end: string; data: Buffer | null }>({
        text: `select e.end::text as end, c.data from (select pg_current_wal_flush_lsn() as end) e
               left join lateral pg_logical_slot_get_binary_changes($1, e.end, null, 'proto_version', '1', 'publication_names', $2) c on true`,
        values: [slot, FEED_PUBLICATION],
      });
      const receivedAt = Date.now();
      let end = known;
      for (const row of result.rows) {
        end = lsnToBigInt(row.end);
        if (!row.data) continue;
        const txn = decoder.read(row.data);
        if (!txn) continue;
        busy = true;
        if (txn.lsn < known) {
          // Cannot happen with PostgreSQL's decoding; if it ever did, readers could have skipped it.
          log('error', `change feed: transaction ${txn.xid} at ${txn.lsn} arrived after position ${known}; restarting the feed`);
          throw new Error('change feed out of order');
        }
        const full: FeedTxn = { ...txn, receivedAt };
        retained.push(full);
        if (txn.lsn + 1n > known) known = txn.lsn + 1n;
        emit({ type: 'txn', txn: full });
      }
      if (end > known) known = end;
      prune();
      polling = false;
      for (const w of waiters) w();
    } catch (error) {
      polling = false;
      waiting.push(...waiters);
      if (client === c) drop(c, (error as Error).message);
      return;
    }
    if (pollAgain || busy || waiting.length > 0) {
      pollAgain = false;
      void poll();
    } else schedule(pollMs);
  }

  const scheduleReconnect = () => {
    if (closed) return;
    const delay = Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(attempts++, 10));
    setTimeout(() => void connect(), delay).unref?.();
  };

  const drop = (c: pg.Client, why: string) => {
    if (client !== c) return;
    client = null;
    clearTimeout(timer);
    timer = undefined;
    if (!closed) log('warn', `change feed: connection lost (${why}); reconnecting`);
    c.removeAllListeners('end');
    c.end().catch(() => {});
    scheduleReconnect();
  };

  async function connect() {
    if (closed) return;
    const c = createPgClient(connectionString, { application_name: options.applicationName ?? 'meridian-feed', connectionTimeoutMillis: 5_000 });
    c.on('error', (error) => drop(c, error.message));
    c.on('end', () => drop(c, 'connection ended'));
    const name = `meridian_feed_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    let from: bigint;
    try {
      await c.connect();
      statementCount++;
      const created = await c.query<{ lsn: string }>(`select lsn::text from pg_create_logical_replication_slot($1, 'pgoutput', true)`, [name]);
      from = lsnToBigInt(created.rows[0].lsn);
    } catch (error) {
      c.removeAllListeners();
      c.on('error', () => {});
      c.end().catch(() => {});
      if (!closed) log('warn', `change feed: cannot open a replication slot (${(error as Error).message}); retrying`);
      scheduleReconnect();
      return;
    }
    if (closed) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    slot = name;
    attempts = 0;
    decoder.reset();
    retained = [];
    head = 0;
    // Every transaction committed at or after the slot's point is decoded: a resume from just before it misses nothing.
    start = from - 1n;
    known = from;
    if (everConnected) emit({ type: 'reset', from });
    everConnected = true;
    markReady();
    void poll();
  }

  const begin = () => {
    if (!started) {
      started = true;
      void connect();
    }
  };

  return {
    subscribe(subscriber) {
      begin();
      subscribers.add(subscriber);
      return () => {
        subscribers.delete(subscriber);
      };
    },
    ready: () => (begin(), readyPromise),
    position: () => known,
    windowStart: () => start,
    since(from) {
      if (from < start) return 'expired';
      const out: FeedTxn[] = [];
      for (let i = retained.length - 1; i >= head && retained[i].lsn > from; i--) out.push(retained[i]);
      return out.reverse();
    },
    sync() {
      begin();
      return new Promise<bigint>((resolve) => {
        waiting.push(() => resolve(known));
        if (client && !polling) {
          clearTimeout(timer);
          timer = undefined;
          void poll();
        } else if (polling) pollAgain = true;
      });
    },
    statements: () => statementCount,
    backendPid: () => (client as (pg.Client & { processID?: number }) | null)?.processID,
    async close() {
      closed = true;
      clearTimeout(timer);
      emit({ type: 'closed' });
      subscribers.clear();
      const c = client;
      client = null;
      for (const w of waiting) w();
      waiting = [];
      if (c) {
        c.removeAllListeners('end');
        await c.end().catch(() => {});
      }
    },
  };
}

/** Microseconds from PostgreSQL's epoch (2000-01-01) to now: the clock of a standby status update. */
const pgClock = () => BigInt(Date.now() - 946_684_800_000) * 1000n;

/**
 * The streaming feed: a replication connection (`replication=database`) makes a temporary slot and
 * runs START_REPLICATION, so PostgreSQL decodes each WAL record once and sends each committed
 * transaction as it is written (no polling, no re-decoding from the slot's restart point). A second,
 * ordinary connection answers where the WAL ends for `sync`; the walsender's keepalives (asked for
 * by a status update) say how far it has read.
 */
function createStreamingFeed(connectionString: string, options: FeedOptions): ChangeFeed {
  const windowMs = options.windowMs ?? 300_000;
  const maxTransactions = options.maxTransactions ?? 1_000_000;
  const subscribers = new Set<(event: FeedEvent) => void>();
  const decoder = new PgOutputDecoder();
  let retained: FeedTxn[] = [];
  let head = 0;
  let start = 0n;
  let known = 0n;
  let client: pg.Client | null = null;
  let probe: pg.Client | null = null;
  let closed = false;
  let started = false;
  let everConnected = false;
  let attempts = 0;
  let statementCount = 0;
  let statusTimer: NodeJS.Timeout | undefined;
  let waiting: { target: bigint; resolve: (position: bigint) => void }[] = [];
  let markReady: () => void = () => {};
  const readyPromise = new Promise<void>((resolve) => (markReady = resolve));

  const emit = (event: FeedEvent) => {
    for (const s of subscribers) {
      try {
        s(event);
      } catch (error) {
        log('warn', `change feed subscriber failed: ${(error as Error).message}`);
      }
    }
  };

  const prune = () => {
    const oldest = Date.now() - windowMs;
    while (head < retained.length && (retained[head].receivedAt < oldest || retained.length - head > maxTransactions)) {
      start = retained[head].lsn;
      head++;
    }
    if (head > 1024 && head * 2 > retained.length) {
      retained = retained.slice(head);
      head = 0;
    }
  };

  const settle = () => {
    if (waiting.length === 0) return;
    const still: typeof waiting = [];
    for (const w of waiting) {
      if (known >= w.target) w.resolve(known);
      else still.push(w);
    }
    waiting = still;
  };

  /** A standby status update: everything before `known` is processed; `reply` asks for a keepalive at once. */
  const sendStatus = (reply: boolean) => {
    const c = client;
    if (!c) return;
    const done = known > 0n ? known - 1n : 0n;
    const payload = Buffer.alloc(34);
    payload.write('r', 0, 'latin1');
    payload.writeBigUInt64BE(done, 1);
    payload.writeBigUInt64BE(done, 9);
    payload.writeBigUInt64BE(done, 17);
    payload.writeBigUInt64BE(pgClock(), 25);
    payload.writeUInt8(reply ? 1 : 0, 33);
    const frame = Buffer.alloc(5);
    frame.write('d', 0, 'latin1');
    frame.writeInt32BE(4 + payload.length, 1);
    c.connection.stream.write(Buffer.concat([frame, payload]));
  };

  const onCopyData = (chunk: Buffer) => {
    const receivedAt = Date.now();
    if (chunk[0] === 0x77) {
      // XLogData: 'w', start, end, send time, then one pgoutput message.
      const txn = decoder.read(chunk.subarray(25));
      if (!txn) return;
      if (txn.lsn < known) {
        log('error', `change feed: transaction ${txn.xid} at ${txn.lsn} arrived after position ${known}; restarting the feed`);
        if (client) drop(client, 'out of order');
        return;
      }
      const full: FeedTxn = { ...txn, receivedAt };
      retained.push(full);
      known = txn.lsn + 1n;
      emit({ type: 'txn', txn: full });
      prune();
      settle();
    } else if (chunk[0] === 0x6b) {
      // Keepalive: 'k', how far the server has read, send time, whether it wants a reply.
      const sent = chunk.readBigUInt64BE(1);
      if (sent > known) known = sent;
      settle();
      if (chunk[17] === 1) sendStatus(false);
    }
  };

  const scheduleReconnect = () => {
    if (closed) return;
    const delay = Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(attempts++, 10));
    setTimeout(() => void connect(), delay).unref?.();
  };

  const drop = (c: pg.Client, why: string) => {
    if (client !== c) return;
    client = null;
    clearInterval(statusTimer);
    if (!closed) log('warn', `change feed: replication connection lost (${why}); reconnecting`);
    c.removeAllListeners('end');
    c.end().catch(() => {});
    const p = probe;
    probe = null;
    p?.end().catch(() => {});
    scheduleReconnect();
  };

  async function connect() {
    if (closed) return;
    const config = { application_name: options.applicationName ?? 'meridian-feed', connectionTimeoutMillis: 5_000, replication: 'database' };
    const c = createPgClient(connectionString, config);
    const p = createPgClient(connectionString, { application_name: `${options.applicationName ?? 'meridian-feed'}-probe`, connectionTimeoutMillis: 5_000 });
    c.on('error', (error) => drop(c, error.message));
    c.on('end', () => drop(c, 'connection ended'));
    p.on('error', () => {});
    const name = `meridian_feed_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    let from: bigint;
    try {
      await Promise.all([c.connect(), p.connect()]);
      statementCount++;
      const created = await c.query<{ consistent_point: string }>(`CREATE_REPLICATION_SLOT ${name} TEMPORARY LOGICAL pgoutput NOEXPORT_SNAPSHOT`);
      from = lsnToBigInt(created.rows[0].consistent_point);
    } catch (error) {
      for (const x of [c, p]) {
        x.removeAllListeners();
        x.on('error', () => {});
        x.end().catch(() => {});
      }
      if (!closed) log('warn', `change feed: cannot open a replication slot (${(error as Error).message}); retrying`);
      scheduleReconnect();
      return;
    }
    if (closed) {
      await Promise.all([c.end().catch(() => {}), p.end().catch(() => {})]);
      return;
    }
    client = c;
    probe = p;
    attempts = 0;
    decoder.reset();
    retained = [];
    head = 0;
    start = from - 1n;
    known = from;
    c.connection.on('copyData', (message: { chunk: Buffer }) => onCopyData(message.chunk));
    const position = `${(from >> 32n).toString(16).toUpperCase()}/${(from & 0xffffffffn).toString(16).toUpperCase()}`;
    c.query(`START_REPLICATION SLOT ${name} LOGICAL ${position} (proto_version '1', publication_names '${FEED_PUBLICATION}')`).catch((error: Error) =>
      drop(c, error.message),
    );
    statusTimer = setInterval(() => sendStatus(false), 1_000);
    statusTimer.unref?.();
    if (everConnected) emit({ type: 'reset', from });
    everConnected = true;
    markReady();
  }

  const begin = () => {
    if (!started) {
      started = true;
      void connect();
    }
  };

  return {
    subscribe(subscriber) {
      begin();
      subscribers.add(subscriber);
      return () => {
        subscribers.delete(subscriber);
      };
    },
    ready: () => (begin(), readyPromise),
    position: () => known,
    windowStart: () => start,
    since(from) {
      if (from < start) return 'expired';
      const out: FeedTxn[] = [];
      for (let i = retained.length - 1; i >= head && retained[i].lsn > from; i--) out.push(retained[i]);
      return out.reverse();
    },
    async sync() {
      begin();
      await readyPromise;
      for (;;) {
        if (closed) return known;
        const p = probe;
        let target: bigint;
        try {
          if (!p) throw new Error('not connected');
          statementCount++;
          target = lsnToBigInt((await p.query<{ end: string }>('select pg_current_wal_flush_lsn()::text as end')).rows[0].end);
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
        if (known >= target) return known;
        const reached = new Promise<bigint>((resolve) => waiting.push({ target, resolve }));
        // Ask the walsender where it is until it has read past the target.
        const ask = setInterval(() => sendStatus(true), 5);
        sendStatus(true);
        try {
          return await reached;
        } finally {
          clearInterval(ask);
        }
      }
    },
    statements: () => statementCount,
    backendPid: () => (client as (pg.Client & { processID?: number }) | null)?.processID,
    async close() {
      closed = true;
      clearInterval(statusTimer);
      emit({ type: 'closed' });
      subscribers.clear();
      const c = client;
      client = null;
      for (const w of waiting) w.resolve(known);
      waiting = [];
      if (c) {
        c.removeAllListeners('end');
        c.on('error', () => {});
        await c.end().catch(() => {});
      }
      const p = probe;
      probe = null;
      await p?.end().catch(() => {});
    },
  };
}

const g = globalThis as { __meridianChangeFeed?: ChangeFeed };

/** The process's one feed on DATABASE_URL (on `globalThis`: Next may load this module in more than one bundle). */
export function changeFeed(): ChangeFeed {
  if (!g.__meridianChangeFeed) {
    const e = env();
    const url = e.DATABASE_URL;
    if (!url) throw new Error('DATABASE_URL is not set (npm start sets it for the embedded database)');
    g.__meridianChangeFeed = createChangeFeed(url, {
      mode: e.WATCH_FEED,
      pollMs: e.WATCH_POLL_MS,
      windowMs: e.WATCH_WINDOW_SECONDS * 1000,
      maxTransactions: e.WATCH_WINDOW_MAX_TRANSACTIONS,
    });
  }
  return g.__meridianChangeFeed;
}

/** Stops the process's feed if there is one (web shutdown). */
export async function closeChangeFeed(): Promise<void> {
  const feed = g.__meridianChangeFeed;
  g.__meridianChangeFeed = undefined;
  await feed?.close();
}
