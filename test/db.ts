import { inject } from 'vitest';
import { configureDbPool, createDb, type DbHandle } from '../db/client';

// Server code that uses the process-wide pool (the REST handlers, auth) reaches this run's
// database, as a web process's entry point configures it from DATABASE_URL. A test file may
// configure another database before the pool's first use.
configureDbPool({ url: inject('databaseUrl'), max: 10, applicationName: 'meridian-test-process' });

let handle: DbHandle | undefined;

/** The shared pool on this run's fresh test database (see test/global-setup.ts). */
export function testDb(): DbHandle {
  if (!handle) handle = createDb(inject('databaseUrl'), { max: 20, applicationName: 'meridian-test' });
  return handle;
}

/** A short unique suffix for names created by one test. */
export function uniq(prefix = 't'): string {
  return `${prefix}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}
