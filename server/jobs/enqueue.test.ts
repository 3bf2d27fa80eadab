/**
 * The enqueue contract on real PostgreSQL: a job added in a transaction exists once that
 * transaction commits. Keyed jobs are the hard case: graphile-worker's add_job retires a running
 * job with the key and then upserts the key's pending one, in two statements, and a worker may take
 * the pending job between them. Jobs are added from TypeScript (enqueueJob) and from SQL
 * (server/jobs/sql/meridian_add_job.sql); both must survive that interleaving.
 */
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { expect, inject, test } from 'vitest';
import type { Db, DbOrTx } from '@/db/client';
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

/**
 * Adds the job `{ change: 2 }` with `key` (in the queue `key`) through `add`, in a transaction, while
 * a worker takes the pending job `{ change: 1 }` with that key in the middle of the add; returns the
 * queue's jobs once both committed.
 */
async function addWhileAWorkerTakesThePendingJob(db: Db, key: string, add: (tx: DbOrTx) => Promise<unknown>) {
  await enqueueJob(db, task, { change: 1 }, { jobKey: key, queueName: key });
  const [pending] = await jobsIn(db, key);

  // The worker: it holds the pending job's row, so the add below stops where add_job upserts it
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
    // The change that needs the job: it commits once the add returns.
    let adder: number | undefined;
    const change = db.transaction(async (tx) => {
      [{ pid: adder }] = (await tx.execute(sql`select pg_backend_pid() as pid`)) as unknown as { pid: number }[];
      await add(tx);
    });
    let blocked = false;
    for (let i = 0; i < 200 && !blocked; i++) {
      if (adder !== undefined) {
        [{ waiting: blocked }] = (await db.execute(sql`select cardinality(pg_blocking_pids(${adder}::int)) > 0 as waiting`)) as unknown as {
          waiting: boolean;
        }[];
      }
      if (!blocked) await sleep(25);
    }
    if (!blocked) throw new Error('the add never waited on the row the worker holds: the interleaving was not reproduced');
    take();
    await taking;
    await change;
    return { pending, jobs: await jobsIn(db, key) };
  } finally {
    take();
    await taking.catch(() => {});
    await worker.end();
    await db.execute(
      sql`delete from graphile_worker._private_jobs where job_queue_id = (select id from graphile_worker._private_job_queues where queue_name = ${key})`,
    );
    await db.execute(sql`delete from graphile_worker._private_job_queues where queue_name = ${key}`);
  }
}

test('a keyed job added while a worker takes the pending one with its key follows that run instead of being dropped', async () => {
  const { db } = testDb();
  // As a machine's reconciler: keyed, in a queue of its own.
  const key = uniq('machine');
  const { pending, jobs } = await addWhileAWorkerTakesThePendingJob(db, key, (tx) => enqueueJob(tx, task, { change: 2 }, { jobKey: key, queueName: key }));

  // The run the worker started may have read the state from before the change: the change's job
  // must still come after it — the taken job retired, a pending one with the key and its payload.
  expect(jobs).toEqual([
    { id: pending.id, key: null, payload: { change: 1 }, locked: true, retired: true },
    { id: expect.any(String), key, payload: { change: 2 }, locked: false, retired: false },
  ]);
});

test('meridian_add_job (the SQL functions’ add) likewise queues a successor to the job a worker took in the middle of it', async () => {
  const { db } = testDb();
  // As the project-deletion trigger adds its pass: keyed, in a queue of its own, named arguments.
  const key = uniq('project-delete');
  let added: string | null | undefined;
  const { pending, jobs } = await addWhileAWorkerTakesThePendingJob(db, key, async (tx) => {
    [{ id: added }] = (await tx.execute(sql`select meridian_add_job(${task}, json_build_object('change', 2),
      queue_name => ${key}::text, job_key => ${key}::text, job_key_mode => 'replace') as id`)) as unknown as { id: string | null }[];
  });

  expect(jobs).toEqual([
    { id: pending.id, key: null, payload: { change: 1 }, locked: true, retired: true },
    { id: added, key, payload: { change: 2 }, locked: false, retired: false },
  ]);
});

test('the SQL functions of the schema add jobs through meridian_add_job only', async () => {
  const { db } = testDb();
  const direct = (await db.execute(sql`
    select p.proname from pg_proc p
    where p.pronamespace = 'public'::regnamespace and p.prosrc ilike '%graphile_worker.add_job%' and p.proname <> 'meridian_add_job'
    order by 1`)) as unknown as { proname: string }[];
  expect(direct).toEqual([]);
});
