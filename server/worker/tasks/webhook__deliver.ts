import { z } from 'zod';
import { deliverPending, webhookSettings } from '@/server/capacity/webhooks';
import { env } from '@/server/env';
import { announceWhenDue, enqueueJob } from '@/server/jobs/enqueue';
import type { TaskContext } from '../types';

const payload = z.object({ endpointId: z.string().uuid() });

/**
 * Sends one webhook endpoint's due deliveries from the outbox (keyed `webhook:<endpoint>`, so one
 * run per endpoint at a time), then schedules itself for the next retry when something is still
 * pending: a failed delivery waits out its backoff as a job with a run time, never a loop.
 */
export async function webhookDeliver(raw: unknown, { db }: TaskContext) {
  const { endpointId } = payload.parse(raw);
  const result = await deliverPending(db, endpointId, webhookSettings(env()));
  if (result.nextAttemptAt) {
    await enqueueJob(db, 'webhook__deliver', { endpointId }, { jobKey: `webhook:${endpointId}`, runAt: result.nextAttemptAt });
    announceWhenDue(db, result.nextAttemptAt);
  }
}
