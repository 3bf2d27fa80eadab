/**
 * Deleting a cluster far bigger than one request can release: 100,000 leases on 1,000 node blocks,
 * deleted through REST while ADDs race it. The DELETE answers within the request budget (202, the
 * cluster shown with its deletionTimestamp and what is left), the worker finishes it in bounded
 * steps, the network cannot be deleted meanwhile, and afterwards nothing of the cluster is left:
 * no lease, allocation or block, pool counters exact, every racing ADD refused or landed before the
 * deletion and released by it.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { configureDbPool, createDb, type Db, type DbHandle } from '@/db/client';
import { systemActor } from '@/server/audit/events';
import { env } from '@/server/env';
import { createNetwork, deleteNetwork, getNetwork } from '@/server/ipam/networks';
import { createApiToken } from '@/server/tenancy/tokens';
import { startWorker } from '@/server/worker/runner';
import { clusterDelete } from '@/server/worker/tasks/cluster__delete';
import { makeProject } from '@/test/fixtures';
import { ownDatabase } from '@/test/own-database';
import { routeHandlers } from '@/test/rest';
import { checkIpam } from '@/test/system/invariants';
import { createCluster, findCluster } from './clusters';

const actor = systemActor('test');
const BLOCKS = 1_000;
const LEASES_PER_BLOCK = 100;
const NODES = 10;

const clusterRoute = routeHandlers('/api/v1/projects/{project}/clusters/{cluster}');
const networkRoute = routeHandlers('/api/v1/projects/{project}/networks/{name}');
const cniRoute = routeHandlers('/api/v1/projects/{project}/clusters/{cluster}/cni/{command}');

let handle: DbHandle;
let url: string;
let dropDatabase: () => Promise<void>;

beforeAll(async () => {
  const own = await ownDatabase('meridian_big_deletion');
  url = own.url;
  dropDatabase = own.drop;
  // The REST handlers use the process-wide pool: this file's database, before its first use.
  configureDbPool({ url, max: 10, applicationName: 'meridian-big-deletion-rest', statementTimeoutMs: env().DB_REQUEST_TIMEOUT_MS });
  handle = createDb(url, { max: 10, applicationName: 'meridian-big-deletion-test' });
});

afterAll(async () => {
  await handle?.close();
  await dropDatabase?.();
});

type Row = Record<string, unknown>;
const rows = async <T extends Row>(db: Db, q: ReturnType<typeof sql>) => (await db.execute(q)) as unknown as T[];
const uuid = (s: string) => {
  if (!/^[0-9a-f-]{36}$/.test(s)) throw new Error(`not a uuid: ${s}`);
  return s;
};

/**
 * BLOCKS /25 node blocks carved from the network's root pool (as cni_node_block_ensure carves them:
 * the carve, the block's pool with its reservations and free set, its node_blocks row) over NODES
 * nodes, each holding LEASES_PER_BLOCK leases (its lowest addresses, as FirstFit takes them):
 * set-based, a statement per table, in one transaction.
 */
async function seed(db: Db, ids: { project: string; network: string; root: string; cluster: string }) {
  const [project, network, root, cluster] = [ids.project, ids.network, ids.root, ids.cluster].map(uuid);
  await db.execute(
    sql.raw(`
    DO $$
    BEGIN
      CREATE TEMP TABLE seed_block ON COMMIT DROP AS
        SELECT s.i, s.pool, 'node-' || (s.i % ${NODES}) AS node, c.o_cidr AS block, set_masklen(c.o_cidr, 32) AS first
        FROM (SELECT i, gen_random_uuid() AS pool FROM generate_series(0, ${BLOCKS - 1}) AS i) s
        CROSS JOIN LATERAL ipam_allocate('${root}', 25, NULL, 'PoolCarve', NULL, s.pool) AS c;
      INSERT INTO ip_pools (id, project_id, network_id, parent_pool_id, name, kind, cidr, family, min_prefix_length, max_prefix_length,
                            default_prefix_length, strategy, reserve_leading, reserve_trailing, capacity, allocated, allocation_count)
        SELECT pool, '${project}'::uuid, '${network}'::uuid, '${root}'::uuid, 'node-big-' || node || '-' || i, 'NodeBlock', block, 4, 32, 32, 32,
               'FirstFit', 2, 1, 125, ${LEASES_PER_BLOCK}, ${LEASES_PER_BLOCK}
        FROM seed_block;
      INSERT INTO ip_free_blocks (pool_id, cidr, prefix_length)
        SELECT pool, b, masklen(b) FROM seed_block, ipam_range_blocks(first + ${2 + LEASES_PER_BLOCK}, set_masklen(broadcast(block), 32) - 1) AS b;
      INSERT INTO ip_allocations (pool_id, project_id, network_id, cidr, kind, size)
        SELECT pool, '${project}'::uuid, '${network}'::uuid, set_masklen(first, 31)::cidr, 'Reservation', 2 FROM seed_block
        UNION ALL
        SELECT pool, '${project}'::uuid, '${network}'::uuid, set_masklen(broadcast(block), 32)::cidr, 'Reservation', 1 FROM seed_block;
      INSERT INTO node_blocks (pool_id, cluster_id, node, family) SELECT pool, '${cluster}'::uuid, node, 4 FROM seed_block;
      WITH a AS (
        INSERT INTO ip_allocations (pool_id, project_id, network_id, cidr, kind, size)
          SELECT pool, '${project}'::uuid, '${network}'::uuid, set_masklen(first + 2 + k, 32)::cidr, 'PodAddress', 1
          FROM seed_block, generate_series(0, ${LEASES_PER_BLOCK - 1}) AS k
          RETURNING id, pool_id, cidr
      )
      INSERT INTO pod_leases (project_id, cluster_id, cni_network, container_id, ifname, family, pool_id, allocation_id, address, node)
        SELECT '${project}'::uuid, '${cluster}'::uuid, 'k8s', 'seed-' || b.i || '-' || host(a.cidr), 'eth0', 4, a.pool_id, a.id, a.cidr, b.node
        FROM a JOIN seed_block b ON b.pool = a.pool_id;
    END $$`),
  );
  await db.execute(sql`analyze pod_leases`);
  await db.execute(sql`analyze ip_allocations`);
}

async function request(
  handler: (req?: Request, context?: { params: Promise<Record<string, string>> }) => Promise<Response>,
  params: Record<string, string>,
  secret: string,
  method: string,
  body?: unknown,
) {
  const res = await handler(
    new Request('http://localhost/x', {
      method,
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
    { params: Promise.resolve(params) },
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('deleting a big cluster', () => {
  test(`${BLOCKS * LEASES_PER_BLOCK} leases on ${BLOCKS} blocks, deleted through REST while ADDs race it: 202 within the budget, finished by the worker, nothing left`, async () => {
    const db = handle.db;
    const { project } = await makeProject(db);
    await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '10.64.0.0/14' }] }, actor);
    await createCluster(db, project.id, { name: 'big', network: 'vpc', nodeBlockPrefixV4: 25 }, actor);
    const cluster = await findCluster(db, project.id, 'big');
    const root = (await getNetwork(db, project.id, 'vpc')).pools.find((p) => p.kind === 'Root')!;
    const wide = await createApiToken(db, { projectId: project.id, name: 'ops' }, actor);
    const nodesToken = await createApiToken(db, { projectId: project.id, name: 'big-nodes', clusterName: 'big' }, actor);

    let t = performance.now();
    await seed(db, { project: project.id, network: cluster.networkId, root: root.id, cluster: cluster.id });
    console.log(`seeded ${BLOCKS * LEASES_PER_BLOCK} leases on ${BLOCKS} blocks in ${(performance.now() - t).toFixed(0)} ms`);
    const [seeded] = await rows<{ leases: number; root: string }>(
      db,
      sql`select (select count(*)::int from pod_leases where cluster_id = ${cluster.id}) as leases, (select allocated::text from ip_pools where id = ${root.id}) as root`,
    );
    expect(seeded).toEqual({ leases: BLOCKS * LEASES_PER_BLOCK, root: String(BLOCKS * 128) });

    // ADDs racing the deletion through the REST route, with the cluster's token and a project-wide
    // one, on the seeded nodes (whose blocks are full: they carve) and on new ones.
    const answers: { status: number; body: Record<string, unknown>; at: number }[] = [];
    let racing = true;
    let serial = 0;
    const adder = async (w: number) => {
      while (racing) {
        const i = serial++;
        const answer = await request(
          cniRoute.POST,
          { project: project.slug, cluster: 'big', command: 'add' },
          i % 2 ? wide.secret : nodesToken.secret,
          'POST',
          { cniNetwork: 'k8s', containerId: `race-${i}`, ifname: 'eth0', node: `node-${(w + i) % (NODES + 2)}` },
        );
        answers.push({ ...answer, at: performance.now() });
        // A steady stream, not a flood: the test is about correctness under the race.
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    const adders = Array.from({ length: 3 }, (_, w) => adder(w));
    // Let some land before the deletion.
    while (answers.filter((a) => a.status === 200).length < 8) await new Promise((r) => setTimeout(r, 20));

    t = performance.now();
    const deleted = await request(clusterRoute.DELETE, { project: project.slug, cluster: 'big' }, wide.secret, 'DELETE');
    const deleteMs = performance.now() - t;
    const deletedAt = performance.now();
    console.log(`DELETE answered ${deleted.status} in ${deleteMs.toFixed(0)} ms: ${JSON.stringify(deleted.body)}`);
    expect(deleteMs).toBeLessThan(env().DB_REQUEST_TIMEOUT_MS);
    expect(deleted.status).toBe(202);
    expect(deleted.body).toMatchObject({
      name: 'big',
      deletionTimestamp: expect.any(String),
      remaining: { leases: expect.any(Number), blocks: expect.any(Number) },
    });
    const remaining = deleted.body.remaining as { leases: number; blocks: number };
    expect(remaining.leases).toBeGreaterThan(0);
    expect(remaining.blocks).toBeGreaterThan(0);

    // Meanwhile: the cluster shows its deletion, and its network cannot be deleted.
    const shown = await request(clusterRoute.GET, { project: project.slug, cluster: 'big' }, wide.secret, 'GET');
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ name: 'big', deletionTimestamp: deleted.body.deletionTimestamp });
    t = performance.now();
    const networkDelete = await request(networkRoute.DELETE, { project: project.slug, name: 'vpc' }, wide.secret, 'DELETE');
    expect(performance.now() - t).toBeLessThan(env().DB_REQUEST_TIMEOUT_MS);
    expect(networkDelete).toMatchObject({ status: 409, body: { error: { code: 'Conflict', message: expect.stringMatching(/1 cluster/) } } });
    // Asking again answers the same, within the budget.
    t = performance.now();
    const again = await request(clusterRoute.DELETE, { project: project.slug, cluster: 'big' }, wide.secret, 'DELETE');
    expect(performance.now() - t).toBeLessThan(env().DB_REQUEST_TIMEOUT_MS);
    expect(again.status).toBe(202);
    expect(again.body.deletionTimestamp).toBe(deleted.body.deletionTimestamp);

    // The worker finishes it.
    const worker = await startWorker(handle, url, { concurrency: 1, tasks: { cluster__delete: clusterDelete } });
    t = performance.now();
    try {
      for (;;) {
        const [{ n }] = await rows<{ n: number }>(db, sql`select count(*)::int as n from clusters where id = ${cluster.id}`);
        if (n === 0) break;
        expect(performance.now() - t, 'the worker finishes the deletion').toBeLessThan(45_000);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      racing = false;
      await Promise.all(adders);
      await worker.stop();
    }
    console.log(`the worker finished the deletion in ${(performance.now() - t).toFixed(0)} ms; ${answers.length} racing ADDs`);

    // Every racing ADD landed before the deletion (and was released by it) or was refused with a 4xx.
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => ![200, 401, 404].includes(s))).toEqual([]);
    expect(answers.filter((a) => a.status === 200 && a.at > deletedAt)).toEqual([]);
    expect(statuses.filter((s) => s !== 200).length).toBeGreaterThan(0);

    const [left] = await rows<Record<string, number | string>>(
      db,
      sql`
      select (select count(*)::int from pod_leases where project_id = ${project.id}) as leases,
             (select count(*)::int from node_blocks where cluster_id = ${cluster.id}) as node_blocks,
             (select count(*)::int from ip_pools where project_id = ${project.id} and kind = 'NodeBlock') as block_pools,
             (select count(*)::int from ip_allocations where project_id = ${project.id} and kind in ('PodAddress', 'PoolCarve')) as allocations,
             (select allocated::text from ip_pools where id = ${root.id}) as root_allocated,
             (select allocation_count::int from ip_pools where id = ${root.id}) as root_allocations,
             (select count(*)::int from graphile_worker.jobs where task_identifier = 'cluster__delete') as pending_jobs`,
    );
    expect(left).toEqual({ leases: 0, node_blocks: 0, block_pools: 0, allocations: 0, root_allocated: '0', root_allocations: 0, pending_jobs: 0 });
    expect(await checkIpam(db)).toEqual([]);
    // The root's free set is whole again: one free block, the network itself.
    const free = await rows<{ cidr: string }>(db, sql`select cidr::text as cidr from ip_free_blocks where pool_id = ${root.id}`);
    expect(free).toEqual([{ cidr: '10.64.0.0/14' }]);
    // The cluster is gone; its network deletes now.
    const after = await request(clusterRoute.GET, { project: project.slug, cluster: 'big' }, wide.secret, 'GET');
    expect(after.status).toBe(404);
    expect(await deleteNetwork(db, project.id, 'vpc', actor)).toEqual({ name: 'vpc', deleted: true });
  }, 120_000);
});
