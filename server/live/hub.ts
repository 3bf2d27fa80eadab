/**
 * The process's change feed (server/changes/feed.ts) cut into the console's change
 * notifications and fanned out to any number of subscribers (the browsers' server-sent-event
 * streams): a web process reads the feed once however many consoles are open, and writers do
 * nothing for it (no NOTIFY). When the feed restarts (its connection dropped), changes in between
 * may be missing, so subscribers are told to resynchronise (refetch what they show).
 */
import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { query } from '@/db/query';
import { sql } from 'drizzle-orm';
import { changeFeed, type ChangeFeed, type FeedChange } from '@/server/changes/feed';
import { log } from '@/server/observability/log';
import type { Change, ChangeKind } from '@/server/changes/notify';
import { getDb } from '@/db/client';

/** `closed`: the process is stopping; streams end (their browsers reconnect to another replica). */
export type HubEvent = { type: 'change'; change: Change } | { type: 'resync' } | { type: 'closed' };
export type HubSubscriber = (event: HubEvent) => void;

export interface ChangeHub {
  /** Adds a subscriber (starting the feed if needed); returns its unsubscribe function. */
  subscribe(subscriber: HubSubscriber): () => void;
  /** Resolves once the feed reads (the first time; later restarts announce themselves as `resync`). */
  ready(): Promise<void>;
  /** Subscribers now, for tests and metrics. */
  subscriberCount(): number;
  /** Ends every subscriber's stream (the feed is the process's: closed with it). */
  close(): Promise<void>;
}

/** Which console notification a changed row is, by table: its kind, and its project (null: the fleet's, operators only). */
const TABLES: Record<string, { k: ChangeKind; project: 'project_id' | 'machine' | null }> = {
  machines: { k: 'machine', project: 'project_id' },
  machine_allocations: { k: 'allocation', project: 'machine' },
  provider_operations: { k: 'operation', project: 'machine' },
  machine_capacity: { k: 'capacity', project: null },
  networks: { k: 'network', project: 'project_id' },
  ip_pools: { k: 'network', project: 'project_id' },
  ip_claims: { k: 'claim', project: 'project_id' },
  ip_allocations: { k: 'claim', project: 'project_id' },
  pod_leases: { k: 'lease', project: 'project_id' },
  clusters: { k: 'lease', project: 'project_id' },
  allowance_buckets: { k: 'bucket', project: 'project_id' },
  resource_grants: { k: 'quota', project: 'project_id' },
  resource_claims: { k: 'quota', project: 'project_id' },
  quota_increase_requests: { k: 'quota', project: 'project_id' },
  invitations: { k: 'invitation', project: 'project_id' },
  memberships: { k: 'invitation', project: 'project_id' },
};

const machineProject = z.object({ project_id: z.string().nullable() });

export function createChangeHub(feed: ChangeFeed, db: DbOrTx): ChangeHub {
  const subscribers = new Set<HubSubscriber>();
  /** Machines' projects (allocations and operations name their machine only). */
  const projectOfMachine = new Map<string, string | null>();
  let queue: Promise<unknown> = Promise.resolve();
  let unsubscribeFeed: (() => void) | undefined;
  let closed = false;

  const emit = (event: HubEvent) => {
    for (const subscriber of subscribers) {
      try {
        subscriber(event);
      } catch (error) {
        log('warn', `live subscriber failed: ${(error as Error).message}`);
      }
    }
  };

  async function projectOf(change: FeedChange, row: Record<string, string | null>, how: 'project_id' | 'machine' | null): Promise<string | null> {
    if (how === null) return null;
    if (how === 'project_id') return row.project_id ?? null;
    const machine = row.machine_id;
    if (!machine) return null;
    if (!projectOfMachine.has(machine)) {
      const [found] = await query(db, sql`select project_id::text from machines where id = ${machine}`, machineProject);
      projectOfMachine.set(machine, found?.project_id ?? null);
      if (projectOfMachine.size > 100_000) projectOfMachine.delete(projectOfMachine.keys().next().value as string);
    }
    void change;
    return projectOfMachine.get(machine) ?? null;
  }

  const start = () => {
    if (unsubscribeFeed) return;
    unsubscribeFeed = feed.subscribe((event) => {
      if (event.type === 'reset') queue = queue.then(() => emit({ type: 'resync' }));
      else if (event.type === 'closed') emit({ type: 'closed' });
      else {
        const { txn } = event;
        queue = queue
          .then(async () => {
            if (subscribers.size === 0) return;
            const seen = new Set<string>();
            for (const change of txn.changes) {
              const table = TABLES[change.table];
              const row = change.row ?? change.old;
              if (!table || !row) continue;
              if (change.table === 'machines' && row.id) projectOfMachine.set(row.id, row.project_id ?? null);
              const id = row.id ?? row.machine_id ?? row.project_id ?? '';
              const key = `${table.k}:${id}`;
              if (!id || seen.has(key)) continue;
              seen.add(key);
              emit({ type: 'change', change: { k: table.k, id, p: await projectOf(change, row, table.project) } });
            }
          })
          .catch((error) => log('warn', `live updates: ${(error as Error).message}`));
      }
    });
  };

  return {
    subscribe(subscriber) {
      subscribers.add(subscriber);
      start();
      return () => {
        subscribers.delete(subscriber);
      };
    },
    ready: () => (start(), feed.ready()),
    subscriberCount: () => subscribers.size,
    async close() {
      if (closed) return;
      closed = true;
      emit({ type: 'closed' });
      subscribers.clear();
      unsubscribeFeed?.();
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
 * The process-wide hub over the process's change feed (kept on `globalThis`: Next may load this
 * module in more than one bundle, and there must be one feed per process).
 */
export function changeHub(): ChangeHub {
  if (!g.__meridianChangeHub) g.__meridianChangeHub = createChangeHub(changeFeed(), getDb());
  return g.__meridianChangeHub;
}
