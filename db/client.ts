import postgres from 'postgres';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { assertBeforeDeadline, beforeDeadlineCondition, currentDeadline, DeadlineExceeded, type Deadline } from './deadline';
import * as schema from './schema';

export type Db = PostgresJsDatabase<typeof schema>;
/** A transaction handle; every data-access function accepts either. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

export interface DbHandle {
  db: Db;
  sql: postgres.Sql;
  close(): Promise<void>;
}

/** Whether `db` is a transaction handle (after a failed statement, its statements fail until it ends). */
export function isTransaction(db: DbOrTx): db is Tx {
  return 'rollback' in db;
}

/**
 * Timeouts of a pool's connections, so that no statement, lock wait or abandoned transaction can
 * hold a connection (and its locks) without end: `statement_timeout`, `lock_timeout` and
 * `idle_in_transaction_session_timeout` are set for every connection at start-up, and opening a
 * connection gives up after `connectTimeoutSeconds`. A request's own budget is db/deadline.ts's.
 */
export interface PoolSettings {
  max?: number;
  applicationName?: string;
  statementTimeoutMs?: number;
  lockTimeoutMs?: number;
  idleInTransactionTimeoutMs?: number;
  connectTimeoutSeconds?: number;
}

/** Opens a pool against `url`. Callers own the handle and must `close()` it (its side pools with it). */
export function createDb(url: string, options: PoolSettings = {}): DbHandle {
  const applicationName = options.applicationName ?? 'meridian';
  const connection: Record<string, string | number> = { application_name: applicationName };
  if (options.statementTimeoutMs) connection.statement_timeout = options.statementTimeoutMs;
  if (options.lockTimeoutMs) connection.lock_timeout = options.lockTimeoutMs;
  if (options.idleInTransactionTimeoutMs) connection.idle_in_transaction_session_timeout = options.idleInTransactionTimeoutMs;
  const client = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connection,
    ...(options.connectTimeoutSeconds ? { connect_timeout: options.connectTimeoutSeconds } : {}),
  });
  const db = drizzle(preparing(client), { schema });
  const side = new Map<string, DbHandle>();
  sidePools.set(db, { url, settings: { ...options, applicationName }, side });
  return {
    db,
    sql: client,
    async close() {
      // From now on sidePool answers the ended pool itself rather than open a pool nobody closes.
      sidePools.delete(db);
      await Promise.all([client.end({ timeout: 5 }), ...[...side.values()].map((h) => h.close())]);
    },
  };
}

// On globalThis, as the process-wide pool below: Next bundles its own copy of this module, whose
// callers (the console's procedures) get that pool and must find its side pools too.
type SidePools = WeakMap<Db, { url: string; settings: PoolSettings & { applicationName: string }; side: Map<string, DbHandle> }>;
const sidePools: SidePools = ((globalThis as typeof globalThis & { __meridianSidePools?: SidePools }).__meridianSidePools ??= new WeakMap());

/**
 * A pool of `max` connections beside `db`'s, on the same database, for one hot statement (the
 * batches of db/batch.ts): opened on first use, closed with `db`'s handle. postgres.js hands a
 * pool's idle connections out in turn, so a statement sent a few at a time would visit every
 * backend of the main pool, each with cold caches; on a few backends of its own it stays warm and
 * costs PostgreSQL less CPU per batch (bench/cni-add measures it). `db` itself when it was not made
 * by createDb.
 */
export function sidePool(db: Db, name: string, max: number): Db {
  const pools = sidePools.get(db);
  if (!pools) return db;
  let side = pools.side.get(name);
  if (!side) pools.side.set(name, (side = createDb(pools.url, { ...pools.settings, max, applicationName: `${pools.settings.applicationName}/${name}` })));
  return side.db;
}

type Unsafe = postgres.Sql['unsafe'];

/**
 * drizzle runs every query unprepared (`prepare: false` unless it was given a name), and postgres.js
 * then asks the server for the parameter types before it runs the query: two round trips, a parse
 * and a plan per query. With this, a query with parameters is a named prepared statement of its
 * connection (parsed once, planned by PostgreSQL's plan cache) and runs in one round trip.
 * Transactions and savepoints get connections whose queries are prepared the same way.
 */
function preparing<S extends postgres.Sql>(client: S): S {
  const unsafe: Unsafe = client.unsafe.bind(client);
  (client as { unsafe: Unsafe }).unsafe = ((query: string, params?: unknown[], options?: postgres.UnsafeQueryOptions) =>
    noteAnswer(unsafe(query, params as never, params && params.length > 0 ? { ...options, prepare: true } : options))) as Unsafe;
  for (const method of ['begin', 'savepoint'] as const) {
    const original = (client as unknown as Record<string, ((...args: unknown[]) => unknown) | undefined>)[method];
    if (!original) continue;
    (client as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      const fn = args.pop() as (inner: postgres.Sql) => unknown;
      if (method === 'savepoint') return original.call(client, ...args, (inner: postgres.Sql) => fn(preparing(inner)));
      const deadline = currentDeadline();
      assertBeforeDeadline(deadline);
      return original.call(client, ...args, async (inner: postgres.Sql) => {
        // BEGIN was answered.
        if (deadline) deadline.answered = true;
        assertBeforeDeadline(deadline);
        const result = await fn(preparing(inner));
        if (deadline) await commitsBefore(inner, deadline);
        return result;
      });
    };
  }
  return client;
}

/**
 * Before a request's transaction commits: its deadline has not passed, by the client's clock and
 * by the server's (a server that stalled with the transaction open answers this after the
 * deadline; the transaction then rolls back instead of committing). See db/deadline.ts.
 */
async function commitsBefore(tx: postgres.Sql, deadline: Deadline) {
  assertBeforeDeadline(deadline);
  const [row] = await tx.unsafe(`select ${beforeDeadlineCondition} as ok`, [deadline.at]);
  if (!row?.ok) throw new DeadlineExceeded(deadline.budgetMs, true);
}

/**
 * Marks the current request's deadline as answered when `query` gets an answer from the server
 * (its rows, or an error the server sent), so a deadline passing later names the request, not the
 * database (db/deadline.ts). Observes the query through Promise's own `then`, which does not start
 * it (postgres.js starts a query when its own `then` is called).
 */
function noteAnswer<Q extends Promise<unknown>>(query: Q): Q {
  const deadline = currentDeadline();
  if (deadline && !deadline.answered) {
    Promise.prototype.then.call(
      query,
      () => (deadline.answered = true),
      (e: unknown) => {
        if (e instanceof postgres.PostgresError) deadline.answered = true;
      },
    );
  }
  return query;
}

const globalForDb = globalThis as typeof globalThis & { __meridianDb?: DbHandle; __meridianDbSettings?: ProcessPoolSettings };

/** The process-wide pool's database and how it is opened. */
export interface ProcessPoolSettings extends PoolSettings {
  url: string;
}

/**
 * How the process-wide pool is opened (its URL, size and timeouts from the validated environment:
 * server/env.ts `dbPoolSettings`): the process's entry point calls this before the pool's first use.
 */
export function configureDbPool(settings: ProcessPoolSettings): void {
  if (globalForDb.__meridianDb) throw new Error('configureDbPool after the pool was opened');
  globalForDb.__meridianDbSettings = settings;
}

/**
 * The process-wide pool, kept on `globalThis` because Next may load this module in more than one
 * bundle. Opened on first use with what the entry point gave {@link configureDbPool}.
 */
export function getDbHandle(): DbHandle {
  if (!globalForDb.__meridianDb) {
    const settings = globalForDb.__meridianDbSettings;
    if (!settings) throw new Error('the process-wide database pool is not configured (its entry point calls configureDbPool with DATABASE_URL)');
    const { url, ...options } = settings;
    globalForDb.__meridianDb = createDb(url, options);
  }
  return globalForDb.__meridianDb;
}

export function getDb(): Db {
  return getDbHandle().db;
}

/**
 * A timestamp column of a raw statement (`db.execute`) as a Date: drizzle's postgres-js driver
 * hands those over as PostgreSQL's text (`2026-01-02 03:04:05.678+00`), typed columns as Dates.
 */
export function rawTimestamp<T extends string | Date | null>(value: T): T extends null ? null : Date {
  return (value === null ? null : value instanceof Date ? value : new Date(value)) as T extends null ? null : Date;
}
