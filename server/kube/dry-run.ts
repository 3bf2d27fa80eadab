import type { Db, DbOrTx } from '@/db/client';

/** Thrown to roll a dry run's transaction back, carrying what it decided. */
class DryRunRollback<T> extends Error {
  constructor(readonly result: T) {
    super('dry run: rolled back');
  }
}

/**
 * `dryRun=All` for a domain write that has no preview of its own: the write runs whole (every
 * check, constraint and lock) in a transaction that is then rolled back; its result is returned.
 */
export async function inRolledBackTransaction<T>(db: Db, write: (db: DbOrTx) => Promise<T>): Promise<T> {
  try {
    await db.transaction(async (tx) => {
      throw new DryRunRollback(await write(tx));
    });
  } catch (e) {
    if (e instanceof DryRunRollback) return e.result as T;
    throw e;
  }
  throw new Error('unreachable: a dry run always rolls back');
}
