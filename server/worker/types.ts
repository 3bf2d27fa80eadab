import type { JobHelpers } from 'graphile-worker';
import type { Db } from '@/db/client';

/** What every task receives besides its payload. */
export interface TaskContext {
  db: Db;
  helpers: JobHelpers;
}

export type MeridianTask = (payload: unknown, ctx: TaskContext) => Promise<void>;
