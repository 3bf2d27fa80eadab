/**
 * Released migrations never change: a database records a migration as applied and never runs it
 * again, so an edit reaches only databases made afterwards and the two kinds drift apart. A change
 * is a new migration. Two records of what was released hold every file to its text:
 *
 * - `db/migrations/released.sha256` (`sha256sum` format: `cd db/migrations && sha256sum -c
 *   released.sha256`), one line per migration of the journal, appended when a migration is added;
 * - the upgrade fixture (test/upgrade/fixture.sql): the database an older release made records the
 *   SHA-256 drizzle computed of each migration it applied, by the migration's journal time.
 */
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { upgradeFixture } from '@/test/upgrade/fixture';
import { migrationJournal, migrationsFolder } from './journal';

const sha256 = (text: Buffer | string) => createHash('sha256').update(text).digest('hex');

/** `file → checksum` from a `sha256sum` listing. */
export function parseChecksums(listing: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const line of listing.split('\n')) {
    if (!line.trim()) continue;
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
    if (!m) throw new Error(`released.sha256: not a checksum line: ${line}`);
    sums.set(m[2], m[1]);
  }
  return sums;
}

/** `journal time → checksum` of the migrations a pg_dump's `drizzle.__drizzle_migrations` rows record. */
export function appliedInDump(dump: string): Map<number, string> {
  const applied = new Map<number, string>();
  for (const m of dump.matchAll(/^INSERT INTO drizzle\.__drizzle_migrations VALUES \(\d+, '([0-9a-f]{64})', (\d+)\);$/gm)) applied.set(Number(m[2]), m[1]);
  return applied;
}

async function migrationFiles(): Promise<string[]> {
  return (await readdir(migrationsFolder)).filter((name) => name.endsWith('.sql')).sort();
}

describe('released migrations', () => {
  test('the journal and the migration files name the same migrations', async () => {
    const journal = await migrationJournal();
    expect(journal.map((e) => `${e.tag}.sql`).sort()).toEqual(await migrationFiles());
  });

  test('every migration is in released.sha256, with the checksum of its text', async () => {
    const released = parseChecksums(await readFile(path.join(migrationsFolder, 'released.sha256'), 'utf8'));
    const files = await migrationFiles();
    const changed: string[] = [];
    for (const file of files) {
      if (released.has(file) && released.get(file) !== sha256(await readFile(path.join(migrationsFolder, file)))) changed.push(file);
    }
    expect(changed, 'released migrations changed: restore them and write a new migration instead').toEqual([]);
    expect(
      files.filter((file) => !released.has(file)),
      'new migrations: append `sha256sum <file>` (run in db/migrations) to released.sha256',
    ).toEqual([]);
    expect(
      [...released.keys()].filter((file) => !files.includes(file)),
      'released migrations that are gone',
    ).toEqual([]);
  });

  test("every migration the upgrade fixture's release applied has the text that release applied", async () => {
    const applied = appliedInDump(await readFile(upgradeFixture, 'utf8'));
    expect(applied.size).toBeGreaterThan(0);
    const journal = await migrationJournal();
    const differing: string[] = [];
    for (const [when, sum] of applied) {
      const entry = journal.find((e) => e.when === when);
      if (!entry) {
        differing.push(`the migration of journal time ${when} is gone`);
        continue;
      }
      if (sha256(await readFile(path.join(migrationsFolder, `${entry.tag}.sql`))) !== sum) differing.push(entry.tag);
    }
    expect(differing).toEqual([]);
  });
});
