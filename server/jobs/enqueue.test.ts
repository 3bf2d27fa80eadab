/**
 * The enqueue contract on real PostgreSQL: a job added in a transaction exists once that
 * transaction commits. Keyed jobs are the hard case: graphile-worker's add_job retires a running
 * job with the key and then upserts the key's pending one, in two statements, and a worker may take
 * the pending job between them.
 */
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { expect, inject, test } from 'vitest';
import type { Db } from '@/db/client';
import { testDb, uniq } from '@/test/db';
import { enqueueJob } from './enqueue';

/** A task no worker runs, so that only this test takes its jobs. */
const task = 'test__enqueue';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function jobsIn(db: Db, queue: string) {
  return (await db.execute(sql`
    select j.id, j.key, j.payload, j.locked_at is not null as locked, j.attempts >= j.max_attempts as retired
    from graphile_worker._private_jobs j join graphile_worker._private_job_queues q on q.id = j.job_queue_id
    where q.queue_name = ${queue} order by j.id`)) as unknown as { id: string; key: string | null; payload: unknown; locked: boolean; retired: boolean }[];
}

test('a keyed job added while a worker takes the pending one with its key follows that run instead of being dropped', async () => {
  const { db } = testDb();
  // As a machine's reconciler: keyed, in a queue of its own.
  const key = uniq('machine');
  await enqueueJob(db, task, { change: 1 }, { jobKey: key, queueName: key });
  const [pending] = await jobsIn(db, key);

  // The worker: it holds the pending job's row, so the enqueue below stops where add_job upserts it
  // (after it looked for a running job to retire and found none); then it takes the job as get_job
  // does — queue and job locked, the attempt counted — and commits.
  const worker = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let take!: () => void;
  const takeNow = new Promise<void>((r) => (take = r));
  let held!: () => void;
  const holding = new Promise<void>((r) => (held = r));
  const taking = worker.begin(async (tx) => {
    await tx`select 1 from graphile_worker._private_jobs where id = ${pending.id} for update`;
    held();
    await takeNow;
    await tx`update graphile_worker._private_job_queues set locked_by = 'test-worker', locked_at = now() where queue_name = ${key}`;
    await tx`update graphile_worker._private_jobs set attempts = attempts + 1, locked_by = 'test-worker', locked_at = now() where id = ${pending.id}`;
  });
  try {
    await holding;
    // The change that needs the job: it commits once add_job returns.
    let enqueuer: number | undefined;
    const change = db.transaction(async (tx) => {
      [{ pid: enqueuer }] = (await tx.execute(sql`select pg_backend_pid() as pid`)) as unknown as { pid: number }[];
      await enqueueJob(tx, task, { change: 2 }, { jobKey: key, queueName: key });
    });
    for (let i = 0; i < 200; i++) {
      if (enqueuer !== undefined) {
        const [{ waiting }] = (await db.execute(sql`select cardinality(pg_blocking_pids(${enqueuer}::int)) > 0 as waiting`)) as unknown as { waiting: boolean }[];
        if (waiting) break;
      }
      await sleep(25);
    }
    take();
    await taking;
    await change;

    // The run the worker started may have read the state from before the change: the change's job
    // must still come after it — the taken job retired, a pending one with the key and its payload.
    expect(await jobsIn(db, key)).toEqual([
      { id: pending.id, key: null, payload: { change: 1 }, locked: true, retired: true },
      { id: expect.any(String), key, payload: { change: 2 }, locked: false, retired: false },
    ]);
  } finally {
    take();
    await taking.catch(() => {});
    await worker.end();
    await db.execute(sql`delete from graphile_worker._private_jobs where job_queue_id = (select id from graphile_worker._private_job_queues where queue_name = ${key})`);
    await db.execute(sql`delete from graphile_worker._private_job_queues where queue_name = ${key}`);
  }
});
