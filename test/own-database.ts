import postgres from 'postgres';
import { inject } from 'vitest';
import { prepareDatabase } from './global-setup';

/**
 * A fresh, migrated database of the calling test file's own on the run's server, for a test that
 * reads database-wide figures (`pg_stat_database`, invariants over every row) which other files
 * running beside it would disturb. `drop()` removes it.
 */
export async function ownDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const shared = inject('databaseUrl');
  const name = `${prefix}_${Date.now()}_${Math.random().toString(36).slice(2, 6)}`;
  const admin = postgres(shared, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  await admin.end();
  const u = new URL(shared);
  u.pathname = `/${name}`;
  await prepareDatabase(u.toString(), inject('upgradeFrom'));
  return {
    url: u.toString(),
    drop: async () => {
      const a = postgres(shared, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists "${name}" with (force)`);
      await a.end();
    },
  };
}
