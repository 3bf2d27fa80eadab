import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, onTestFinished, test, inject } from 'vitest';
import { createDb, sidePool } from './client';
import { projects } from './schema';

// One connection, so the prepared statements seen are those of the connection the queries ran on.
const handle = createDb(inject('databaseUrl'), { max: 1, applicationName: 'meridian-test-client' });
const { db } = handle;
afterAll(() => handle.close());

/** This connection's named prepared statements whose text contains `marker` (unnamed ones are not listed). */
async function prepared(marker: string): Promise<number> {
  const [{ n }] = (await db.execute(sql`select count(*)::int as n from pg_prepared_statements where statement like ${`%${marker}%`}`)) as unknown as {
    n: number;
  }[];
  return n;
}

describe('queries with parameters are prepared statements of their connection', () => {
  test('db.execute: parsed once, reused on the next call', async () => {
    for (let i = 0; i < 3; i++) {
      const [{ n }] = (await db.execute(sql`select ${i}::int + ${2}::int as n /* client-test-execute */`)) as unknown as { n: number }[];
      expect(n).toBe(i + 2);
    }
    expect(await prepared('client-test-execute')).toBe(1);
  });

  test('the query builder', async () => {
    await db
      .select({ id: projects.id })
      .from(projects)
      .where(sql`${projects.slug} = ${'no-such-project'} /* client-test-builder */`);
    expect(await prepared('client-test-builder')).toBe(1);
  });

  test('inside a transaction and a savepoint', async () => {
    await db.transaction(async (tx) => {
      await tx.execute(sql`select ${1}::int /* client-test-tx */`);
      await tx.transaction(async (inner) => {
        await inner.execute(sql`select ${1}::int /* client-test-savepoint */`);
      });
    });
    expect(await prepared('client-test-tx')).toBe(1);
    expect(await prepared('client-test-savepoint')).toBe(1);
  });
});

describe('side pools', () => {
  test('a side pool has connections of its own, named after it, and closes with its handle', async () => {
    const own = createDb(inject('databaseUrl'), { max: 1, applicationName: 'meridian-test-side' });
    onTestFinished(() => own.close());
    const side = sidePool(own.db, 'hot_fn', 2);
    expect(sidePool(own.db, 'hot_fn', 2)).toBe(side);
    const pid = async (d: typeof db) =>
      ((await d.execute(sql`select pg_backend_pid() as pid, current_setting('application_name') as app`)) as unknown as { pid: number; app: string }[])[0];
    const [main, hot] = await Promise.all([pid(own.db), pid(side)]);
    expect(hot.pid).not.toBe(main.pid);
    expect(hot.app).toBe('meridian-test-side/hot_fn');
    const open = async () =>
      (
        (await db.execute(
          sql`select count(*)::int as n from pg_stat_activity where application_name like 'meridian-test-side%' and datname = current_database()`,
        )) as unknown as { n: number }[]
      )[0].n;
    expect(await open()).toBe(2);
    await own.close();
    // A backend leaves pg_stat_activity a moment after its client hangs up.
    for (let i = 0; i < 50 && (await open()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await open()).toBe(0);
    // A closed handle's side pool is the ended pool itself: nothing new is opened.
    expect(sidePool(own.db, 'later', 1)).toBe(own.db);
  });
});
