import { readMigrationFiles } from 'drizzle-orm/migrator';
import { runMigrations } from 'graphile-worker';
import { createDb } from './client';
import { applyFunctionFiles, definesTriggerFunction, FUNCTION_FILES_TABLE, readFunctionFiles, validateFunctions, type FunctionFile } from './function-files';
import { migrationJournal, migrationsFolder } from './journal';
import { createPgPool } from './pg';
import { grantApplicationRole } from './roles';

export { migrationJournal, migrationsFolder, type MigrationEntry } from './journal';

/** The advisory lock every migrating process takes (the same key whatever the build). */
const MIGRATION_LOCK = 727100;

export interface MigrateResult {
  /** The versioned migrations applied, by journal tag. */
  migrations: string[];
  /** The function files applied (new, changed, or whose functions had drifted), by path. */
  functionFiles: string[];
  /** Functions dropped because no function file defines them any more. */
  functionsDropped: string[];
  /**
   * True when the database has versioned migrations this build does not (a newer build migrated
   * it): then this build leaves every function as it is, rather than put its older text back.
   */
  functionFilesSkipped: boolean;
}

/**
 * Brings a database to the current schema and functions, in one transaction under an advisory
 * lock (several processes may migrate at once; each waits for the one before and then finds
 * nothing left to do):
 *
 *   1. the trigger functions whose files changed (db/function-files.ts): the versioned migrations
 *      create triggers, and `CREATE TRIGGER` needs its function to exist;
 *   2. the versioned migrations (db/migrations: tables, constraints, indexes, triggers and data
 *      changes; those released before the function files, through 0031, also define functions as
 *      they were then, which step 3 replaces) that the database lacks, read and recorded as drizzle's
 *      migrator does (`drizzle.__drizzle_migrations`: the file's hash and its journal `when`; a
 *      migration runs when its `when` is newer than the last one recorded, so editing an applied
 *      migration's text never runs it again), but in this transaction rather than one of its own;
 *   3. every other function file that changed or whose functions a migration redefined, then the
 *      functions no file defines are dropped, and
 *      every function applied has its body checked.
 *
 * So a versioned migration's data change sees the trigger functions' current text and no other
 * function: what it needs, it writes inline. Then graphile-worker's own schema (so
 * `graphile_worker.add_job` exists for in-transaction enqueues), which takes its own lock.
 *
 * `through` (a journal tag) stops the versioned migrations after that one, and applies only the
 * trigger functions (the others are written for the current schema): restore rebuilds the schema a
 * backup was taken at, loads its rows, then migrates the rest of the way. `appRole`: the role the
 * processes connect as, granted its privileges at the end (db/roles.ts), EXECUTE on the functions
 * included; `url` is then the owner's. `functionFiles` replaces this build's files (tests).
 */
export async function migrateDatabase(
  url: string,
  options: { through?: string; appRole?: string; functionFiles?: FunctionFile[] } = {},
): Promise<MigrateResult> {
  const migrations = readMigrationFiles({ migrationsFolder });
  const journal = await migrationJournal();
  let last = journal.length - 1;
  if (options.through) {
    last = journal.findIndex((e) => e.tag === options.through);
    if (last < 0) throw new Error(`unknown migration "${options.through}"`);
  }
  const files = options.functionFiles ?? (await readFunctionFiles());
  const newestOfBuild = migrations[migrations.length - 1].folderMillis;

  const handle = createDb(url, { max: 1, applicationName: 'meridian-migrate' });
  let result: MigrateResult;
  try {
    result = await handle.sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
      await tx`create schema if not exists drizzle`;
      await tx`create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)`;
      await tx.unsafe(FUNCTION_FILES_TABLE);
      const [newest] = await tx<{ created_at: string }[]>`select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`;
      const lastApplied = newest ? Number(newest.created_at) : -Infinity;
      const skipFiles = lastApplied > newestOfBuild;

      const first = skipFiles ? { applied: [], dropped: [] } : await applyFunctionFiles(tx, files, { only: definesTriggerFunction });
      const applied: string[] = [];
      for (const [i, m] of migrations.slice(0, last + 1).entries()) {
        if (m.folderMillis <= lastApplied) continue;
        for (const stmt of m.sql) {
          await tx
            .unsafe(stmt)
            .simple()
            .catch((e: Error) => {
              throw new Error(`migration ${journal[i].tag}: ${e.message}`, { cause: e });
            });
        }
        await tx`insert into drizzle.__drizzle_migrations (hash, created_at) values (${m.hash}, ${m.folderMillis})`;
        applied.push(journal[i].tag);
      }
      const rest = skipFiles || options.through ? { applied: [], dropped: [] } : await applyFunctionFiles(tx, files, { reconcile: true });
      const functionFiles = [...new Set([...first.applied, ...rest.applied])];
      await validateFunctions(
        tx,
        files.filter((f) => functionFiles.includes(f.file)),
      );
      return { migrations: applied, functionFiles, functionsDropped: rest.dropped, functionFilesSkipped: skipFiles };
    });
  } finally {
    await handle.close();
  }
  const pgPool = createPgPool(url, { max: 1 });
  pgPool.on('error', () => {}); // an idle connection lost here only ends the migration's pool
  pgPool.on('connect', (client) => client.on('error', () => {}));
  try {
    await runMigrations({ pgPool });
  } finally {
    await pgPool.end();
  }
  if (options.appRole) {
    const owner = createDb(url, { max: 1, applicationName: 'meridian-migrate' });
    try {
      await grantApplicationRole(owner.sql, options.appRole);
    } finally {
      await owner.close();
    }
  }
  return result;
}

/** What a migration did, in one line for an operator (`npm start`, `meridian migrate`). */
export function describeMigration(r: MigrateResult): string {
  const parts = [`${r.migrations.length} migration(s) applied`];
  if (r.functionFilesSkipped) {
    parts.push('SQL functions left as they are: the database has migrations this build lacks (a newer build migrated it)');
  } else {
    parts.push(
      `${r.functionFiles.length} SQL function file(s) applied${r.functionFiles.length > 0 && r.functionFiles.length <= 5 ? ` (${r.functionFiles.join(', ')})` : ''}`,
    );
    if (r.functionsDropped.length > 0) parts.push(`dropped ${r.functionsDropped.join(', ')} (in no function file)`);
  }
  return parts.join('; ');
}
