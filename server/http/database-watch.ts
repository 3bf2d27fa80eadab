import { AsyncLocalStorage } from 'node:async_hooks';
import { databaseUnavailability, DATABASE_RETRY_AFTER_SECONDS, DomainError } from '@/server/errors';

/**
 * What a request saw of the database, for code that answers it but does not see every failure:
 * next-auth catches what its callbacks throw (a session read that failed becomes "signed out", and
 * its answer clears the session cookie), and Next turns a page that threw into a 500 page. The
 * callbacks note a database that could not serve (`noteDatabaseFailure`); the adapter around them
 * (`observingDatabase`, the page deadline) then answers DatabaseUnavailable instead of what was
 * computed without the database.
 */
interface Watch {
  unavailable?: string;
  parent?: Watch;
}

// On globalThis: Next bundles its own copy of this module (the auth callbacks note there) while the
// front door (server/http/page-deadline.ts) runs from the server's copy.
const g = globalThis as typeof globalThis & { __meridianDatabaseWatch?: AsyncLocalStorage<Watch> };
const store = (g.__meridianDatabaseWatch ??= new AsyncLocalStorage<Watch>());

/** Notes, for the requests watching, that the database could not serve: when `e` says so (db/deadline.ts, errors.ts). */
export function noteDatabaseFailure(e: unknown): void {
  const reason = databaseUnavailability(e);
  if (!reason) return;
  for (let w = store.getStore(); w; w = w.parent) w.unavailable ??= reason;
}

/** Runs `fn`, noting a database failure it throws, and rethrows. */
export async function notingDatabaseFailure<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    noteDatabaseFailure(e);
    throw e;
  }
}

/** Runs `fn` watching the database; `seen` tells what was noted beneath it so far (a reason, or undefined). */
export function watchingDatabase<T>(fn: (seen: () => string | undefined) => T): T {
  const watch: Watch = { parent: store.getStore() };
  return store.run(watch, () => fn(() => watch.unavailable));
}

/**
 * Runs `fn` and rejects with DatabaseUnavailable when the database could not serve it: `fn` threw
 * so, or returned a result computed after a failure was noted beneath it (a session "not found"
 * because its lookup failed).
 */
export async function observingDatabase<T>(fn: () => Promise<T>): Promise<T> {
  let seen!: () => string | undefined;
  const value = await watchingDatabase((s) => {
    seen = s;
    return notingDatabaseFailure(fn);
  });
  const unavailable = seen();
  if (unavailable) throw new DomainError('DatabaseUnavailable', unavailable, undefined, { retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS });
  return value;
}
