import { inject } from 'vitest';
import { createDb, type DbHandle } from '../db/client';

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
