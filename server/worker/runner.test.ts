/**
 * The worker on real PostgreSQL (a database of its own, so that this worker runs no other test's
 * jobs): a job that a live worker holds for longer than the dead-worker threshold stays its own —
 * it is not unlocked and run a second time beside itself; and a job's failure is recorded once the
 * database answers again when the connection recording it is lost, the worker running on; and a
 * job locked in this worker's name that it was never handed (the statement that took it committed,
 * its answer was lost) is unlocked and run, with the named queue it held; and a job whose database
 * connection is lost under it runs again, in the same attempt, once the database is back.
 */
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { createDb, type DbHandle } from '@/db/client';
import { migrateDatabase } from '@/db/migrate';
import { systemActor } from '@/server/audit/events';
import { createClaim, deleteClaim } from '@/server/ipam/claims';
import { createNetwork } from '@/server/ipam/networks';
import { makeProject } from '@/test/fixtures';
import { enqueueJob } from '@/server/jobs/enqueue';
import { TcpProxy } from '@/test/tcp-proxy';
import { startWorker } from './runner';

const actor = systemActor('test');
const name = `meridian_worker_test_${Date.now()}_${process.pid}`;
let url: string;
let handle: DbHandle;

beforeAll(async () => {
  const admin = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  await admin.end();
  const u = new URL(inject('databaseUrl'));
  u.pathname = `/${name}`;
  url = u.toString();
  await migrateDatabase(url);
  handle = createDb(url, { max: 6 });
});

afterAll(async () => {
  await handle?.close();
  const admin = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a job a live worker holds past the dead-worker threshold (30 s) is not unlocked and run again', async () => {
  const { db } = handle;
  // A retained allocation whose expiry job will wait on its pool's row lock, held here.
  const { project } = await makeProject(db);
  await createNetwork(db, project.id, { name: 'n', cidrs: [{ cidr: '192.0.2.0/24' }] }, actor);
  await createClaim(db, project.id, { name: 'kept', network: 'n', prefixLength: 28, reclaimPolicy: 'Retain' }, actor);
  await deleteClaim(db, project.id, 'kept', actor);
  const [alloc] = (await db.execute(sql`
    update ip_allocations set retained_until = now() - interval '1 second' where retained_name = 'kept' returning id, pool_id`)) as unknown as {
    id: string;
    pool_id: string;
  }[];
  const blocker = postgres(url, { max: 1, onnotice: () => {} });
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const lockTaken = new Promise<void>((r) => (locked = r));
  const holding = blocker.begin(async (tx) => {
    await tx`select 1 from ip_pools where id = ${alloc.pool_id} for update`;
    locked();
    await released;
  });
  await lockTaken;

  const worker = await startWorker(handle, url, { concurrency: 2 });
  try {
    const key = `ipallocation:${alloc.id}`;
    await enqueueJob(db, 'ipallocation__expire', { allocationId: alloc.id }, { jobKey: key });
    const lockedJob = async () =>
      (
        (await db.execute(sql`select id, locked_by, attempts from graphile_worker._private_jobs where key = ${key} and locked_at is not null`)) as unknown as {
          id: string;
          locked_by: string;
          attempts: number;
        }[]
      )[0];
    let job = await lockedJob();
    for (let i = 0; i < 100 && !job; i++) job = (await sleep(100), await lockedJob());
    expect(job, 'the worker took the job').toBeDefined();
    // Past the threshold, a heartbeat and a margin: still locked by the same worker, first attempt.
    await sleep(40_000);
    expect(await lockedJob()).toEqual({ id: job!.id, locked_by: job!.locked_by, attempts: 1 });
    release();
    await holding;
    // And the run finishes its work once the pool is free.
    for (let i = 0; i < 100; i++) {
      const [{ n }] = (await db.execute(sql`select count(*)::int as n from ip_allocations where id = ${alloc.id}`)) as unknown as { n: number }[];
      if (n === 0) break;
      await sleep(100);
    }
    const [{ n }] = (await db.execute(sql`select count(*)::int as n from ip_allocations where id = ${alloc.id}`)) as unknown as { n: number }[];
    expect(n).toBe(0);
  } finally {
    release();
    await holding.catch(() => {});
    await blocker.end();
    await worker.stop();
  }
}, 120_000);

test('a failure recorded on a connection that is lost under it is recorded once the database answers, and the worker runs on', async () => {
  const { db } = handle;
  const direct = new URL(url);
  const proxy = await TcpProxy.start({ host: direct.hostname, port: Number(direct.port || 5432) });
  const viaProxy = new URL(url);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  let ran!: () => void;
  const okRan = new Promise<void>((r) => (ran = r));
  const worker = await startWorker(handle, viaProxy.toString(), {
    concurrency: 1,
    tasks: {
      // Fails while the network to the database stalls and then drops: graphile-worker records the
      // failure on a pooled connection whose query gets no answer and then loses the connection.
      test__fail_then_drop: async () => {
        proxy.stall();
        setTimeout(() => {
          proxy.cut();
          setTimeout(() => proxy.resume(), 1_500);
        }, 500);
        throw new Error('task failed');
      },
      test__ok: async () => ran(),
    },
  });
  try {
    await enqueueJob(db, 'test__fail_then_drop', {}, { jobKey: 'fail-then-drop' });
    let job: { attempts: number; last_error: string | null; locked_by: string | null } | undefined;
    for (let i = 0; i < 300; i++) {
      [job] = (await db.execute(
        sql`select attempts, last_error, locked_by from graphile_worker._private_jobs where key = 'fail-then-drop'`,
      )) as unknown as (typeof job & object)[];
      if (job?.last_error) break;
      await sleep(100);
    }
    expect(job).toEqual({ attempts: 1, last_error: 'task failed (attempt 1 of 25)', locked_by: null });
    await enqueueJob(db, 'test__ok', {});
    await okRan;
  } finally {
    await worker.stop();
    await proxy.close();
  }
}, 60_000);

test('a job whose database is lost under it runs again in the same attempt once the database takes writes (no failure, no backoff)', async () => {
  const { db } = handle;
  const direct = new URL(url);
  const proxy = await TcpProxy.start({ host: direct.hostname, port: Number(direct.port || 5432) });
  const viaProxy = new URL(url);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  // The tasks' pool (and the heartbeat's) goes through the proxy; graphile-worker's own does not.
  const lossy = createDb(viaProxy.toString(), { max: 2 });
  let runs = 0;
  const worker = await startWorker(lossy, url, {
    concurrency: 1,
    tasks: {
      test__lose_database: async (_payload, { db: taskDb }) => {
        runs++;
        if (runs === 1) {
          proxy.cut();
          setTimeout(() => proxy.resume(), 2_000);
        }
        await taskDb.execute(sql`select 1`);
      },
    },
  });
  try {
    // One attempt only: a failure recorded would end the job for good.
    await enqueueJob(db, 'test__lose_database', {}, { jobKey: 'lose-database', maxAttempts: 1 });
    let left: { attempts: number; last_error: string | null }[] = [];
    for (let i = 0; i < 300; i++) {
      left = (await db.execute(sql`select attempts, last_error from graphile_worker._private_jobs where key = 'lose-database'`)) as unknown as typeof left;
      if (left.length === 0 || left[0].last_error) break;
      await sleep(100);
    }
    expect(left, 'the job completed').toEqual([]);
    expect(runs).toBe(2);
  } finally {
    await worker.stop();
    await lossy.close();
    await proxy.close();
  }
}, 60_000);

test("a job locked in a live worker's name but never handed to it (its answer lost) is unlocked and run, with its queue", async () => {
  const { db } = handle;
  let ran!: () => void;
  const okRan = new Promise<void>((r) => (ran = r));
  let runs = 0;
  const worker = await startWorker(handle, url, {
    concurrency: 1,
    tasks: {
      test__phantom: async () => {
        runs++;
        ran();
      },
    },
  });
  try {
    // Due later, so the worker does not take it itself; then taken in the worker pool's name exactly
    // as graphile-worker's get_jobs takes a job (attempts + 1, the job and its named queue locked),
    // as if that statement had committed and its answer had been lost, and made due.
    await enqueueJob(db, 'test__phantom', {}, { jobKey: 'phantom', queueName: 'phantom-queue', runAt: new Date(Date.now() + 3_600_000) });
    const [{ pool }] = (await db.execute(
      sql`select id as pool from unnest((select graphile_worker_ids from worker_heartbeats where worker_id = ${worker.workerId})) as id where id like 'pool-%'`,
    )) as unknown as { pool: string }[];
    await db.execute(sql`
      with j as (
        update graphile_worker._private_jobs set attempts = attempts + 1, locked_by = ${pool}, locked_at = now(), run_at = now()
        where key = 'phantom' returning job_queue_id)
      update graphile_worker._private_job_queues q set locked_by = ${pool}, locked_at = now() from j where q.id = j.job_queue_id`);
    // Unlocked after it has been locked 10 s and seen so by two heartbeats (5 s apart); then run.
    const outcome = await Promise.race([okRan.then(() => 'ran'), sleep(40_000).then(() => 'still locked')]);
    expect(outcome).toBe('ran');
    for (let i = 0; i < 50; i++) {
      const [left] = (await db.execute(sql`select 1 from graphile_worker._private_jobs where key = 'phantom'`)) as unknown as unknown[];
      if (!left) break;
      await sleep(100);
    }
    const queue = (await db.execute(sql`select locked_by from graphile_worker._private_job_queues where queue_name = 'phantom-queue'`)) as unknown as {
      locked_by: string | null;
    }[];
    expect(queue.every((q) => q.locked_by === null)).toBe(true);
    expect(runs).toBe(1);
  } finally {
    await worker.stop();
  }
}, 60_000);
