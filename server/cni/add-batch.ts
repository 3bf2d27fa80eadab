import { sql } from 'drizzle-orm';
import { Batcher, jsonFunctionOutcome, laneOf, lockOrder, perPool, type Outcome } from '@/db/batch';
import type { Db } from '@/db/client';

/**
 * CNI ADDs in batches (db/batch.ts): pod churn arrives as bursts of ADDs from many nodes at once,
 * and the ADDs that arrive while earlier ones are in flight go together as one
 * `cni_lease_add_many` statement (migration 0016), acknowledged once that batch has committed.
 *
 * An ADD fails inside a batch only on the unexpected (a lost race on its attachment key, its
 * cluster deleted meanwhile); the batch is then undone as a whole and each of its ADDs runs again
 * as a statement of its own, so each caller gets its own ADD's outcome.
 */

/** What `cni_lease_add` takes for one ADD (server/cni/leases.ts builds it). */
export interface LeaseAddArgs {
  cluster: string;
  node: string;
  [key: string]: unknown;
}

/** Lanes of ADD batches in flight at once: two keep both cores busy (more contend more than they gain: bench/cni-add). */
const LANES = 2;

const batcher = perPool(
  (db) =>
    new Batcher<LeaseAddArgs, unknown>(
      async (items) => {
        if (items.length === 1) return [await jsonFunctionOutcome(db, 'cni_lease_add', items[0])];
        // One lock order for every batch: node blocks are taken cluster by cluster, node by node.
        const order = lockOrder(items, (a) => [a.cluster, a.node]);
        try {
          const [{ results }] = (await db.execute(
            sql`select cni_lease_add_many(${JSON.stringify(order.map((i) => items[i]))}::jsonb) as results`,
          )) as unknown as { results: unknown[] }[];
          const outcomes: Outcome<unknown>[] = new Array(items.length);
          order.forEach((i, k) => (outcomes[i] = { value: results[k] }));
          return outcomes;
        } catch {
          return Promise.all(items.map((args) => jsonFunctionOutcome(db, 'cni_lease_add', args)));
        }
      },
      // A node's ADDs share a lane (they lock the node's blocks): lanes never wait on each other.
      { maxBatch: 64, maxInFlight: 1, lane: (args) => laneOf(LANES, args.cluster, args.node) },
    ),
);

/** Runs one `cni_lease_add` in `db`'s next batch and returns its result (or its own statement's error). */
export function addInBatch<R>(db: Db, args: LeaseAddArgs): Promise<R> {
  return batcher(db).submit(args) as Promise<R>;
}
