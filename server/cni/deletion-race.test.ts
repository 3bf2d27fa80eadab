/**
 * Deleting a cluster, its network or its project while its nodes are busy adding pods: every ADD
 * either lands before the deletion (and the deletion releases its lease) or is refused with a 4xx;
 * afterwards nothing of the cluster is left in the books (leases, node blocks, allocations, pool
 * counters), so the network can be deleted.
 */
import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createNetwork, deleteNetwork } from '@/server/ipam/networks';
import { requestProjectDeletion, runDeletionPass } from '@/server/workflows/project-deletion';
import { createApiToken } from '@/server/tenancy/tokens';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { asDomainError } from '@/server/errors';
import { errorTable } from '@/server/error-table';
import { createCluster, findCluster } from './clusters';
import { addLease } from './leases';
import { routeHandlers } from '@/test/rest';

const clusterRoute = routeHandlers('/api/v1/projects/{project}/clusters/{cluster}');
const cniRoute = routeHandlers('/api/v1/projects/{project}/clusters/{cluster}/cni/{command}');

const actor = systemActor('test');
const ROUNDS = 20;
const ADDS = 32;
const WORKERS = 8;

type Db = ReturnType<typeof testDb>['db'];
const rows = async <T>(db: Db, q: ReturnType<typeof sql>) => (await db.execute(q)) as unknown as T[];

async function setup() {
  const { db } = testDb();
  const { project } = await makeProject(db);
  // /28 node blocks (13 pods each): the racing ADDs fill blocks and carve new ones, ahead of need too.
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '10.60.0.0/20' }] }, actor);
  const wide = await createApiToken(db, { projectId: project.id, name: 'ops' }, actor);
  const request = async (handler: typeof cniRoute.POST, params: Record<string, string>, secret: string, method: string, body?: unknown) => {
    const res = await handler(
      new Request('http://localhost/x', {
        method,
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
      { params: Promise.resolve({ project: project.slug, ...params }) },
    );
    return { status: res.status, body: await res.json() };
  };
  const register = async (name: string) => {
    await createCluster(db, project.id, { name, network: 'vpc', nodeBlockPrefixV4: 28 }, actor);
    return createApiToken(db, { projectId: project.id, name: `${name}-nodes`, clusterName: name }, actor);
  };
  /** ADD number `i` through the REST route: odd ones with the project-wide token, even ones with the cluster's, on 3 nodes. */
  const add = (cluster: string, clusterSecret: string, round: number) => (i: number) =>
    request(cniRoute.POST, { cluster, command: 'add' }, i % 2 ? wide.secret : clusterSecret, 'POST', {
      cniNetwork: 'k8s',
      containerId: `r${round}c${i}`,
      ifname: 'eth0',
      node: `n${i % 3}`,
    });
  const deleteViaRest = (cluster: string) => request(clusterRoute.DELETE as typeof cniRoute.POST, { cluster }, wide.secret, 'DELETE');
  return { db, project, register, add, deleteViaRest };
}

/** What the project's books hold: nothing, once every cluster is deleted. */
async function books(db: Db, projectId: string) {
  const [b] = await rows<Record<string, number | string>>(
    db,
    sql`
    select (select count(*)::int from pod_leases where project_id = ${projectId}) as leases,
           (select count(*)::int from node_blocks b join ip_pools p on p.id = b.pool_id where p.project_id = ${projectId}) as node_blocks,
           (select count(*)::int from ip_pools where project_id = ${projectId} and kind = 'NodeBlock') as block_pools,
           (select count(*)::int from ip_allocations where project_id = ${projectId} and kind in ('PodAddress', 'PoolCarve')) as allocations,
           (select coalesce(sum(allocated), 0)::text from ip_pools where project_id = ${projectId}) as allocated,
           (select coalesce(sum(allocation_count), 0)::int from ip_pools where project_id = ${projectId}) as allocation_count`,
  );
  return b;
}
const EMPTY = { leases: 0, node_blocks: 0, block_pools: 0, allocations: 0, allocated: '0', allocation_count: 0 };

/**
 * Runs ADDS ADDs, WORKERS at a time (each worker sends its next ADD when its last one answered), and
 * starts `deletion` once `after` of them have answered: ADDs have landed before it, are in flight
 * while it runs, and come after it.
 */
async function race<T>(add: (i: number) => Promise<{ status: number; body: unknown }>, after: number, deletion: () => Promise<T>) {
  const answers: { status: number; body: unknown }[] = [];
  let next = 0;
  let answered = 0;
  let start!: () => void;
  const started = new Promise<void>((resolve) => (start = resolve));
  if (after === 0) start();
  const worker = async () => {
    while (next < ADDS) {
      const i = next++;
      answers[i] = await add(i);
      if (++answered === after) start();
    }
  };
  const deleted = started.then(deletion);
  await Promise.all(Array.from({ length: WORKERS }, worker));
  return { answers, deleted: await deleted };
}

describe('deletions racing CNI ADDs', () => {
  test(`cluster DELETE among ${ADDS} concurrent ADDs, ${ROUNDS} rounds: no 5xx, every landed lease released by it, nothing left, the network deletes`, async () => {
    const { db, project, register, add, deleteViaRest } = await setup();
    let landed = 0;
    let refused = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // The same name every round: the cluster is registered again after each deletion.
      const token = await register('k');
      const { answers, deleted } = await race(add('k', token.secret, round), (round * 3) % 13, () => deleteViaRest('k'));
      const statuses = answers.map((a) => a.status);
      landed += statuses.filter((s) => s === 200).length;
      refused += statuses.filter((s) => s !== 200).length;
      expect(
        statuses.filter((s) => ![200, 401, 404].includes(s)),
        `round ${round}: ${JSON.stringify(answers.filter((a) => a.status >= 500))}`,
      ).toEqual([]);
      expect(deleted.status, `round ${round}`).toBe(200);
      // Each ADD that answered 200 holds one lease, and the DELETE released exactly those.
      expect((deleted.body as { releasedLeases: number }).releasedLeases, `round ${round}`).toBe(statuses.filter((s) => s === 200).length);
      expect(await books(db, project.id), `round ${round}`).toEqual(EMPTY);
    }
    // The deletions did land among the ADDs: some before them, some refused after.
    expect(landed).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    expect(await deleteNetwork(db, project.id, 'vpc', actor)).toEqual({ name: 'vpc', deleted: true });
  }, 300_000);

  test(`network DELETE among busy clusters, ${ROUNDS} rounds: refused with 409 while a cluster is attached, never 500; deletes once its clusters are deleted`, async () => {
    const { db, project, register, add, deleteViaRest } = await setup();
    let refusedDeletes = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const token = await register('k');
      const { answers, deleted } = await race(add('k', token.secret, round), (round * 3) % 13, () =>
        deleteNetwork(db, project.id, 'vpc', actor).then(
          () => ({ deleted: true }),
          (e: { code?: string; message?: string }) => ({ code: e.code, message: e.message }),
        ),
      );
      expect(
        answers.map((a) => a.status).filter((s) => s !== 200),
        `round ${round}`,
      ).toEqual([]);
      // A network with a cluster attached stays, whether the cluster has pods yet or not.
      expect(deleted, `round ${round}`).toMatchObject({ code: 'Conflict', message: expect.stringMatching(/cluster/) });
      refusedDeletes++;
      const cleared = await deleteViaRest('k');
      expect(cleared.status).toBe(200);
      expect((cleared.body as { releasedLeases: number }).releasedLeases).toBe(ADDS);
      expect(await books(db, project.id), `round ${round}`).toEqual(EMPTY);
    }
    expect(refusedDeletes).toBe(ROUNDS);
    expect(await deleteNetwork(db, project.id, 'vpc', actor)).toEqual({ name: 'vpc', deleted: true });
  }, 300_000);

  test(`project deletion among ${ADDS} concurrent ADDs, ${ROUNDS} rounds: no 5xx, one pass deletes everything`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { db, project, register, add } = await setup();
      const token = await register('k');
      const cluster = await findCluster(db, project.id, 'k');
      // Every third ADD from an internal caller (no token to be revoked): only the cluster's lock stops it.
      const mixed = (i: number) =>
        i % 3
          ? add('k', token.secret, round)(i)
          : addLease(db, cluster, { cniNetwork: 'k8s', containerId: `r${round}c${i}`, ifname: 'eth0', node: `n${i % 3}` }, actor).then(
              (ips) => ({ status: 200, body: { ips } }),
              (e: unknown) => {
                const refused = asDomainError(e);
                return { status: refused ? errorTable[refused.code].http : 500, body: String(e) };
              },
            );
      const { answers, deleted } = await race(mixed, (round * 3) % 13, async () => {
        await requestProjectDeletion(db, project.id, actor);
        return runDeletionPass(db, project.id);
      });
      expect(
        answers.filter((a) => ![200, 401, 404, 409].includes(a.status)),
        `round ${round}`,
      ).toEqual([]);
      expect(deleted, `round ${round}`).toEqual({ type: 'deleted' });
      const [left] = await rows<Record<string, number>>(
        db,
        sql`
        select (select count(*)::int from projects where id = ${project.id}) as projects,
               (select count(*)::int from ip_pools where project_id = ${project.id}) as pools,
               (select count(*)::int from ip_allocations where project_id = ${project.id}) as allocations,
               (select count(*)::int from pod_leases where project_id = ${project.id}) as leases`,
      );
      expect(left, `round ${round}`).toEqual({ projects: 0, pools: 0, allocations: 0, leases: 0 });
    }
  }, 300_000);
});
