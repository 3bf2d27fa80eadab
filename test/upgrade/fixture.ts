import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';

/** A database as an earlier release left it, with data (test/upgrade/make-fixture.ts writes it). */
export const upgradeFixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixture.sql');

/** Loads a plain-SQL dump (INSERTs, no psql meta-commands) into the fresh database at `url`. */
export async function loadDump(url: string, file: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(await readFile(file, 'utf8')).simple();
  } finally {
    await sql.end();
  }
}
