import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The versioned migrations' journal, apart from db/migrate.ts: the web process reads it for
 * `/readyz`, and its bundle must not take in the migrator (which reads the function files from the
 * source tree).
 */
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

/** The number of application migrations shipped with this build (for `/readyz`). */
export async function expectedMigrationCount(): Promise<number> {
  return (await migrationJournal()).length;
}
