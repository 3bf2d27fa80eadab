import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { runMigrations } from 'graphile-worker';
import { createDb } from './client';
import { createPgPool } from './pg';
import { grantApplicationRole } from './roles';

export const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/** One application migration as drizzle-kit's journal lists it (`when` is what drizzle records as `created_at`). */
export interface MigrationEntry {
  idx: number;
  tag: string;
  when: number;
}

/** The application migrations shipped with this build, in order. */
export async function migrationJournal(): Promise<MigrationEntry[]> {
  const journal = JSON.parse(await readFile(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: MigrationEntry[] };
  return journal.entries;
}

/**
 * Brings a database to the current schema: the application's drizzle-kit migrations, then
 * graphile-worker's own schema (so `graphile_worker.add_job` exists for in-transaction enqueues).
 * Safe to run concurrently from several processes: drizzle's migrator and graphile-worker both
 * take advisory locks.
 *
 * `through` (a journal tag) stops the application migrations after that one: restore rebuilds the
 * schema a backup was taken at, loads its rows, then migrates the rest of the way. `appRole`: the
 * role the processes connect as, granted its privileges at the end (db/roles.ts); `url` is then
 * the owner's.
 */
export async function migrateDatabase(url: string, options: { through?: string; appRole?: string } = {}): Promise<void> {
  let folder = migrationsFolder;
  let scratch: string | undefined;
  if (options.through) {
    // drizzle's migrator applies a whole folder: give it a copy whose journal ends at `through`.
    const entries = await migrationJournal();
    const last = entries.findIndex((e) => e.tag === options.through);
    if (last < 0) throw new Error(`unknown migration "${options.through}"`);
    scratch = await mkdtemp(path.join(os.tmpdir(), 'meridian-migrations-'));
    folder = scratch;
    await mkdir(path.join(folder, 'meta'));
    const journal = JSON.parse(await readFile(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: MigrationEntry[] };
    journal.entries = journal.entries.slice(0, last + 1);
    await writeFile(path.join(folder, 'meta', '_journal.json'), JSON.stringify(journal));
    for (const e of journal.entries) await copyFile(path.join(migrationsFolder, `${e.tag}.sql`), path.join(folder, `${e.tag}.sql`));
  }
  const handle = createDb(url, { max: 1, applicationName: 'meridian-migrate' });
  try {
    await handle.sql`select pg_advisory_lock(727100)`;
    try {
      await migrate(handle.db, { migrationsFolder: folder });
    } finally {
      await handle.sql`select pg_advisory_unlock(727100)`;
    }
  } finally {
    await handle.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
  const pgPool = createPgPool(url, { max: 1 });
  pgPool.on('error', () => {}); // an idle connection lost here only ends the migration's pool
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
}

/** The number of application migrations shipped with this build (for `/readyz`). */
export async function expectedMigrationCount(): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const journal = JSON.parse(await readFile(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
    entries: unknown[];
  };
  return journal.entries.length;
}
