import type { ServerResponse } from 'node:http';
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, DbOrTx } from '@/db/client';
import { query } from '@/db/query';
import { changeFeed, type ChangeFeed, type FeedRow, type FeedTxn } from '@/server/changes/feed';
import { lsnToBigInt } from '@/server/changes/pgoutput';
import { systemActor } from '@/server/audit/events';
import { log } from '@/server/observability/log';
import { apiVersionOf, kindKey, type KindDeclaration, type WatchRef, type WatchSource } from './declare';
import { compose, currentOf, type KubeObject } from './objects';
import { KubeError } from './status';
import { eventVersion, positionOf, raiseVersionFloor, recordVersion, versionOf, versionThrough } from './versions';

/**
 * Watches of the Kubernetes API (`?watch=1`), fed by the process's change feed
 * (server/changes/feed.ts): each committed transaction becomes, for every kind whose declared
 * tables it changed (declare.ts `watch`, plus every kind's metadata rows in kube_objects), ADDED,
 * MODIFIED or DELETED events with the transaction's commit LSN as `resourceVersion`, read once per
 * process and fanned out in memory to the watchers whose project, namespace and selectors cover
 * them. Also here: the resource versions of objects (versions.ts) and lists consistent with the
 * feed (`consistentList`), so that a list at X followed by a watch from X misses nothing and
 * repeats nothing. docs/watch.md explains the design.
 */

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface WatchEvent {
  type: EventType | 'BOOKMARK' | 'ERROR';
  object: unknown;
}

export interface Watcher {
  kind: KindDeclaration;
  projectId: string;
  namespace: string | undefined;
  matches(o: KubeObject): boolean;
  /** Events with a resource version at or below this were already sent (or predate the watch). */
  cursor: bigint;
  send(event: { type: EventType; object: KubeObject }): void;
  /** The feed lost continuity: the watch ends with 410 Expired. */
  expire(message: string): void;
}

interface Entry {
  kind: KindDeclaration;
  ref: WatchRef;
  /** Whether the object existed before the transaction (undefined: not said by any row). */
  before?: boolean;
  after?: boolean;
  defined: boolean;
  /** kube_objects' row of the object (after, else before): its namespace and labels. */
  meta?: FeedRow;
}

interface Prepared {
  entries: Entry[];
  /** The namespaces the transaction changed (their versions). */
  namespaces: string[];
  /** The objects read, by entry index (absent: not read, as none watched it then). */
  objects: Map<number, KubeObject | undefined>;
}

interface ObjectChange {
  type: EventType;
  kind: KindDeclaration;
  projectId: string;
  uid: string;
  /** The change's resource version (eventVersion). */
  version: bigint;
  object: KubeObject;
}

const labelsOf = (text: string | null | undefined): Record<string, string> => {
  if (!text) return {};
  try {
    return z.record(z.string(), z.string()).parse(JSON.parse(text));
  } catch {
    return {};
  }
};

/** Whether an object is in a watcher's scope (namespace and selectors). */
const covers = (w: Watcher, o: KubeObject) => (w.namespace === undefined || o.metadata.namespace === w.namespace) && w.matches(o);

export class KubeWatchHub {
  private readonly sources = new Map<string, [KindDeclaration, WatchSource][]>();
  private readonly byKindKey = new Map<string, KindDeclaration>();
  private readonly watchers = new Set<Watcher>();
  /** The last state sent of each object of a watched kind (for DELETED events and selector transitions). */
  private readonly lastState = new Map<string, KubeObject>();
  private queue: Promise<unknown> = Promise.resolve();
  private processed = 0n;
  /** Objects read to make events (each a get of the kind and its metadata), for bench/watch. */
  reads = 0;
  private unsubscribe: () => void;

  constructor(
    readonly feed: ChangeFeed,
    kinds: readonly KindDeclaration[],
    private readonly db: Db,
  ) {
    for (const k of kinds) {
      this.byKindKey.set(kindKey(k), k);
      for (const source of k.watch ?? []) this.sources.set(source.table, [...(this.sources.get(source.table) ?? []), [k, source]]);
    }
    this.unsubscribe = feed.subscribe((event) => {
      if (event.type === 'txn') {
        const prepared = this.prepare(event.txn, this.isWatched);
        prepared.catch(() => {}); // awaited in order below, where a failure is logged
        void this.enqueue(() => this.process(event.txn, prepared));
      } else if (event.type === 'reset') {
        void this.enqueue(async () => {
          raiseVersionFloor(versionThrough(event.from - 1n));
          this.lastState.clear();
          this.processed = event.from - 1n;
          for (const w of this.watchers) w.expire('the change feed restarted; relist');
          this.watchers.clear();
        });
      } else {
        for (const w of this.watchers) w.expire('the server is stopping');
        this.watchers.clear();
      }
    });
    void feed.ready().then(() => raiseVersionFloor(versionThrough(feed.windowStart())));
  }

  close(): void {
    this.unsubscribe();
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task);
    this.queue = next.catch((error) => log('error', `watch: ${(error as Error).message}`));
    return next;
  }

  /** Resolves once every transaction committed before the call is processed (versions known, events sent); returns the feed's position (an LSN: every commit before it is processed). */
  async syncPosition(): Promise<bigint> {
    await this.feed.ready();
    const position = await this.feed.sync();
    await this.enqueue(async () => {});
    return position;
  }

  /** As `syncPosition`, answering the resource version that covers every change processed. */
  async sync(): Promise<bigint> {
    return versionThrough((await this.syncPosition()) - 1n);
  }

  /** A resource version no later than every event still to come and no earlier than every event sent. */
  async bookmark(): Promise<bigint> {
    const position = this.feed.position();
    await this.enqueue(async () => {});
    return versionThrough(position - 1n > this.processed ? position - 1n : this.processed);
  }

  /** The objects a transaction changed, per kind and uid, with what the rows say of their existence (in the order the rows came: the same on every process). */
  private async entries(txn: FeedTxn): Promise<{ entries: Entry[]; namespaces: string[] }> {
    const namespaces: string[] = [];
    const entries = new Map<string, Entry>();
    const entry = (kind: KindDeclaration, ref: WatchRef) => {
      const key = `${kindKey(kind)}|${ref.uid}`;
      let e = entries.get(key);
      if (!e) entries.set(key, (e = { kind, ref, defined: false }));
      return e;
    };
    for (const change of txn.changes) {
      if (change.table === 'kube_namespaces') {
        const uid = (change.row ?? change.old)?.uid;
        if (uid) namespaces.push(uid);
        continue;
      }
      if (change.table === 'kube_objects') {
        const row = change.row ?? change.old;
        const kind = row?.kind ? this.byKindKey.get(row.kind) : undefined;
        if (!row || !kind || !row.uid || !row.name) continue;
        // The platform plane's objects have no project ('' here, as its watchers' project).
        const projectId = (kind.plane ?? 'project') === 'platform' ? '' : row.project_id;
        if (projectId === null) continue;
        const e = entry(kind, { projectId, uid: row.uid, name: row.name });
        e.meta = row;
        continue;
      }
      for (const [kind, source] of this.sources.get(change.table) ?? []) {
        const ref = (change.row && (await source.object(change.row, this.db))) || (change.old && (await source.object(change.old, this.db))) || null;
        if (!ref) continue;
        const e = entry(kind, ref);
        if (!source.exists) continue;
        const before = change.op === 'insert' ? false : change.old ? source.exists(change.old) : undefined;
        const after = change.op === 'delete' || !change.row ? false : source.exists(change.row);
        if (!e.defined) {
          e.defined = true;
          e.before = before;
        }
        e.after = after;
        if (change.row && after) e.ref = ref;
      }
    }
    return { entries: [...entries.values()], namespaces };
  }

  private typeOf(e: Entry): EventType | 'read' | null {
    if (!e.defined) return 'read';
    const after = e.after ?? false;
    const before = e.before ?? after;
    if (!before && after) return 'ADDED';
    if (before && after) return 'MODIFIED';
    if (before && !after) return 'DELETED';
    return null;
  }

  /** Resolves once transaction `xid` (committed) is visible to new snapshots. */
  private async visible(xid: number): Promise<void> {
    for (let attempt = 0; attempt < 1000; attempt++) {
      const [row] = await query(this.db, sql`select pg_current_snapshot()::text as snapshot`, z.object({ snapshot: z.string() }));
      if (visibleIn(row.snapshot)(xid)) return;
      await sleep(1);
    }
  }

  /** The object as it is now, if it is still the object `ref` names. */
  private async read(kind: KindDeclaration, ref: WatchRef, namespace: string | undefined): Promise<KubeObject | undefined> {
    this.reads++;
    const current = await currentOf(kind, { db: this.db, projectId: ref.projectId, actor: systemActor('watch') }, namespace, ref.name);
    return current && current.stored.uid === ref.uid ? current.object : undefined;
  }

  /** An object known only by the rows of the transaction (it is gone, or was never read). */
  private minimal(kind: KindDeclaration, ref: WatchRef, meta: FeedRow | undefined): KubeObject {
    const labels = labelsOf(meta?.labels);
    return compose(
      kind,
      { uid: ref.uid, name: ref.name, createdAt: null, spec: {}, status: {} },
      {
        namespace: ref.namespace ?? meta?.namespace ?? 'default',
        labels,
        annotations: labelsOf(meta?.annotations),
        finalizers: [],
        managedFields: [],
        generation: 1,
        deletionTimestamp: null,
        resourceVersion: '',
      },
    );
  }

  /**
   * The database work of a transaction's events, started as soon as it arrives (reads of several
   * transactions overlap; events are still made and sent one transaction at a time, in order): its
   * entries and the objects watched now, read once the commit is visible.
   */
  private async prepare(txn: FeedTxn, watched: (kind: KindDeclaration, projectId: string) => boolean): Promise<Prepared> {
    const { entries, namespaces } = await this.entries(txn);
    const objects = new Map<number, KubeObject | undefined>();
    const wanted = entries.flatMap((e, index) => {
      const type = this.typeOf(e);
      return type !== null && type !== 'DELETED' && watched(e.kind, e.ref.projectId) ? [{ e, index }] : [];
    });
    if (wanted.length > 0) {
      // A commit is streamed once written, a moment before other sessions see it: the objects are read once they do.
      await this.visible(txn.xid);
      await Promise.all(
        wanted.map(async ({ e, index }) => objects.set(index, await this.read(e.kind, e.ref, e.ref.namespace ?? e.meta?.namespace ?? undefined))),
      );
    }
    return { entries, namespaces, objects };
  }

  /** The events of one transaction for `watched` (kind key|project) pairs. */
  private async changesOf(
    txn: FeedTxn,
    watched: (kind: KindDeclaration, projectId: string) => boolean,
    record: boolean,
    prepared?: Promise<Prepared>,
  ): Promise<ObjectChange[]> {
    const out: ObjectChange[] = [];
    const { entries, namespaces, objects } = await (prepared ?? this.prepare(txn, watched));
    if (record) for (const uid of namespaces) recordVersion(uid, versionThrough(txn.lsn));
    for (let index = 0; index < entries.length; index++) {
      const e = entries[index];
      const version = eventVersion(txn.lsn, index);
      let type = this.typeOf(e);
      if (type === null) continue;
      const isWatched = watched(e.kind, e.ref.projectId);
      let object: KubeObject | undefined;
      if (type !== 'DELETED' && isWatched) {
        if (objects.has(index)) object = objects.get(index);
        else {
          // Watched since the transaction was prepared.
          await this.visible(txn.xid);
          object = await this.read(e.kind, e.ref, e.ref.namespace ?? e.meta?.namespace ?? undefined);
        }
      }
      if (type === 'read') {
        if (!object) continue;
        type = 'MODIFIED';
      }
      if (record) recordVersion(e.ref.uid, version);
      if (!isWatched) {
        if (record) this.lastState.delete(e.ref.uid);
        continue;
      }
      if (!object) object = type === 'DELETED' ? (this.lastState.get(e.ref.uid) ?? this.minimal(e.kind, e.ref, e.meta)) : this.minimal(e.kind, e.ref, e.meta);
      const stamped = { ...object, metadata: { ...object.metadata, resourceVersion: String(version) } };
      out.push({ type, kind: e.kind, projectId: e.ref.projectId, uid: e.ref.uid, version, object: stamped });
    }
    return out;
  }

  private isWatched = (kind: KindDeclaration, projectId: string) => {
    for (const w of this.watchers) if (w.kind === kind && w.projectId === projectId) return true;
    return false;
  };

  private async process(txn: FeedTxn, prepared: Promise<Prepared>): Promise<void> {
    const changes = await this.changesOf(txn, this.isWatched, true, prepared);
    for (const c of changes) {
      const previous = this.lastState.get(c.uid);
      for (const w of this.watchers) if (w.kind === c.kind && w.projectId === c.projectId && c.version > w.cursor) deliver(w, c, previous);
      if (c.type === 'DELETED') this.lastState.delete(c.uid);
      else {
        this.lastState.delete(c.uid);
        this.lastState.set(c.uid, c.object);
        if (this.lastState.size > 100_000) this.lastState.delete(this.lastState.keys().next().value as string);
      }
    }
    if (txn.lsn > this.processed) this.processed = txn.lsn;
  }

  /**
   * Starts a watcher from resource version `from`: the retained transactions after it are replayed
   * to it, then it follows live. `expired`: `from` is before the feed's window.
   */
  attach(w: Watcher, from: bigint): Promise<'attached' | 'expired'> {
    return this.enqueue(async () => {
      // A version inside a transaction (some of its objects' changes sent, not all): that transaction is replayed from the next one.
      const at = positionOf(from);
      const replay = this.feed.since(at.whole ? at.lsn : at.lsn - 1n);
      if (replay === 'expired') return 'expired';
      const only = (kind: KindDeclaration, projectId: string) => kind === w.kind && projectId === w.projectId;
      for (const txn of replay) {
        if (txn.lsn > this.processed) break;
        for (const c of await this.changesOf(txn, only, false)) if (c.version > from) deliver(w, c, undefined);
      }
      const through = versionThrough(this.processed);
      w.cursor = from > through ? from : through;
      this.watchers.add(w);
      return 'attached';
    });
  }

  detach(w: Watcher): void {
    this.watchers.delete(w);
  }

  watcherCount(): number {
    return this.watchers.size;
  }
}

/** One change to one watcher: the type it sees, given whether the object's previous state was in its scope. */
function deliver(w: Watcher, c: ObjectChange, previous: KubeObject | undefined) {
  const now = c.type !== 'DELETED' && covers(w, c.object);
  const was = c.type === 'DELETED' ? covers(w, c.object) : previous ? covers(w, previous) : c.type === 'MODIFIED' ? now : false;
  if (c.type === 'ADDED') {
    if (now) w.send({ type: 'ADDED', object: c.object });
  } else if (c.type === 'DELETED') {
    if (was) w.send({ type: 'DELETED', object: c.object });
  } else if (now && was) w.send({ type: 'MODIFIED', object: c.object });
  else if (now) w.send({ type: 'ADDED', object: c.object });
  else if (was)
    w.send({
      type: 'DELETED',
      object: { ...(previous ?? c.object), metadata: { ...(previous ?? c.object).metadata, resourceVersion: c.object.metadata.resourceVersion } },
    });
}

const g = globalThis as { __meridianKubeWatch?: KubeWatchHub };

/** The process's watch hub over its change feed (one per process, on `globalThis`). */
export function kubeWatchHub(kinds: readonly KindDeclaration[], db: Db): KubeWatchHub {
  if (!g.__meridianKubeWatch) g.__meridianKubeWatch = new KubeWatchHub(changeFeed(), kinds, db);
  return g.__meridianKubeWatch;
}

// ---- Lists consistent with the feed -------------------------------------------------------------

const snapshotRow = z.object({ snapshot: z.string(), lsn: z.string() });

/** Whether a transaction (32-bit xid, as decoding gives it) is visible in a snapshot `xmin:xmax:xip,…`. */
function visibleIn(snapshot: string): (xid: number) => boolean {
  const [xminText, xmaxText, xipText] = snapshot.split(':');
  const xmax = BigInt(xmaxText);
  const xmin = BigInt(xminText);
  const epoch = xmax >> 32n;
  const full = (xid: number) => {
    let f = (epoch << 32n) | BigInt(xid);
    if (f > xmax) f -= 1n << 32n;
    return f;
  };
  const inProgress = new Set((xipText ?? '').split(',').filter(Boolean).map(BigInt));
  return (xid) => {
    const f = full(xid);
    return f < xmin || (f < xmax && !inProgress.has(f));
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Reads `read` in one repeatable-read snapshot and gives it the resource version X such that the
 * snapshot holds exactly the transactions with commit positions up to X: every commit visible in
 * the snapshot was written before the snapshot's WAL position L, so X = L − 1 — unless a
 * transaction that committed before L was not yet visible (PostgreSQL makes a commit visible a
 * moment after writing it), in which case X is just before it, or the read is retried when that
 * cannot be made exact. A watch from X then misses nothing and repeats nothing.
 */
export async function consistentList<T>(hub: KubeWatchHub, db: Db, read: (tx: DbOrTx) => Promise<T>): Promise<{ value: T; resourceVersion: bigint }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const { value, snapshot, lsn } = await db.transaction(
      async (tx) => {
        const [row] = await query(tx, sql`select pg_current_snapshot()::text as snapshot, pg_current_wal_insert_lsn()::text as lsn`, snapshotRow);
        return { value: await read(tx), snapshot: row.snapshot, lsn: lsnToBigInt(row.lsn) };
      },
      // Not read-only: a list forgets the metadata of deletions the domain has finished (objects.ts forgetFinishedDeletions).
      { isolationLevel: 'repeatable read' },
    );
    const deadline = Date.now() + 3_000;
    let position = await hub.syncPosition();
    while (position < lsn && Date.now() < deadline) {
      await sleep(10);
      position = await hub.syncPosition();
    }
    if (position < lsn) throw new KubeError(503, 'ServiceUnavailable', 'the change feed is behind; retry', {}, { 'retry-after': '1' });
    const visible = visibleIn(snapshot);
    const recent = hub.feed.since(hub.feed.windowStart());
    if (recent === 'expired') continue;
    let x = lsn - 1n;
    for (let i = recent.length - 1, seen = 0; i >= 0 && seen < 100_000; i--, seen++) {
      const t = recent[i];
      if (t.lsn < lsn && !visible(t.xid) && t.lsn - 1n < x) x = t.lsn - 1n;
    }
    const exact = recent.every((t) => t.lsn <= x || t.lsn >= lsn || !visible(t.xid));
    if (exact) return { value, resourceVersion: versionThrough(x) };
  }
  throw new KubeError(503, 'ServiceUnavailable', 'could not take a list consistent with the change feed; retry', {}, { 'retry-after': '1' });
}

/** An object's `metadata.resourceVersion` in a list at `listVersion`: its last change's, at most the list's. */
export function listItemVersion(uid: string | null, listVersion: bigint): string {
  const v = BigInt(versionOf(uid));
  return String(v < listVersion ? v : listVersion);
}

// ---- The stream ---------------------------------------------------------------------------------

const expiredStatus = (message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason: 'Expired',
  code: 410,
});

interface WatchStreamOptions {
  hub: KubeWatchHub;
  kind: KindDeclaration;
  projectId: string;
  namespace: string | undefined;
  matches(o: KubeObject): boolean;
  /** The objects to send as ADDED first, with the version they were read at (absent: start from `from`). */
  initial?: () => Promise<{ items: KubeObject[]; resourceVersion: bigint }>;
  from?: bigint;
  /** Send a BOOKMARK annotated `k8s.io/initial-events-end` after the initial objects (sendInitialEvents=true). */
  initialEventsEnd: boolean;
  bookmarks: boolean;
  bookmarkEveryMs?: number;
  timeoutMs: number;
  /** How each event's object is written (a Table row for kubectl's Table output). */
  render(object: unknown, first: boolean): unknown;
  onClose(listener: () => void): void;
}

/** Serves one watch on `res` (newline-delimited JSON events, as kube-apiserver streams them) until the client goes, the timeout, or expiry. */
export async function streamWatch(res: ServerResponse, o: WatchStreamOptions): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'transfer-encoding': 'chunked' });
  res.flushHeaders();
  let ended = false;
  let first = true;
  let timer: NodeJS.Timeout | undefined;
  let bookmarkTimer: NodeJS.Timeout | undefined;
  const write = (event: WatchEvent) => {
    if (ended) return;
    const object = event.type === 'ERROR' || event.type === 'BOOKMARK' ? event.object : o.render(event.object, first);
    if (event.type !== 'ERROR' && event.type !== 'BOOKMARK') first = false;
    res.write(`${JSON.stringify({ type: event.type, object })}\n`);
    // A client that does not read is cut off; it resumes from its last resource version.
    if (res.writableLength > 32 * 1024 * 1024) end();
  };
  const watcher: Watcher = {
    kind: o.kind,
    projectId: o.projectId,
    namespace: o.namespace,
    matches: o.matches,
    cursor: 0n,
    send: (event) => write(event),
    expire: (message) => {
      write({ type: 'ERROR', object: expiredStatus(message) });
      end();
    },
  };
  function end() {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    clearInterval(bookmarkTimer);
    o.hub.detach(watcher);
    res.end();
  }
  o.onClose(end);
  timer = setTimeout(end, o.timeoutMs);
  timer.unref?.();
  const bookmarkObject = (rv: bigint, annotations?: Record<string, string>) => ({
    apiVersion: apiVersionOf(o.kind),
    kind: o.kind.kind,
    metadata: { resourceVersion: String(rv), ...(annotations ? { annotations } : {}) },
  });
  try {
    let from = o.from ?? 0n;
    if (o.initial) {
      const initial = await o.initial();
      for (const item of initial.items) write({ type: 'ADDED', object: item });
      from = initial.resourceVersion;
      if (o.initialEventsEnd) write({ type: 'BOOKMARK', object: bookmarkObject(from, { 'k8s.io/initial-events-end': 'true' }) });
    } else {
      // A version from the future (another primary's, after a failover) is waited for a moment, then expired.
      const deadline = Date.now() + 3_000;
      while (from > (await o.hub.sync()) && Date.now() < deadline && !ended) await sleep(50);
      const current = versionThrough(o.hub.feed.position() - 1n);
      if (from > current) {
        watcher.expire(`too large resource version: ${from}, current: ${current}`);
        return;
      }
    }
    if (ended) return;
    const attached = await o.hub.attach(watcher, from);
    if (attached === 'expired') {
      watcher.expire(`too old resource version: ${from} (${versionThrough(o.hub.feed.windowStart())})`);
      return;
    }
    if (ended) o.hub.detach(watcher);
    if (o.bookmarks) {
      bookmarkTimer = setInterval(() => {
        void o.hub.bookmark().then((rv) => {
          write({ type: 'BOOKMARK', object: bookmarkObject(rv) });
        });
      }, o.bookmarkEveryMs ?? 10_000);
      bookmarkTimer.unref?.();
    }
  } catch (error) {
    const e = error instanceof KubeError ? error : new KubeError(500, 'InternalError', (error as Error).message);
    write({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: e.message, reason: e.reason, code: e.code } });
    end();
  }
}
