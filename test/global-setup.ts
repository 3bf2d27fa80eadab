import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../bin/lib/embedded-postgres';
import { migrateDatabase } from '../db/migrate';
import { freePort } from './free-port';
import { loadDump } from './upgrade/fixture';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    /** The dump the run's database was loaded from before migrating ('' when it started empty). */
    upgradeFrom: string;
  }
}

export { freePort };

/** What a test database holds before this build migrates it: nothing, or an older release's dump (`from`). */
export async function prepareDatabase(url: string, from: string): Promise<void> {
  if (from) await loadDump(url, from);
  await migrateDatabase(url);
}

/**
 * One fresh database per test run: on `TEST_DATABASE_URL`/`DATABASE_URL`'s server when set,
 * otherwise on a throwaway embedded PostgreSQL. Migrated once (after loading `from`, a dump of a
 * database an older release made: the upgrade run, test/upgrade/vitest.config.ts); tests share it
 * and isolate themselves by creating their own projects.
 */
export default function setup(project: TestProject) {
  return setupDatabase(project, '');
}

export async function setupDatabase(project: TestProject, from: string) {
  const external = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  const dbName = `meridian_test_${Date.now()}_${process.pid}`;
  let embedded: EmbeddedDatabase | undefined;
  let tmp: string | undefined;
  let url: string;
  let dropUrl: string | undefined;
  if (external) {
    const admin = postgres(external, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${dbName}"`);
    await admin.end();
    const u = new URL(external);
    u.pathname = `/${dbName}`;
    url = u.toString();
    dropUrl = external;
  } else {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'meridian-test-'));
    embedded = await startEmbeddedPostgres({ dataDir: tmp, port: await freePort(), database: dbName });
    url = embedded.url;
  }
  await prepareDatabase(url, from);
  process.env.DATABASE_URL = url;
  project.provide('databaseUrl', url);
  project.provide('upgradeFrom', from);

  return async () => {
    if (dropUrl) {
      const admin = postgres(dropUrl, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists "${dbName}" with (force)`);
      await admin.end();
    }
    if (embedded) await embedded.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  };
}
