import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { runMigrations } from 'graphile-worker';
import { createDb } from './client';

export const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Brings a database to the current schema: the application's drizzle-kit migrations, then
 * graphile-worker's own schema (so `graphile_worker.add_job` exists for in-transaction enqueues).
 * Safe to run concurrently from several processes: drizzle's migrator and graphile-worker both
 * take advisory locks.
 */
export async function migrateDatabase(url: string): Promise<void> {
  const handle = createDb(url, { max: 1, applicationName: 'meridian-migrate' });
  try {
    await handle.sql`select pg_advisory_lock(727100)`;
    try {
      await migrate(handle.db, { migrationsFolder });
    } finally {
      await handle.sql`select pg_advisory_unlock(727100)`;
    }
  } finally {
    await handle.close();
  }
  await runMigrations({ connectionString: url });
}

/** The number of application migrations shipped with this build (for `/readyz`). */
export async function expectedMigrationCount(): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const journal = JSON.parse(await readFile(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
    entries: unknown[];
  };
  return journal.entries.length;
}
