import { z } from 'zod';
import { evaluateAlerts } from '@/server/capacity/alerts';
import { recordSample, SAMPLE_DUTY } from '@/server/capacity/history';
import { env } from '@/server/env';
import type { TaskContext } from '../types';

/** graphile-worker's crontab puts the tick it runs for in the payload; a job added by hand may not. */
const payload = z.object({ _cron: z.object({ ts: z.string() }).optional() }).passthrough();

/**
 * Every CAPACITY_SAMPLE_MINUTES (crontab): one sample of every utilization series from the exact
 * counters, at the crontab's tick (so a tick sampled twice, or backfilled, writes the same rows),
 * paced so that requests running beside it hardly notice it (about SAMPLE_DUTY of one backend,
 * done within half the interval); then the alert conditions (their transitions, events and webhook
 * outbox in one statement).
 */
export async function capacitySample(raw: unknown, { db, helpers }: TaskContext) {
  const p = payload.parse(raw ?? {});
  const at = p._cron ? new Date(p._cron.ts) : new Date();
  const when = Number.isNaN(at.getTime()) ? new Date() : at;
  const interval = env().CAPACITY_SAMPLE_MINUTES * 60_000;
  await recordSample(db, when, { duty: SAMPLE_DUTY, finishBy: Date.now() + interval / 2, signal: helpers.abortSignal });
  // Then the alerts, from the counters as sampled; the forecast condition once an hour.
  await evaluateAlerts(db, when, { forecast: when.getUTCMinutes() < env().CAPACITY_SAMPLE_MINUTES });
}
