import { sqlFunctionBatches } from '@/db/batch';
import type { Db } from '@/db/client';
import { cniAddLanes } from '@/server/env';

/**
 * CNI ADDs in batches (db/batch.ts): pod churn arrives as bursts of ADDs from many nodes at once,
 * and the ADDs that arrive while earlier ones are in flight go together as one
 * `cni_lease_add_many` statement, acknowledged once that batch has committed. The batch is
 * set-based (server/cni/sql/cni_lease_add_many.sql): a few statements for the whole batch, not a dozen per ADD.
 *
 * An ADD fails inside a batch only on the unexpected (a lost race on its attachment key, its
 * cluster deleted meanwhile); the batch is then undone as a whole and each of its ADDs runs again
 * as a statement of its own, so each caller gets its own ADD's outcome.
 */

/** What `cni_lease_add` takes for one ADD (server/cni/leases.ts builds it). */
export interface LeaseAddArgs {
  cluster: string;
  node: string;
  /** The api_tokens id the ADD came with: the ADD writes nothing if that token is revoked by the time it is checked. */
  token?: string;
  [key: string]: unknown;
}

const addLeases = sqlFunctionBatches<LeaseAddArgs>({
  // cni_lease_add and cni_lease_add_many, each ADD refused if the token it names is revoked (server/cni/sql/cni_lease_add_confirmed.sql).
  one: 'cni_lease_add_confirmed',
  many: 'cni_lease_add_many_confirmed',
  // One lock order for every batch: node blocks are taken cluster by cluster, node by node.
  lockKeys: (a) => [a.cluster, a.node],
  // A node's ADDs share a lane (they lock the node's blocks): lanes never wait on each other.
  laneKeys: (a) => [a.cluster, a.node],
  // Lanes of ADD batches in flight at once: CNI_ADD_LANES, by default sized from the main pool (server/env.ts).
  lanes: cniAddLanes,
  maxBatch: 64,
});

/** Runs one `cni_lease_add` in `db`'s next batch and returns its result (or its own statement's error). */
export function addInBatch<R>(db: Db, args: LeaseAddArgs): Promise<R> {
  return addLeases(db, args) as Promise<R>;
}
