import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { dataDir, env } from '../../server/env';
import { roleOfUrl } from '../../db/roles';
import { EMBEDDED_APP_ROLE, startEmbeddedPostgres } from './embedded-postgres';

/** Where a one-off command's database came from. */
export type DatabaseSource = 'external' | 'embedded-running' | 'embedded-started';

/**
 * For one-off commands (CLI, backup): the database URL to use and how to let go of it.
 * DATABASE_URL when set; otherwise the embedded server — reusing a running `npm start`'s server,
 * or starting it for the duration of the command. With `existing`, an embedded data directory that
 * was never initialised is an error instead of being created (a backup of nothing is a mistake).
 */
export async function openDatabaseUrl(options: { existing?: boolean } = {}): Promise<{
  /** The owner's URL where it is known (DATABASE_OWNER_URL, the embedded superuser), else DATABASE_URL. */
  url: string;
  /** The role the processes connect as, to grant its privileges after migrating (db/roles.ts); none when the owner is not known. */
  appRole?: string;
  source: DatabaseSource;
  release(): Promise<void>;
}> {
  const e = env();
  if (e.DATABASE_URL) {
    const owner = e.DATABASE_OWNER_URL;
    return { url: owner ?? e.DATABASE_URL, appRole: owner ? roleOfUrl(e.DATABASE_URL) : undefined, source: 'external', release: async () => {} };
  }
  const passwordFile = path.join(dataDir(), 'postgres.password');
  if (existsSync(passwordFile)) {
    const password = readFileSync(passwordFile, 'utf8').trim();
    const url = `postgres://meridian:${encodeURIComponent(password)}@127.0.0.1:${e.EMBEDDED_PG_PORT}/meridian`;
    const probe = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
    try {
      await probe`select 1`;
      return { url, appRole: EMBEDDED_APP_ROLE, source: 'embedded-running', release: async () => {} };
    } catch {
      // not running: start it below
    } finally {
      await probe.end({ timeout: 1 });
    }
  }
  if (options.existing && !existsSync(path.join(dataDir(), 'postgres', 'PG_VERSION'))) {
    throw new Error(`no embedded database in ${path.join(dataDir(), 'postgres')} (set DATA_DIR to the data directory, or DATABASE_URL)`);
  }
  const embedded = await startEmbeddedPostgres({ dataDir: dataDir(), port: e.EMBEDDED_PG_PORT, database: 'meridian' });
  return { url: embedded.url, appRole: EMBEDDED_APP_ROLE, source: 'embedded-started', release: () => embedded.stop() };
}
