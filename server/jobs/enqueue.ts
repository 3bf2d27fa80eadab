/**
 * The enqueue helper the domains call: a job is added in the transaction that makes it necessary.
 * The tasks that run the jobs live in server/worker/tasks (they call the domains; the domains
 * never import them).
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { log } from '@/server/observability/log';

export interface EnqueueOptions {
  /** Collapses bursts: a pending job with the same key is replaced instead of duplicated. */
  jobKey?: string;
  /** Run no earlier than this (deadlines are jobs with a run time, not polls). */
  runAt?: Date;
  maxAttempts?: number;
  /** `replace` (default) keeps one pending job per key with the newest payload and run time. */
  jobKeyMode?: 'replace' | 'preserve_run_at' | 'unsafe_dedupe';
  priority?: number;
  /** Jobs of one named queue run one at a time, in order (e.g. one reconciler per machine). */
  queueName?: string;
}

/**
 * Enqueues a graphile-worker job with SQL inside the caller's transaction: the job exists if and
 * only if the change that made it necessary commits. Payloads carry ids only.
 *
 * Through `meridian_add_job` (server/jobs/sql/meridian_add_job.sql), graphile-worker's add_job made safe for keyed jobs:
 * a keyed add_job is two statements (retire a running job with the key, then upsert the key's
 * pending job unless it is locked), and a worker that takes the pending job between the two leaves
 * it nothing to add (graphile/worker#580), while the run that worker started may have read the
 * state from before the caller's change, which would then commit with no job to act on it (a
 * machine deleted just as its job started would wait for capacity forever). The wrapper then adds
 * again, which retires the now running job and queues the successor that runs after it.
 */
export async function enqueueJob(db: DbOrTx, task: string, payload: Record<string, unknown>, options: EnqueueOptions = {}) {
  await db.execute(sql`select meridian_add_job(
    ${task},
    ${JSON.stringify(payload)}::json,
    run_at => ${options.runAt ? options.runAt.toISOString() : null}::timestamptz,
    max_attempts => ${options.maxAttempts ?? 25}::int,
    job_key => ${options.jobKey ?? null}::text,
    priority => ${options.priority ?? 0}::int,
    queue_name => ${options.queueName ?? null}::text,
    job_key_mode => ${options.jobKeyMode ?? 'replace'}::text
  )`);
}

/**
 * A condition: a job with the key `key` (an SQL expression) exists that can still run — pending,
 * scheduled or running; not one that used up its attempts.
 */
export function liveJobExists(key: SQL): SQL {
  return sql`exists (select 1 from graphile_worker._private_jobs j where j.key = ${key} and j.attempts < j.max_attempts)`;
}

/** Announcing a deadline this far ahead at most; later ones are left to the worker's poll. */
const ANNOUNCE_WITHIN_MS = 60_000;

/**
 * graphile-worker learns of a job due now from the NOTIFY `add_job` sends, but of a job whose run
 * time is in the future only when it next polls (every 2 s) — a short deadline (a provider
 * operation about to finish) would wait up to that long. Call this once the job scheduled for
 * `runAt` is committed: a timer sends the same notification when it falls due, so an idle worker
 * takes the job at once. Lost if this process stops first; the poll still finds the job.
 */
export function announceWhenDue(db: Db, runAt: Date): void {
  const ms = runAt.getTime() - Date.now();
  if (ms <= 0 || ms > ANNOUNCE_WITHIN_MS) return;
  const timer = setTimeout(() => {
    db.execute(sql`select pg_notify('jobs:insert', '{"count":1}')`).catch((e: Error) => log('warn', `could not announce a due job: ${e.message}`));
  }, ms + 5);
  timer.unref();
}
