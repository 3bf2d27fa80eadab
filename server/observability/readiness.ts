import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
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

/** Extra checks registered by modules (e.g. the simulator's reachability). */
type Check = () => Promise<DependencyState>;
const g = globalThis as unknown as { __meridianReadinessChecks?: Map<string, Check> };
export function registerReadinessCheck(name: string, check: Check) {
  (g.__meridianReadinessChecks ??= new Map()).set(name, check);
}

const WORKER_STALE_MS = 30_000;

/** A check that did not answer in time: its message names no internals and is shown as it is. */
class CheckTimeout extends Error {}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new CheckTimeout(`${what} timed out after ${ms} ms`)), ms)))]);
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

/**
 * Checks each dependency separately and names it: the database, the schema migrations, the worker
 * heartbeat, and any registered extra checks. Never all-or-nothing silence.
 */
export async function checkReadiness(db: Db) {
  const deps: DependencyState[] = [];
  let dbOk = false;
  try {
    await withTimeout(db.execute(sql`select 1`), 2000, 'database');
    dbOk = true;
    deps.push({ name: 'database', status: 'ok', detail: 'connected', required: true });
  } catch (e) {
    deps.push({ name: 'database', status: 'failing', detail: failureDetail('database', e), required: true });
  }
  if (dbOk) {
    try {
      const expected = await expectedMigrationCount();
      const rows = (await db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`)) as unknown as { n: number }[];
      const applied = rows[0]?.n ?? 0;
      deps.push({
        name: 'migrations',
        status: applied >= expected ? 'ok' : 'failing',
        detail: `${applied} of ${expected} applied`,
        required: true,
      });
    } catch (e) {
      deps.push({ name: 'migrations', status: 'failing', detail: failureDetail('migrations', e), required: true });
    }
    try {
      const rows = (await db.execute(
        sql`select count(*)::int as live, extract(epoch from now() - max(last_seen_at))::float as age from worker_heartbeats where last_seen_at > now() - ${`${WORKER_STALE_MS / 1000} seconds`}::interval`,
      )) as unknown as { live: number; age: number | null }[];
      const live = rows[0]?.live ?? 0;
      deps.push({
        name: 'worker',
        status: live > 0 ? 'ok' : 'failing',
        detail: live > 0 ? `${live} worker(s) alive` : `no worker heartbeat in the last ${WORKER_STALE_MS / 1000}s`,
        required: true,
      });
    } catch (e) {
      deps.push({ name: 'worker', status: 'failing', detail: failureDetail('worker', e), required: true });
    }
  } else {
    deps.push({ name: 'migrations', status: 'unknown', detail: 'database unreachable', required: true });
    deps.push({ name: 'worker', status: 'unknown', detail: 'database unreachable', required: true });
  }
  if (providerConfigured()) {
    const started = Date.now();
    const outcome = await providerClient().health({ timeoutMs: 2000 });
    deps.push({
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
    });
  }
  for (const [name, check] of g.__meridianReadinessChecks ?? []) {
    try {
      deps.push(await withTimeout(check(), 3000, name));
    } catch (e) {
      deps.push({ name, status: 'failing', detail: failureDetail(name, e), required: false });
    }
  }
  const status = deps.every((d) => d.status === 'ok' || !d.required) ? 'ok' : 'failing';
  return { status, dependencies: deps, checkedAt: new Date().toISOString() };
}
