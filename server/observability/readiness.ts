import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { z } from 'zod';
import { query } from '@/db/query';
import { expectedMigrationCount } from '@/db/journal';
import { databaseUnavailability } from '@/server/errors';
import { providerClient, providerConfigured } from '@/server/provider/connection';
import { internalErrorMessage, logError } from './log';

export interface DependencyState {
  name: string;
  status: 'ok' | 'failing' | 'unknown';
  detail: string;
  required: boolean;
}

const WORKER_STALE_MS = 30_000;

/**
 * The most one check may take at a request budget of `requestBudgetMs` (DB_REQUEST_TIMEOUT_MS):
 * well under it (a fifth, at most 1 s), so that /readyz answers before the request deadline and
 * before a load balancer's probe gives up on it, with the check that did not answer named.
 */
export function readinessCheckBudgetMs(requestBudgetMs: number): number {
  return Math.max(50, Math.min(1_000, Math.floor(requestBudgetMs / 5)));
}

/** A check that did not answer in time: its message names no internals and is shown as it is. */
class CheckTimeout extends Error {}

/**
 * `p`'s outcome if it settles within `ms`, else CheckTimeout: a result that arrives later is
 * dropped, never reported (a check that answers "ok" after a stall says nothing of now).
 */
async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new CheckTimeout(`${what} did not answer within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What /readyz (unauthenticated) says of a check that failed: a timeout or an unreachable database
 * as such, anything else only by the id under which it is logged (a failed statement's message
 * carries the statement).
 */
function failureDetail(check: string, e: unknown): string {
  if (e instanceof CheckTimeout) return e.message;
  return databaseUnavailability(e) ?? internalErrorMessage(logError(`readyz ${check}`, e));
}

/** Runs one check within `budgetMs`; a failure or a timeout is that check failing, with its reason. */
async function runCheck(name: string, required: boolean, budgetMs: number, check: () => Promise<DependencyState>): Promise<DependencyState> {
  try {
    return await withTimeout(check(), budgetMs, name);
  } catch (e) {
    return { name, status: 'failing', detail: failureDetail(name, e), required };
  }
}

/**
 * Checks each dependency separately and names it: the database, the schema migrations, the worker
 * heartbeat, the provider, and any registered extra checks. Never all-or-nothing silence, and never
 * a hang: the checks run at once, each within `checkBudgetMs` (readinessCheckBudgetMs), so the
 * report is ready within about that long whatever a dependency does, and every "ok" in it was
 * answered within the budget of `checkedAt`.
 */
export async function checkReadiness(db: Db, { checkBudgetMs = 1_000 }: { checkBudgetMs?: number } = {}) {
  const checkedAt = new Date();
  const checks: Promise<DependencyState>[] = [
    runCheck('database', true, checkBudgetMs, async () => {
      await db.execute(sql`select 1`);
      return { name: 'database', status: 'ok', detail: 'connected', required: true };
    }),
    runCheck('migrations', true, checkBudgetMs, async () => {
      const expected = await expectedMigrationCount();
      const rows = await query(db, sql`select count(*)::int as n from drizzle.__drizzle_migrations`, z.object({ n: z.number() }));
      const applied = rows[0]?.n ?? 0;
      return { name: 'migrations', status: applied >= expected ? 'ok' : 'failing', detail: `${applied} of ${expected} applied`, required: true };
    }),
    runCheck('worker', true, checkBudgetMs, async () => {
      const rows = await query(
        db,
        sql`select count(*)::int as live, extract(epoch from now() - max(last_seen_at))::float as age from worker_heartbeats where last_seen_at > now() - ${`${WORKER_STALE_MS / 1000} seconds`}::interval`,
        z.object({ live: z.number(), age: z.number().nullable() }),
      );
      const live = rows[0]?.live ?? 0;
      return {
        name: 'worker',
        status: live > 0 ? 'ok' : 'failing',
        detail: live > 0 ? `${live} worker(s) alive` : `no worker heartbeat in the last ${WORKER_STALE_MS / 1000}s`,
        required: true,
      };
    }),
  ];
  if (providerConfigured()) {
    checks.push(
      runCheck('simulator', false, checkBudgetMs, async () => {
        const started = Date.now();
        const outcome = await providerClient().health({ timeoutMs: checkBudgetMs });
        return {
          name: 'simulator',
          status: outcome.type === 'result' ? 'ok' : 'failing',
          detail:
            outcome.type === 'result'
              ? `reachable in ${Date.now() - started} ms`
              : outcome.type === 'unknown'
                ? `${outcome.reason}: ${outcome.message}`
                : outcome.error.message,
          // Machines wait (with bounded retries) while the provider is away; the rest of Meridian serves.
          required: false,
        };
      }),
    );
  }
  const deps = await Promise.all(checks);
  // The database's own check names what is wrong; the checks that read through it say so, not a second timeout.
  const database = deps[0];
  if (database.status !== 'ok') {
    for (const i of [1, 2]) deps[i] = { ...deps[i], status: 'unknown', detail: 'the database check failed' };
  }
  const status = deps.every((d) => d.status === 'ok' || !d.required) ? 'ok' : 'failing';
  return { status, dependencies: deps, checkedAt: checkedAt.toISOString() };
}
