import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { query } from '@/db/query';

/**
 * What a watch needs of a row that does not carry it (declare.ts `WatchSource`): a pod lease's
 * cluster name, an allocation's project. Each is a value that never changes for its key, read once
 * per process and kept (bounded).
 */

const cache = new Map<string, string | null>();
const MAX = 100_000;
const valueRow = z.object({ value: z.string() });

async function once(key: string, read: () => Promise<string | null>): Promise<string | null> {
  if (cache.has(key)) return cache.get(key) ?? null;
  const value = await read();
  // A missing row is not remembered: it may be committed later.
  if (value === null) return null;
  if (cache.size >= MAX) cache.delete(cache.keys().next().value as string);
  cache.set(key, value);
  return value;
}

const first = async (db: DbOrTx, statement: ReturnType<typeof sql>) => (await query(db, statement, valueRow))[0]?.value ?? null;

/** A cluster's name (immutable). */
export const clusterName = (db: DbOrTx, clusterId: string) =>
  once(`cluster:${clusterId}`, () => first(db, sql`select name as value from clusters where id = ${clusterId}`));

/** A machine's project (immutable). */
export const machineProject = (db: DbOrTx, machineId: string) =>
  once(`machine:${machineId}`, () => first(db, sql`select project_id::text as value from machines where id = ${machineId}`));

/** A project's slug (immutable). */
export const projectSlug = (db: DbOrTx, projectId: string) =>
  once(`project:${projectId}`, () => first(db, sql`select slug as value from projects where id = ${projectId}`));

/** A user's e-mail address (kept: a member's name). */
export const userEmail = (db: DbOrTx, userId: string) => once(`user:${userId}`, () => first(db, sql`select email as value from users where id = ${userId}`));
