import { z } from 'zod';
import { pruneHistory } from '@/server/capacity/history';
import { log } from '@/server/observability/log';
import type { TaskContext } from '../types';

const payload = z.object({}).passthrough();

/** Hourly (crontab): drops utilization samples past their period's retention (2 days, 90 days, 3 years). */
export async function capacityPrune(raw: unknown, { db }: TaskContext) {
  payload.parse(raw ?? {});
  const pruned = await pruneHistory(db);
  if (pruned.samples || pruned.series) log('info', `capacity history pruned: ${pruned.samples} sample(s), ${pruned.series} series`);
}
