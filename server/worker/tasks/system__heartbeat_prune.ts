import { lt, sql } from 'drizzle-orm';
import { z } from 'zod';
import { workerHeartbeats } from '@/db/schema';
import type { TaskContext } from '../types';

const payload = z.object({}).passthrough();

/** Hourly (crontab): forgets heartbeats of workers gone for a day, so /readyz counts live ones. */
export async function systemHeartbeatPrune(raw: unknown, { db }: TaskContext) {
  payload.parse(raw ?? {});
  await db.delete(workerHeartbeats).where(lt(workerHeartbeats.lastSeenAt, sql`now() - interval '1 day'`));
}
