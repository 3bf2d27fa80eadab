import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { dataDir, env } from '../../server/env';
import { startEmbeddedPostgres } from './embedded-postgres';

/** Where a one-off command's database came from. */
export type DatabaseSource = 'external' | 'embedded-running' | 'embedded-started';

/**
 * For one-off commands (CLI, backup): the database URL to use and how to let go of it.
 * DATABASE_URL when set; otherwise the embedded server — reusing a running `npm start`'s server,
 * or starting it for the duration of the command. With `existing`, an embedded data directory that
 * was never initialised is an error instead of being created (a backup of nothing is a mistake).
 */
export async function openDatabaseUrl(options: { existing?: boolean } = {}): Promise<{
  url: string;
  source: DatabaseSource;
  release(): Promise<void>;
}> {
  const e = env();
  if (e.DATABASE_URL) return { url: e.DATABASE_URL, source: 'external', release: async () => {} };
  const passwordFile = path.join(dataDir(), 'postgres.password');
  if (existsSync(passwordFile)) {
    const password = readFileSync(passwordFile, 'utf8').trim();
    const url = `postgres://meridian:${encodeURIComponent(password)}@127.0.0.1:${e.EMBEDDED_PG_PORT}/meridian`;
    const probe = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
    try {
      await probe`select 1`;
      return { url, source: 'embedded-running', release: async () => {} };
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
  return { url: embedded.url, source: 'embedded-started', release: () => embedded.stop() };
}
