import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { createDb, type DbHandle } from '@/db/client';
import { TcpProxy } from '@/test/tcp-proxy';
import { checkReadiness, readinessCheckBudgetMs } from './readiness';

/**
 * /readyz's checks against the real PostgreSQL, when the database answers some statements and not
 * others: the report is ready within about one check budget, names the check that did not answer,
 * and never reports as ok what answered after its budget.
 */
const BUDGET_MS = 400;
/** What the report may take beyond one budget: its own way back on a busy machine. */
const SLACK_MS = 600;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let direct: DbHandle;
beforeAll(() => {
  direct = createDb(inject('databaseUrl'), { max: 4, applicationName: 'readiness-test' });
});
afterAll(async () => {
  await direct.close();
});

/** Holds `table` locked (ACCESS EXCLUSIVE) for `ms` from another connection: statements reading it wait. */
async function lockFor(table: string, ms: number): Promise<{ released: Promise<void> }> {
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const released = direct.sql
    .begin(async (tx) => {
      await tx.unsafe(`lock table ${table} in access exclusive mode`);
      locked();
      await sleep(ms);
    })
    .then(() => {});
  await isLocked;
  return { released };
}

describe('readiness under a database that does not answer', () => {
  test('a check that waits past its budget is failing, named, and the report does not wait for it', async () => {
    const { released } = await lockFor('drizzle.__drizzle_migrations', 3_000);
    const started = Date.now();
    const report = await checkReadiness(direct.db, { checkBudgetMs: BUDGET_MS });
    const took = Date.now() - started;
    await released;
    expect(took).toBeLessThan(BUDGET_MS + SLACK_MS);
    expect(report.status).toBe('failing');
    const byName = Object.fromEntries(report.dependencies.map((d) => [d.name, d]));
    expect(byName.database.status).toBe('ok');
    expect(byName.migrations).toMatchObject({ status: 'failing', detail: `migrations did not answer within ${BUDGET_MS} ms` });
  });

  test('a stalled database: the database check fails within its budget, the checks that read through it are unknown', async () => {
    const target = new URL(inject('databaseUrl'));
    const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
    const through = new URL(target);
    through.hostname = '127.0.0.1';
    through.port = String(proxy.port);
    const stalled = createDb(through.toString(), { max: 4, applicationName: 'readiness-test-stalled' });
    try {
      await checkReadiness(stalled.db, { checkBudgetMs: 5_000 }); // opens the pool's connections
      proxy.stall();
      const started = Date.now();
      const report = await checkReadiness(stalled.db, { checkBudgetMs: BUDGET_MS });
      expect(Date.now() - started).toBeLessThan(BUDGET_MS + SLACK_MS);
      expect(report.status).toBe('failing');
      const byName = Object.fromEntries(report.dependencies.map((d) => [d.name, d]));
      expect(byName.database).toMatchObject({ status: 'failing', detail: `database did not answer within ${BUDGET_MS} ms`, required: true });
      expect(byName.migrations.status).toBe('unknown');
      expect(byName.worker.status).toBe('unknown');
    } finally {
      proxy.resume();
      await stalled.close();
      await proxy.close();
    }
  });
});

describe('readinessCheckBudgetMs', () => {
  test.each([
    [5_000, 1_000],
    [60_000, 1_000],
    [2_000, 400],
    [100, 50],
  ])('a request budget of %i ms gives each check %i ms', (request, check) => {
    expect(readinessCheckBudgetMs(request)).toBe(check);
  });
});
