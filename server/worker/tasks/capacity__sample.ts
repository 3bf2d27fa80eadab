import { z } from 'zod';
import { recordSample } from '@/server/capacity/history';
import type { TaskContext } from '../types';

/** graphile-worker's crontab puts the tick it runs for in the payload; a job added by hand may not. */
const payload = z.object({ _cron: z.object({ ts: z.string() }).optional() }).passthrough();

/**
 * Every CAPACITY_SAMPLE_MINUTES (crontab): one sample of every utilization series from the exact
 * counters, at the crontab's tick (so a tick sampled twice, or backfilled, writes the same rows).
 */
export async function capacitySample(raw: unknown, { db }: TaskContext) {
  const p = payload.parse(raw ?? {});
  const at = p._cron ? new Date(p._cron.ts) : new Date();
  await recordSample(db, Number.isNaN(at.getTime()) ? new Date() : at);
}
