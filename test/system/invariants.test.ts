/**
 * The system tests' checks can fail: on a small world built through the domain functions, every
 * check passes, and then each kind of damage is reported by the check meant to catch it.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createDb, type DbHandle } from '@/db/client';
import { migrateDatabase } from '@/db/migrate';
import { systemActor } from '@/server/audit/events';
import { createCluster, findCluster } from '@/server/cni/clusters';
import { addLease } from '@/server/cni/leases';
import { createClaim } from '@/server/ipam/claims';
import { createNetwork } from '@/server/ipam/networks';
import { createOrganization } from '@/server/tenancy/projects';
import { createProject } from '@/server/workflows/project-creation';
import { freshDatabase, type JobRun } from './harness';
import { enqueueJob } from '@/server/jobs/enqueue';
import { checkFleet, checkIpam, checkJobs, checkQueue, checkQuota } from './invariants';
import { checkLedger, Ledger } from './ledger';

const actor = systemActor('test');
let handle: DbHandle;
let drop: () => Promise<void>;
let projectId: string;

beforeAll(async () => {
  const database = await freshDatabase();
  drop = database.drop;
  await migrateDatabase(database.url);
  handle = createDb(database.url, { max: 4 });
  const { db } = handle;
  const org = await createOrganization(db, { slug: 'inv-org', name: 'inv' }, actor);
  projectId = (await createProject(db, { organizationId: org.id, slug: 'inv', name: 'inv' }, actor)).id;
  await createNetwork(db, projectId, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24' }] }, actor);
  await createNetwork(db, projectId, { name: 'pods', cidrs: [{ cidr: '198.51.100.0/24' }] }, actor);
  await createCluster(db, projectId, { name: 'c1', network: 'pods' }, actor);
  const cluster = await findCluster(db, projectId, 'c1');
  for (const name of ['a', 'b']) await createClaim(db, projectId, { name, network: 'vpc', prefixLength: 28, reclaimPolicy: 'Delete' }, actor);
  for (const containerId of ['x', 'y']) await addLease(db, cluster, { cniNetwork: 'k8s', containerId, ifname: 'eth0', node: 'n1' }, actor);
});

afterAll(async () => {
  await handle?.close();
  await drop?.();
});

/** Damages the books with `damage`, returns what `check` reports, and undoes the damage. */
async function reportedAfter(check: () => Promise<string[]>, damage: string, undo: string): Promise<string[]> {
  await handle.db.execute(sql.raw(damage));
  try {
    return await check();
  } finally {
    await handle.db.execute(sql.raw(undo));
  }
}

test('a sound world passes every check', async () => {
  const { db } = handle;
  expect([...(await checkIpam(db)), ...(await checkQuota(db)), ...(await checkFleet(db))]).toEqual([]);
});

test('each kind of damage is reported', async () => {
  const { db } = handle;
  expect(
    await reportedAfter(
      () => checkIpam(db),
      `update ip_pools set allocated = allocated + 1 where cidr = '192.0.2.0/24'`,
      `update ip_pools set allocated = allocated - 1 where cidr = '192.0.2.0/24'`,
    ),
  ).toEqual([expect.stringContaining('pool counters differ from their allocations'), expect.stringContaining('free + allocated differs from capacity')]);
  expect(
    await reportedAfter(
      () => checkIpam(db),
      `update pod_leases set address = '198.51.100.250/32' where container_id = 'x'`,
      `update pod_leases l set address = a.cidr from ip_allocations a where a.id = l.allocation_id`,
    ),
  ).toEqual([expect.stringContaining('lease without its own allocation')]);
  expect(
    await reportedAfter(
      () => checkQuota(db),
      `update allowance_buckets set allocated = allocated + 1 where resource_type = 'ipam.miloapis.com/ipclaims'`,
      `update allowance_buckets set allocated = allocated - 1 where resource_type = 'ipam.miloapis.com/ipclaims'`,
    ),
  ).toEqual([expect.stringContaining('bucket differs from its grants and live granted claims')]);
  expect(
    await reportedAfter(
      () => checkQuota(db),
      `update resource_claims set released_at = now() where ref_name = 'a'`,
      `update resource_claims set released_at = null where ref_name = 'a'`,
    ),
  ).toEqual([expect.stringContaining('bucket differs'), expect.stringContaining('ipclaim without a live quota claim')]);
});

test('the job checks catch a job run twice and overlapping reconciler runs, not a run cut short by a kill', () => {
  const run = (jobId: string, pid: number, start: number, end?: number): JobRun => ({
    process: `w${pid}`,
    pid,
    jobId,
    task: 'machine__reconcile',
    attempt: 1,
    payload: { machineId: 'm1' },
    start,
    end,
    outcome: end ? 'success' : undefined,
  });
  expect(checkJobs([run('1', 1, 0, 10), run('2', 2, 20, 30)], [])).toEqual([]);
  expect(checkJobs([run('1', 1, 0, 10), run('1', 2, 20, 30)], [])).toEqual([expect.stringContaining('succeeded twice')]);
  expect(checkJobs([run('1', 1, 0, 10), run('1', 2, 20, 30)], [{ process: 'w1', pid: 1, at: 11 }])).toEqual([]);
  expect(checkJobs([run('1', 1, 0, 25), run('2', 2, 20, 30)], [])).toEqual([expect.stringContaining('overlapped')]);
  expect(checkJobs([run('1', 1, 0), run('2', 2, 20, 30)], [{ process: 'w1', pid: 1, at: 5 }])).toEqual([]);
  expect(checkJobs([run('1', 1, 0), run('2', 2, 20, 30)], [])).toEqual([expect.stringContaining('overlapped')]);
});

test('the queue check reports a job that used up its attempts, not one retired while it ran', async () => {
  const { db } = handle;
  for (const key of ['used-up', 'retired', 'marked']) await enqueueJob(db, 'machine__reconcile', { machineId: key }, { jobKey: key, maxAttempts: 5 });
  const fail = (key: string, attempts: number, error: string) =>
    db.execute(sql`update graphile_worker._private_jobs set attempts = ${attempts}, last_error = ${error} where key = ${key}`);
  try {
    expect(await checkQueue(db)).toEqual([]);
    // A retired job: graphile-worker set attempts to the maximum while its second attempt ran.
    await fail('retired', 5, 'connection lost (attempt 2 of 5)');
    expect(await checkQueue(db)).toEqual([]);
    await fail('used-up', 5, 'connection lost (attempt 5 of 5)');
    await fail('marked', 5, 'Manually marked as failed');
    expect(await checkQueue(db)).toEqual([expect.stringContaining('permanently failed job'), expect.stringContaining('permanently failed job')]);
  } finally {
    await db.execute(sql`delete from graphile_worker._private_jobs where key in ('used-up', 'retired', 'marked')`);
  }
});

test('the ledger check catches a lost acknowledgement and a refused request that left something behind', async () => {
  const { db } = handle;
  const ack = (body: unknown) => ({ kind: 'ack' as const, status: 201, body, web: 0 });
  const [{ cidr }] = (await db.execute(sql`select allocated_cidr::text as cidr from ip_claims where name = 'a'`)) as unknown as { cidr: string }[];
  const [{ address }] = (await db.execute(sql`select host(address) as address from pod_leases where container_id = 'x'`)) as unknown as { address: string }[];
  const ledger = new Ledger();
  ledger.claimCreated('a', ack({ status: { allocatedCIDR: cidr } }));
  ledger.leaseAdded('c1', 'x', ack({ ips: [{ address: `${address}/26` }] }));
  ledger.leaseAdded('c1', 'y', { kind: 'unknown', reason: 'reset', web: 0 });
  expect(await checkLedger(db, projectId, ledger, ['Ready'])).toEqual([expect.stringContaining('claim b exists, but no request created it')]);
  ledger.claimCreated('b', { kind: 'refused', status: 403, code: 'QuotaExceeded', message: '', web: 0 });
  ledger.claimCreated('gone', ack({ status: { allocatedCIDR: '192.0.2.240/28' } }));
  expect(await checkLedger(db, projectId, ledger, ['Ready'])).toEqual([
    expect.stringContaining('claim b was refused or deleted, but exists'),
    expect.stringContaining('acknowledged claim gone (192.0.2.240/28) is missing'),
  ]);
});
