/**
 * Pod churn on a dual-stack network: many nodes' ADDs (batched, carving small blocks ahead of need),
 * DELs, GC runs and the return of emptied blocks (what the `cni__return_block` job does), all at
 * once, for several seconds, through the domain functions the REST handlers call. None of them may
 * deadlock (PostgreSQL's count of deadlocks in this file's own database stays unchanged: a deadlock
 * victim is retried after the 1 s deadlock timeout, so an ADD that met one takes a second), and
 * afterwards the books agree: no address twice, pool counters equal to their live allocations,
 * every lease with its allocation. ADD latency (p50, p99, max) is printed, never asserted: it
 * measures the machine as much as the code (bench/cni-add measures it against a baseline).
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createDb, type Db, type DbHandle } from '@/db/client';
import { systemActor } from '@/server/audit/events';
import { createNetwork } from '@/server/ipam/networks';
import { ownDatabase } from '@/test/own-database';
import { makeProject } from '@/test/fixtures';
import { checkIpam } from '@/test/system/invariants';
import { createCluster, findCluster } from './clusters';
import { addLease, gcLeases, releaseLeases, returnNodeBlockIfEmpty, type ClusterRef } from './leases';

const actor = systemActor('test');
const CHURN_MS = 12_000;
const NODES = 6;
/** Pods each node keeps running: ADDs and DELs alternate around it. */
const PODS_PER_NODE = 20;
const WORKERS_PER_NODE = 3;

let handle: DbHandle;
let dropDatabase: () => Promise<void>;

/** A database of this file's own, so that its deadlock count is this test's alone. */
beforeAll(async () => {
  const own = await ownDatabase('meridian_churn');
  dropDatabase = own.drop;
  handle = createDb(own.url, { max: 20, applicationName: 'meridian-churn-test' });
});

afterAll(async () => {
  await handle?.close();
  await dropDatabase?.();
});

type Row = Record<string, unknown>;
const rows = async <T extends Row>(db: Db, q: ReturnType<typeof sql>) => (await db.execute(q)) as unknown as T[];

/** This database's deadlocks so far, once every backend has reported its statistics. */
async function deadlocks(db: Db): Promise<number> {
  // Backends report their counts when idle, at most a second late.
  await new Promise((r) => setTimeout(r, 1_500));
  await db.execute(sql`select pg_stat_clear_snapshot()`);
  const [{ n }] = await rows<{ n: number }>(db, sql`select deadlocks::int as n from pg_stat_database where datname = current_database()`);
  return n;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

describe('CNI churn', () => {
  test('ADD, DEL, GC and block returns at once on a dual-stack network: no deadlock, exact books', async () => {
    const db = handle.db;
    const { project } = await makeProject(db);
    await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '10.70.0.0/16' }, { cidr: 'fd00:70::/104' }] }, actor);
    // Small blocks (/28: 13 pods, /124: 14): nodes carve, fill and empty blocks all the time.
    await createCluster(db, project.id, { name: 'churn', network: 'vpc', nodeBlockPrefixV4: 28, nodeBlockPrefixV6: 124 }, actor);
    const cluster: ClusterRef = await findCluster(db, project.id, 'churn');
    const before = await deadlocks(db);

    const key = (node: number, id: string) => ({ cniNetwork: 'k8s', containerId: id, ifname: 'eth0', node: `node-${node}` });
    /** Per node: the containers it runs (ADD answered, DEL not sent yet). */
    const running = Array.from({ length: NODES }, () => new Set<string>());
    const addMs: number[] = [];
    const failures: string[] = [];
    const stopAt = Date.now() + CHURN_MS;
    let serial = 0;

    const podWorker = async (node: number) => {
      while (Date.now() < stopAt) {
        const pods = running[node];
        if (pods.size < PODS_PER_NODE || Math.random() < 0.5) {
          const id = `c${serial++}`;
          const t = performance.now();
          try {
            await addLease(db, cluster, key(node, id), actor);
            addMs.push(performance.now() - t);
            // Now and then a pod's DEL never comes: GC finds its lease.
            if (Math.random() < 0.9) pods.add(id);
          } catch (e) {
            failures.push(`ADD: ${String(e)} ${String((e as { cause?: unknown }).cause)}`);
          }
        } else {
          const id = [...pods][Math.floor(Math.random() * pods.size)];
          pods.delete(id);
          try {
            await releaseLeases(db, cluster, { key: key(node, id) }, actor);
          } catch (e) {
            failures.push(`DEL: ${String(e)} ${String((e as { cause?: unknown }).cause)}`);
          }
        }
      }
    };
    const gcWorker = async () => {
      for (let node = 0; Date.now() < stopAt; node = (node + 1) % NODES) {
        try {
          const valid = [...running[node]].map((containerID) => ({ containerID, ifname: 'eth0' }));
          await gcLeases(db, cluster, { cniNetwork: 'k8s', node: `node-${node}`, validAttachments: valid }, 1, actor);
        } catch (e) {
          failures.push(`GC: ${String(e)} ${String((e as { cause?: unknown }).cause)}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    /**
     * What `cni__return_block` does once a block's grace period is over, for every empty block that
     * is a few seconds old (one carved a moment ago is about to be used by the ADD that carved it).
     */
    const returnWorker = async () => {
      while (Date.now() < stopAt) {
        const empty = await rows<{ id: string }>(
          db,
          sql`select b.pool_id as id from node_blocks b join ip_pools p on p.id = b.pool_id where b.cluster_id = ${cluster.id} and p.allocated = 0 and b.created_at < now() - interval '2 seconds'`,
        );
        await Promise.all(
          empty.map((b) =>
            returnNodeBlockIfEmpty(db, b.id).catch((e: unknown) => {
              failures.push(`return: ${String(e)} ${String((e as { cause?: unknown }).cause)}`);
            }),
          ),
        );
        await new Promise((r) => setTimeout(r, 30));
      }
    };
    await Promise.all([...Array.from({ length: NODES * WORKERS_PER_NODE }, (_, i) => podWorker(i % NODES)), gcWorker(), returnWorker()]);

    const after = await deadlocks(db);
    const sorted = [...addMs].sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const p99 = percentile(sorted, 99);
    console.log(
      `churn: ${addMs.length} ADDs, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms; deadlocks ${after - before}`,
    );
    expect(failures).toEqual([]);
    expect(addMs.length).toBeGreaterThan(500);
    expect(after - before, 'deadlocks during the churn').toBe(0);
    expect(await checkIpam(db)).toEqual([]);
    const [counts] = await rows<{ leases: number; allocations: number }>(
      db,
      sql`select (select count(*)::int from pod_leases where cluster_id = ${cluster.id}) as leases,
                 (select count(*)::int from ip_allocations where project_id = ${project.id} and kind = 'PodAddress') as allocations`,
    );
    expect(counts.leases).toBe(counts.allocations);
  }, 120_000);
});
