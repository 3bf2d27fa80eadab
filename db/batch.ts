import { z } from 'zod';
import { sql } from 'drizzle-orm';
import { sidePool, type Db } from './client';
import { query } from './query';
import { currentDeadline, DeadlineExceeded, type Deadline } from './deadline';

/**
 * Group commit for hot statements: requests that arrive while earlier ones are in flight wait for
 * the next batch and go to PostgreSQL as one statement. A request that finds fewer than
 * `maxInFlight` batches in flight goes at once, so an idle system sees no added latency; under
 * load, round trips, statements and commits are paid per batch instead of per request (socket
 * writes are the dearest thing a request does on this kind of machine: see bench/cni-add).
 *
 * `run` answers a batch with one outcome per item, in the items' order.
 */
export type Outcome<O> = { value: O } | { error: unknown };

interface Pending<I, O> {
  item: I;
  /** The deadline of the request that submitted the item (db/deadline.ts), if any. */
  deadline?: Deadline;
  resolve(value: O): void;
  reject(error: unknown): void;
}

export interface BatcherOptions<I> {
  /** Items per statement at most. */
  maxBatch: number;
  /** Batches of one lane in flight at once. */
  maxInFlight: number;
  /**
   * Items of different lanes never share a batch, and the lanes' batches run side by side: items
   * that lock the same rows (a node's address blocks) go in one lane, so concurrent batches do not
   * wait for each other's commits. One lane when absent.
   */
  lane?: (item: I) => number;
}

interface Lane<I, O> {
  queue: Pending<I, O>[];
  inFlight: number;
}

export class Batcher<I, O> {
  private lanes = new Map<number, Lane<I, O>>();

  /**
   * `run` gets the earliest deadline of the batch's items (epoch ms), if any has one: a statement
   * that reaches the server after it must do nothing (see sqlFunctionBatches).
   */
  constructor(
    private readonly run: (items: I[], deadline?: Deadline) => Promise<Outcome<O>[]>,
    private readonly options: BatcherOptions<I>,
  ) {}

  submit(item: I): Promise<O> {
    const key = this.options.lane?.(item) ?? 0;
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = { queue: [], inFlight: 0 }));
    const into = lane;
    const deadline = currentDeadline();
    return new Promise<O>((resolve, reject) => {
      into.queue.push({ item, deadline, resolve, reject });
      this.pump(into);
    });
  }

  private pump(lane: Lane<I, O>) {
    while (lane.inFlight < this.options.maxInFlight && lane.queue.length > 0) {
      // Items whose request already gave up (it was answered 503) are not sent at all.
      const now = Date.now();
      lane.queue = lane.queue.filter((p) => {
        if (!p.deadline || now < p.deadline.at) return true;
        p.reject(new DeadlineExceeded(p.deadline.budgetMs, p.deadline.answered));
        return false;
      });
      if (lane.queue.length === 0) break;
      const batch = lane.queue.splice(0, this.options.maxBatch);
      lane.inFlight++;
      void this.settle(batch).finally(() => {
        lane.inFlight--;
        this.pump(lane);
      });
    }
  }

  private async settle(batch: Pending<I, O>[]) {
    try {
      let earliest: Deadline | undefined;
      for (const p of batch) if (p.deadline && (!earliest || p.deadline.at < earliest.at)) earliest = p.deadline;
      const outcomes = await this.run(
        batch.map((p) => p.item),
        earliest,
      );
      batch.forEach((p, i) => {
        const outcome = outcomes[i];
        if (outcome && 'value' in outcome) p.resolve(outcome.value);
        else p.reject(outcome ? outcome.error : new Error('batch answered fewer items than it was given'));
      });
    } catch (e) {
      for (const p of batch) p.reject(e);
    }
  }
}

/** One batcher per pool (tests and benches open several): `make` runs once per `Db`. */
export function perPool<B>(make: (db: Db) => B): (db: Db) => B {
  const made = new WeakMap<Db, B>();
  return (db) => {
    let b = made.get(db);
    if (b === undefined) made.set(db, (b = make(db)));
    return b;
  };
}

/** Which of `lanes` lanes items with these keys go in (a stable hash: one key set, one lane). */
export function laneOf(lanes: number, ...keys: string[]): number {
  let h = 0;
  for (const k of keys) for (let i = 0; i < k.length; i++) h = (Math.imul(h, 31) + k.charCodeAt(i)) | 0;
  return Math.abs(h) % lanes;
}

/** Item indexes ordered by their keys (the lock order a batch statement takes rows in). */
export function lockOrder<I>(items: I[], keys: (item: I) => string[]): number[] {
  const k = items.map(keys);
  return items
    .map((_, i) => i)
    .sort((a, b) => {
      for (let j = 0; j < k[a].length; j++) if (k[a][j] !== k[b][j]) return k[a][j] < k[b][j] ? -1 : 1;
      return 0;
    });
}

/**
 * `where` clause of a batch statement: true when there is no deadline; otherwise true only while the
 * server's clock is before it, so a statement that reached a stalled server too late does nothing.
 */
function beforeDeadline(deadline: Deadline | undefined) {
  return deadline ? sql`clock_timestamp() < to_timestamp(${deadline.at}::float8 / 1000)` : sql`true`;
}

/** `select <fn>(args::jsonb)` for one item (`fn` a SQL function's name): its result, or its error as the outcome. */
async function jsonFunctionOutcome(db: Db, fn: string, args: unknown, deadline?: Deadline): Promise<Outcome<unknown>> {
  try {
    const rows = await query(
      db,
      sql`select ${sql.raw(fn)}(${JSON.stringify(args)}::jsonb) as result where ${beforeDeadline(deadline)}`,
      z.object({ result: z.unknown() }),
    );
    if (rows.length === 0) return { error: new DeadlineExceeded(deadline?.budgetMs ?? 0, true) };
    return { value: rows[0].result };
  } catch (error) {
    return { error };
  }
}

export interface SqlFunctionBatches<I> {
  /** The SQL function that takes one item as jsonb. */
  one: string;
  /** The SQL function that takes a jsonb array of items and answers a jsonb array, in their order. */
  many: string;
  /** The keys a batch's items are ordered by before `many` runs: the order it locks rows in. */
  lockKeys: (item: I) => string[];
  /** What puts items in one lane: items that lock the same rows share one (one batch of a lane in flight at a time). */
  laneKeys: (item: I) => string[];
  /**
   * How many lanes the items spread over: the batches run on that many connections of their own
   * (db/client.ts: sidePool). A function is read once per pool, when its first item arrives.
   */
  lanes: number | (() => number);
  maxBatch: number;
  /** An item's answer from `many` as its outcome (a refusal `one` would have raised); the answer itself when absent. */
  outcome?: (answer: unknown) => Outcome<unknown>;
}

/**
 * Statements and items each batched SQL function has run in this process (see `batchStatistics`),
 * on `globalThis`: the REST handlers and Next's `/metrics` route may load this module separately.
 */
export type BatchCounts = { statements: number; items: number; fallbacks: number };
const g = globalThis as typeof globalThis & { __meridianBatchStatistics?: Map<string, BatchCounts> };
const statistics = (g.__meridianBatchStatistics ??= new Map());

function counted(many: string): BatchCounts {
  let s = statistics.get(many);
  if (!s) statistics.set(many, (s = { statements: 0, items: 0, fallbacks: 0 }));
  return s;
}

/**
 * Per batched SQL function (named by its `many`): the statements this process sent (a lone item's
 * `one` counts as a statement of one), the items they carried — items ÷ statements is the mean
 * batch — and the batches that raised and ran again one by one. Read by `/metrics`.
 */
export function batchStatistics(): ({ fn: string } & BatchCounts)[] {
  return [...statistics].map(([fn, s]) => ({ fn, ...s }));
}

/**
 * A SQL function called in batches: an item alone goes as `one(item)`; several go as
 * `many(items)` in lock order and get their answers back in theirs. A `many` that raises was undone
 * whole, and its items run again one by one, so each caller gets its own item's outcome. The
 * statements run on a pool of one connection per lane beside `db`'s.
 */
export function sqlFunctionBatches<I>(spec: SqlFunctionBatches<I>): (db: Db, item: I) => Promise<unknown> {
  for (const fn of [spec.one, spec.many]) if (!/^[a-z_][a-z0-9_]*$/.test(fn)) throw new Error(`not a function name: ${fn}`);
  const batcher = perPool((pool) => {
    const lanes = typeof spec.lanes === 'function' ? spec.lanes() : spec.lanes;
    const db = sidePool(pool, spec.many, lanes);
    return new Batcher<I, unknown>(
      async (items, deadline) => {
        const stats = counted(spec.many);
        stats.statements++;
        stats.items += items.length;
        if (items.length === 1) return [await jsonFunctionOutcome(db, spec.one, items[0], deadline)];
        const order = lockOrder(items, spec.lockKeys);
        let answers: unknown[];
        try {
          const rows = await query(
            db,
            sql`select ${sql.raw(spec.many)}(${JSON.stringify(order.map((i) => items[i]))}::jsonb) as answers where ${beforeDeadline(deadline)}`,
            z.object({ answers: z.array(z.unknown()) }),
          );
          if (rows.length === 0) return items.map(() => ({ error: new DeadlineExceeded(deadline?.budgetMs ?? 0, true) }));
          answers = rows[0].answers;
        } catch {
          stats.fallbacks++;
          // On the main pool: a batch's worth of single statements would queue on the lanes' few connections.
          return Promise.all(items.map((item) => jsonFunctionOutcome(pool, spec.one, item, deadline)));
        }
        const outcomes: Outcome<unknown>[] = new Array(items.length);
        order.forEach((i, k) => (outcomes[i] = spec.outcome ? spec.outcome(answers[k]) : { value: answers[k] }));
        return outcomes;
      },
      { maxBatch: spec.maxBatch, maxInFlight: 1, lane: (item) => laneOf(lanes, ...spec.laneKeys(item)) },
    );
  });
  return (db, item) => batcher(db).submit(item);
}
