import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Request deadlines. An adapter (the REST dispatcher, a tRPC procedure) runs its handler under
 * `withDeadline`; everything the handler does with the database sees the deadline through
 * AsyncLocalStorage, without passing it down:
 *
 * - the caller gets `DeadlineExceeded` when the budget is spent, whatever the database is doing
 *   (a stalled or unreachable server cannot hold a request longer than its budget);
 * - a transaction begun for the request commits only before the deadline: its callback's result is
 *   checked on the client before COMMIT is sent, and once more on the server, in the transaction
 *   (`deadlineGuardSql`), so a server that stalled with the transaction open and came back after the
 *   deadline rolls it back instead of committing what the client was told had failed;
 * - a batched statement (db/batch.ts) is not sent for items whose deadline passed, and carries the
 *   earliest deadline of its items into its own WHERE, so it does nothing when it reaches the server
 *   too late.
 *
 * The server-side checks compare the server's clock with the client's absolute deadline: the hosts'
 * clocks must agree (NTP), as for any lease or expiry. What stays ambiguous is only a COMMIT sent
 * before the deadline whose answer came after it; the client is told 503, the write may have
 * committed, and a retry with the same idempotency key (claim name, CNI attachment) answers it.
 */
export class DeadlineExceeded extends Error {
  constructor(
    readonly budgetMs: number,
    /** Whether the database answered a statement of the request: it was working, the request just did not finish in time. */
    readonly answered = false,
  ) {
    super(answered ? `the request did not finish within ${budgetMs} ms` : `the database did not answer within ${budgetMs} ms`);
    this.name = 'DeadlineExceeded';
  }
}

export interface Deadline {
  /** Epoch milliseconds. */
  at: number;
  budgetMs: number;
  /**
   * Set once the database has answered a statement run under this deadline (db/client.ts): a
   * deadline that passes after that names the request's own duration, not the database.
   */
  answered?: boolean;
}

// On globalThis: Next bundles its own copy of this module (the console's procedures set deadlines
// there) while the pool's transaction wrapper (db/client.ts) may come from the server's copy.
const g = globalThis as typeof globalThis & { __meridianDeadlines?: AsyncLocalStorage<Deadline> };
const store = (g.__meridianDeadlines ??= new AsyncLocalStorage<Deadline>());

/** The deadline of the request this code runs for, if any. */
export function currentDeadline(): Deadline | undefined {
  return store.getStore();
}

/** Throws DeadlineExceeded when the current request's deadline has passed. */
export function assertBeforeDeadline(deadline = currentDeadline()): void {
  if (deadline && Date.now() >= deadline.at) throw new DeadlineExceeded(deadline.budgetMs, deadline.answered);
}

/**
 * Runs `fn` with a deadline `budgetMs` from now (an enclosing deadline that is earlier wins), and
 * rejects with DeadlineExceeded when it has not settled by then. `fn` goes on in the background
 * (whatever it still does fails its own deadline checks) and its late outcome is dropped.
 */
export function withDeadline<T>(budgetMs: number, fn: () => Promise<T>): Promise<T> {
  const deadline = deadlineFromNow(budgetMs);
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DeadlineExceeded(deadline.budgetMs, deadline.answered)), Math.max(0, deadline.at - Date.now()));
    store.run(deadline, fn).then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** A deadline `budgetMs` from now, or the enclosing one when that is earlier. */
function deadlineFromNow(budgetMs: number): Deadline {
  const outer = store.getStore();
  const at = Date.now() + budgetMs;
  return outer && outer.at <= at ? outer : { at, budgetMs };
}

/**
 * Runs `fn` under a deadline `budgetMs` from now (an enclosing deadline that is earlier wins)
 * without racing it: for an adapter that answers the deadline itself (the web process's page
 * renders: server/http/page-deadline.ts). What `fn` does with the database sees the deadline as
 * under `withDeadline`; `fn` is given the deadline, to answer it.
 */
export function underDeadline<T>(budgetMs: number, fn: (deadline: Deadline) => T): T {
  const deadline = deadlineFromNow(budgetMs);
  return store.run(deadline, () => fn(deadline));
}

/** The SQL condition "the server's clock is before this deadline" (epoch milliseconds as a parameter). */
export const beforeDeadlineCondition = 'clock_timestamp() < to_timestamp($1::float8 / 1000)';
