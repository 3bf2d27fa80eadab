import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test, inject } from 'vitest';
import { asDomainError } from '@/server/errors';
import { freePort } from '@/test/global-setup';
import { uniq } from '@/test/db';
import { sqlFunctionBatches } from './batch';
import { createDb, type DbHandle } from './client';
import { DeadlineExceeded, withDeadline } from './deadline';

/**
 * Request deadlines against the real PostgreSQL: a request past its budget is answered at once, and
 * what it began is not committed afterwards — also when the server itself stalls (its backend is
 * stopped with SIGSTOP) and answers after the deadline.
 */
let handle: DbHandle;
const table = `deadline_probe_${process.pid}`;

beforeAll(async () => {
  handle = createDb(inject('databaseUrl'), { max: 4, applicationName: 'deadline-test' });
  await handle.db.execute(sql.raw(`create table ${table} (name text primary key)`));
  await handle.db.execute(
    sql.raw(
      `create or replace function ${table}_put(p jsonb) returns jsonb language sql as $$ insert into ${table} values (p->>'name') returning to_jsonb(name) $$`,
    ),
  );
  await handle.db.execute(
    sql.raw(
      `create or replace function ${table}_put_many(p jsonb) returns jsonb language sql as $$ with w as (insert into ${table} select x->>'name' from jsonb_array_elements(p) x returning name) select coalesce(jsonb_agg(to_jsonb(name)), '[]') from w $$`,
    ),
  );
});

afterAll(async () => {
  await handle.db.execute(sql.raw(`drop table if exists ${table}; drop function if exists ${table}_put; drop function if exists ${table}_put_many`));
  await handle.close();
});

const stored = async (name: string) =>
  ((await handle.db.execute(sql`select count(*)::int as n from ${sql.raw(table)} where name = ${name}`)) as unknown as { n: number }[])[0].n;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Stops a backend (SIGSTOP) for `ms`, then lets it go on: the server answers nothing meanwhile. */
function stall(pid: number, ms: number): Promise<void> {
  process.kill(pid, 'SIGSTOP');
  return sleep(ms).then(() => {
    process.kill(pid, 'SIGCONT');
  });
}

describe('request deadlines', () => {
  test('a transaction still running at its deadline is answered DeadlineExceeded at once and rolled back', async () => {
    const name = uniq('slow');
    const started = Date.now();
    const outcome = withDeadline(300, () =>
      handle.db.transaction(async (tx) => {
        await tx.execute(sql`insert into ${sql.raw(table)} values (${name})`);
        await tx.execute(sql`select pg_sleep(1)`);
      }),
    );
    await expect(outcome).rejects.toBeInstanceOf(DeadlineExceeded);
    expect(Date.now() - started).toBeLessThan(900);
    await sleep(1_200);
    expect(await stored(name)).toBe(0);
  });

  test('a server that stalls with the transaction open and answers after the deadline does not commit it', async () => {
    const name = uniq('stalled');
    let stalled: Promise<void> | undefined;
    const outcome = withDeadline(400, () =>
      handle.db.transaction(async (tx) => {
        await tx.execute(sql`insert into ${sql.raw(table)} values (${name})`);
        const [{ pid }] = (await tx.execute(sql`select pg_backend_pid() as pid`)) as unknown as { pid: number }[];
        // The client is still within its budget when it asks to commit; the server answers late.
        stalled = stall(pid, 1_000);
      }),
    );
    await expect(outcome).rejects.toBeInstanceOf(DeadlineExceeded);
    await stalled;
    await sleep(300);
    expect(await stored(name)).toBe(0);
  });

  test('a transaction within its budget commits', async () => {
    const name = uniq('quick');
    await withDeadline(5_000, () => handle.db.transaction(async (tx) => tx.execute(sql`insert into ${sql.raw(table)} values (${name})`)));
    expect(await stored(name)).toBe(1);
  });

  test('a batched statement that reaches a stalled server after the deadline writes nothing', async () => {
    const put = sqlFunctionBatches<{ name: string }>({
      one: `${table}_put`,
      many: `${table}_put_many`,
      lockKeys: (i) => [i.name],
      laneKeys: () => ['one'],
      lanes: 1,
      maxBatch: 8,
    });
    // Open the lane's connection and find its backend.
    await withDeadline(5_000, () => put(handle.db, { name: uniq('warm') }));
    const [{ pid }] = (await handle.db.execute(
      sql`select pid from pg_stat_activity where application_name = ${`deadline-test/${table}_put_many`}`,
    )) as unknown as { pid: number }[];
    expect(pid).toBeGreaterThan(0);
    const names = [uniq('late'), uniq('late'), uniq('late')];
    const stalled = stall(pid, 1_000);
    const outcomes = await Promise.allSettled(names.map((name) => withDeadline(300, () => put(handle.db, { name }))));
    for (const o of outcomes) expect(o.status === 'rejected' && o.reason).toBeInstanceOf(DeadlineExceeded);
    await stalled;
    // The statement sent before the stall reaches the server now; items queued behind it are never sent.
    await sleep(500);
    for (const name of names) expect(await stored(name)).toBe(0);
    // The lane works again afterwards.
    const after = uniq('after');
    await withDeadline(5_000, () => put(handle.db, { name: after }));
    expect(await stored(after)).toBe(1);
  });
});

describe('DatabaseUnavailable', () => {
  test('a server that cannot be reached is DatabaseUnavailable, within the connect timeout', async () => {
    const port = await freePort();
    const dead = createDb(`postgres://nobody@127.0.0.1:${port}/none`, { max: 1, connectTimeoutSeconds: 1 });
    try {
      const error = await dead.db.execute(sql`select 1`).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(asDomainError(error)?.code).toBe('DatabaseUnavailable');
    } finally {
      await dead.close();
    }
  });

  test('a request past its deadline is DatabaseUnavailable, and so is a statement_timeout (which names the timeout)', async () => {
    expect(asDomainError(new DeadlineExceeded(5_000))?.code).toBe('DatabaseUnavailable');
    const slow = createDb(inject('databaseUrl'), { max: 1, statementTimeoutMs: 100 });
    try {
      const error = await slow.db.execute(sql`select pg_sleep(1)`).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(asDomainError(error)?.code).toBe('DatabaseUnavailable');
      expect(asDomainError(error)?.message).toBe('the request did not finish within its statement timeout; retry shortly');
    } finally {
      await slow.close();
    }
  });

  test('a deadline names the database only when it answered none of the request’s statements', async () => {
    const outcome = (fn: () => Promise<unknown>) =>
      withDeadline(300, fn).then(
        () => undefined,
        (e: unknown) => asDomainError(e),
      );
    // The database answered (BEGIN, a first statement), then the request ran past its budget.
    const longTransaction = await outcome(() =>
      handle.db.transaction(async (tx) => {
        await tx.execute(sql`select 1`);
        await tx.execute(sql`select pg_sleep(1)`);
      }),
    );
    expect(longTransaction).toMatchObject({ code: 'DatabaseUnavailable', message: 'the request did not finish within 300 ms; retry shortly' });
    const longStatements = await outcome(async () => {
      await handle.db.execute(sql`select 1`);
      await handle.db.execute(sql`select pg_sleep(1)`);
    });
    expect(longStatements?.message).toBe('the request did not finish within 300 ms; retry shortly');
    // Nothing answered within the budget.
    const silent = await outcome(() => handle.db.execute(sql`select pg_sleep(1)`));
    expect(silent).toMatchObject({ code: 'DatabaseUnavailable', message: 'the database did not answer within 300 ms; retry shortly' });
  });
});
