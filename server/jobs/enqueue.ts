import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';

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
 */
export async function enqueueJob(db: DbOrTx, task: string, payload: Record<string, unknown>, options: EnqueueOptions = {}) {
  await db.execute(sql`select graphile_worker.add_job(
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
