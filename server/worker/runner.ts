import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { sql } from 'drizzle-orm';
import { EventEmitter } from 'node:events';
import { makeWorkerUtils, run, type Runner, type TaskList, type WorkerEvents } from 'graphile-worker';
import { RETRYABLE_ERROR_CODES } from 'graphile-worker/dist/lib';
import type pg from 'pg';
import { z } from 'zod';
import { createPgPool } from '@/db/pg';
import { query } from '@/db/query';
import type { DbHandle } from '@/db/client';
import { databaseUnreachable } from '@/server/errors';
import { log } from '@/server/observability/log';
import { incrementCounter } from '@/server/observability/metrics';
import { crontab, tasks } from './registry';
import type { MeridianTask } from './types';

const HEARTBEAT_MS = 5_000;

const DEAD_AFTER_SECONDS = 30;

const COUNT_FLUSH_MS = 1_000;

/**
 * A worker process killed with SIGKILL leaves its jobs locked (graphile-worker would wait hours
 * before retrying them). Every live worker records its graphile worker ids with its heartbeat;
 * jobs locked by ids that no live heartbeat claims, for longer than DEAD_AFTER_SECONDS, belong to
 * a dead process and are unlocked so another worker runs them (the tasks are idempotent).
 */
async function unlockJobsOfDeadWorkers(handle: DbHandle, pgPool: pg.Pool) {
  const dead = await query(
    handle.db,
    sql`
    select distinct locked_by from graphile_worker._private_jobs j
    where j.locked_by is not null and j.locked_at < now() - ${`${DEAD_AFTER_SECONDS} seconds`}::interval
      and not exists (select 1 from worker_heartbeats h where j.locked_by = any(h.graphile_worker_ids)
                      and h.last_seen_at > now() - ${`${DEAD_AFTER_SECONDS} seconds`}::interval)`,
    z.object({ locked_by: z.string() }),
  );
  if (dead.length === 0) return;
  const utils = await makeWorkerUtils({ pgPool });
  try {
    await utils.forceUnlockWorkers(dead.map((d) => d.locked_by));
    log('warn', `unlocked jobs of ${dead.length} dead worker(s): ${dead.map((d) => d.locked_by).join(', ')}`);
  } finally {
    await utils.release();
  }
}

/**
 * A job locked by this live process that none of its workers was handed: the statement that took
 * it (graphile-worker's get_jobs, one autocommitted statement) committed on the server, and on the
 * standby that a failover promotes, but its answer never reached the worker — the primary died
 * between the commit and the reply, or the connection was lost under it. The job, and the named
 * queue it holds (a machine's reconciler queue), stay locked by a worker that does not know it has
 * them; the dead-worker sweep leaves them alone (the worker is alive), so a release or cancel whose
 * job that was would never take effect.
 *
 * Every heartbeat reads the jobs locked by this process's ids and unlocks the ones its workers were
 * not handed (`job:start`) that were locked at least PHANTOM_AFTER_SECONDS ago and were seen so, with
 * the same lock, by the previous sweep too: an answer delayed in flight (a stalled server continued)
 * is delivered well within a heartbeat, so a job that is only late is never taken from its run.
 */
const PHANTOM_AFTER_SECONDS = 10;

export class PhantomLockSweep {
  /** Jobs this process's workers were handed, with when; forgotten once the database shows them no longer locked by us. */
  private readonly delivered = new Map<string, number>();
  /** Phantom candidates of the previous sweep: job id → its locked_at. */
  private candidates = new Map<string, string>();

  constructor(
    private readonly handle: DbHandle,
    private readonly ids: () => string[],
  ) {}

  /** Called when a worker of this process is handed a job (graphile-worker's `job:start`). */
  handed(jobId: string) {
    this.delivered.set(jobId, Date.now());
  }

  /** One sweep: returns the ids of the jobs it unlocked. */
  async sweep(): Promise<string[]> {
    const ids = this.ids();
    if (ids.length === 0) return [];
    const startedAt = Date.now();
    const locked = await query(
      this.handle.db,
      sql`select id::text as id, locked_at::text as "lockedAt", locked_at < now() - ${`${PHANTOM_AFTER_SECONDS} seconds`}::interval as old
          from graphile_worker._private_jobs where locked_by = any(${`{${ids.join(',')}}`}::text[])`,
      lockedJobRow,
    );
    const lockedIds = new Set(locked.map((j) => j.id));
    for (const [id, at] of this.delivered) if (at < startedAt && !lockedIds.has(id)) this.delivered.delete(id);
    const previous = this.candidates;
    this.candidates = new Map(locked.filter((j) => j.old && !this.delivered.has(j.id)).map((j) => [j.id, j.lockedAt]));
    const phantom = [...this.candidates].filter(([id, lockedAt]) => previous.get(id) === lockedAt);
    if (phantom.length === 0) return [];
    const unlocked = await query(
      this.handle.db,
      sql`with job as (
            update graphile_worker._private_jobs j set locked_by = null, locked_at = null
            from unnest(${`{${phantom.map(([id]) => id).join(',')}}`}::bigint[], ${`{${phantom.map(([, at]) => `"${at}"`).join(',')}}`}::timestamptz[]) as p(id, locked_at)
            where j.id = p.id and j.locked_at = p.locked_at and j.locked_by = any(${`{${ids.join(',')}}`}::text[])
            returning j.id, j.job_queue_id
          ), queue as (
            update graphile_worker._private_job_queues q set locked_by = null, locked_at = null
            from job where q.id = job.job_queue_id and q.locked_by = any(${`{${ids.join(',')}}`}::text[])
          )
          select id::text as id from job`,
      unlockedJobRow,
    );
    for (const { id } of unlocked) this.candidates.delete(id);
    return unlocked.map((j) => j.id);
  }
}

const lockedJobRow = z.object({ id: z.string(), lockedAt: z.string(), old: z.boolean() });
const unlockedJobRow = z.object({ id: z.string() });

/**
 * graphile-worker retries its own statements (fetching a job, recording its success or failure)
 * only on the error codes in its RETRYABLE_ERROR_CODES; any other error recording an outcome is
 * an unhandled rejection that ends the process, and the jobs it held stay locked until another
 * worker finds it dead. A database restart or failover loses connections with codes it does not
 * list (ECONNRESET, 57P01 admin shutdown, 08006 from db/pg.ts for a connection lost under a
 * query): they are added here, so the outcome is recorded once the database answers again.
 */
const CONNECTION_LOSS_CODES = ['08000', '08001', '08003', '08006', '57P01', '57P02', '25006', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE'];
for (const code of CONNECTION_LOSS_CODES) RETRYABLE_ERROR_CODES[code] ??= { minDelay: 200, maxDelay: 5_000 };

/**
 * How long a job's run waits for the database to come back when the database was out of reach
 * under it, before the run fails as any other (and graphile-worker retries it with its backoff).
 */
const OUTAGE_WAIT_MS = 30_000;
const OUTAGE_POLL_MS = 250;

/**
 * Runs `run`; when it fails because the database was out of reach (server/errors.ts:
 * databaseUnreachable — a failover, a restart), waits until the database takes a write again and
 * runs it again in the same attempt, for up to OUTAGE_WAIT_MS. Without this a job failing through a
 * failover climbs graphile-worker's backoff (e^attempts s: 3 s, 7 s, 20 s, 55 s, 148 s…) once per
 * try while the database is away, and its machine waits out the last delay long after the new
 * primary takes writes. The tasks are idempotent, and the run keeps the job's lock throughout.
 */
export async function runThroughOutage(
  run: () => Promise<void>,
  writable: () => Promise<unknown>,
  onOutage: (e: unknown) => void,
  waitMs = OUTAGE_WAIT_MS,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await run();
    } catch (e) {
      if (!databaseUnreachable(e) || Date.now() >= deadline) throw e;
      onOutage(e);
      for (;;) {
        await new Promise((r) => setTimeout(r, OUTAGE_POLL_MS));
        const back = await writable().then(
          () => true,
          () => false,
        );
        if (back) break;
        if (Date.now() >= deadline) throw e;
      }
    }
  }
}

/**
 * The error a failed job records (graphile-worker keeps its message as the job's `last_error`),
 * naming the attempt that failed: "… (attempt 2 of 25)". A job whose key is added again while it
 * runs is retired by graphile-worker (its attempts set to the maximum, so that it never runs again;
 * the new job does its work), and one that then fails reads attempts = max_attempts like a job
 * that used up its attempts; its message tells the two apart.
 */
function withAttempt(e: unknown, attempt: number, maxAttempts: number): Error {
  const error = e instanceof Error ? e : new Error(String(e));
  error.message = `${error.message} (attempt ${attempt} of ${maxAttempts})`;
  return error;
}

/**
 * Runs the graphile-worker runner with Meridian's tasks. Several workers may run against one
 * database; graphile-worker hands each job to exactly one (SKIP LOCKED). The worker records a
 * heartbeat for /readyz and counts job outcomes in the shared counters.
 */
export async function startWorker(
  handle: DbHandle,
  connectionString: string,
  options: { concurrency: number; /** The tasks to run (default: Meridian's registry). */ tasks?: Record<string, MeridianTask> },
) {
  const workerId = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const taskList: TaskList = {};
  for (const [name, task] of Object.entries(options.tasks ?? tasks)) {
    taskList[name] = async (payload, helpers) => {
      // A trace of every run (debug level), logged inside the job's lock: the scale-out and chaos
      // tests read it from all workers to prove that no job ran twice and that no two runs of one
      // machine's reconciler overlapped.
      const trace = (event: string) => log('debug', `job ${event}`, { jobId: String(helpers.job.id), task: name, attempt: helpers.job.attempts, payload });
      trace('start');
      try {
        await runThroughOutage(
          () => task(payload, { db: handle.db, helpers }),
          // A write the primary takes (a standby refuses it): the heartbeat's own.
          () => handle.db.execute(sql`update worker_heartbeats set last_seen_at = now() where worker_id = ${workerId}`),
          (e) =>
            log('warn', `job ${name} lost the database; it runs again once the database takes writes`, {
              jobId: String(helpers.job.id),
              error: String((e as Error)?.message ?? e),
            }),
        );
      } catch (e) {
        trace('error');
        throw withAttempt(e, helpers.job.attempts, helpers.job.max_attempts);
      }
      trace('success');
    };
  }
  // Our own pool so a dropped connection (database restart, failover, shutdown) is logged and
  // retried instead of crashing the process through an unhandled 'error' event.
  // On a multi-host DATABASE_URL its new connections go to the current primary (db/pg.ts), waiting
  // out a failover's gap: graphile-worker gives up on recording a job's outcome after a few quick
  // retries, and an outcome it cannot record ends the process.
  const pgPool = createPgPool(connectionString, { max: options.concurrency + 3, connectionTimeoutMillis: 5_000, waitForPrimaryMs: 30_000 });
  pgPool.on('error', (e) => log('warn', `worker database connection lost: ${e.message}`));
  pgPool.on('connect', (client) => client.on('error', (e) => log('warn', `worker database client error: ${e.message}`)));
  const graphileIds: string[] = [];
  const phantoms = new PhantomLockSweep(handle, () => graphileIds);
  const beat = async () => {
    const ids = `{${graphileIds.join(',')}}`;
    await handle.db.execute(sql`insert into worker_heartbeats (worker_id, graphile_worker_ids) values (${workerId}, ${ids}::text[])
      on conflict (worker_id) do update set last_seen_at = now(), graphile_worker_ids = excluded.graphile_worker_ids`);
    await unlockJobsOfDeadWorkers(handle, pgPool);
    const unlocked = await phantoms.sweep();
    if (unlocked.length) log('warn', `unlocked ${unlocked.length} job(s) locked by this worker but never handed to it: ${unlocked.join(', ')}`);
  };
  await beat();
  const timer = setInterval(() => beat().catch((e) => log('warn', `heartbeat failed: ${(e as Error).message}`)), HEARTBEAT_MS);
  const events = new EventEmitter() as WorkerEvents;
  // graphile-worker 0.17 locks jobs with the id of the worker *pool* (`pool-…`), not of its workers:
  // without it in the heartbeat, every job locked for DEAD_AFTER_SECONDS by this live process would
  // look orphaned and be unlocked under its feet, to run a second time beside the first.
  events.on('pool:create', ({ workerPool }) => graphileIds.push(workerPool.id));
  events.on('worker:create', ({ worker }) => graphileIds.push(worker.workerId));
  events.on('job:start', ({ job }) => phantoms.handed(String(job.id)));

  const runner: Runner = await run({
    pgPool,
    concurrency: options.concurrency,
    noHandleSignals: true,
    taskList,
    crontab: crontab().join('\n'),
    events,
  });
  await beat();
  // Job outcomes are counted in memory and added to the shared counters once a second: one write
  // per task and outcome per second instead of one per job on the same hot rows. A worker killed
  // with SIGKILL loses at most its last second of counts.
  const counts = new Map<string, { task: string; outcome: string; n: number }>();
  const count = (task: string, outcome: string) => {
    const key = `${task}\u0000${outcome}`;
    const entry = counts.get(key) ?? { task, outcome, n: 0 };
    entry.n++;
    counts.set(key, entry);
  };
  const flushCounts = async () => {
    const batch = [...counts.values()];
    counts.clear();
    for (const { task, outcome, n } of batch) {
      await incrementCounter(handle.db, 'meridian_job_outcomes_total', { task, outcome }, n).catch((e) =>
        log('warn', `job metric failed: ${(e as Error).message}`),
      );
    }
  };
  const countTimer = setInterval(() => void flushCounts(), COUNT_FLUSH_MS);
  runner.events.on('job:success', ({ job }) => count(job.task_identifier, 'success'));
  runner.events.on('job:error', ({ job, error }) => {
    count(job.task_identifier, 'error');
    log('warn', `job ${job.task_identifier} failed (attempt ${job.attempts}/${job.max_attempts})`, { error: String((error as Error)?.message ?? error) });
  });
  runner.events.on('job:failed', ({ job }) => count(job.task_identifier, 'failed'));
  log('info', `worker ${workerId} running ${Object.keys(tasks).length} task(s), concurrency ${options.concurrency}`);

  return {
    workerId,
    async stop() {
      clearInterval(timer);
      clearInterval(countTimer);
      await runner.stop();
      await flushCounts();
      await pgPool.end().catch(() => {});
      await handle.db.execute(sql`delete from worker_heartbeats where worker_id = ${workerId}`).catch(() => {});
    },
    promise: runner.promise,
  };
}
