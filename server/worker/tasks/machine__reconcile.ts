import { z } from 'zod';
import { reconcileMachine } from '@/server/fleet/reconcile';
import { wakeMachine } from '@/server/fleet/machines';
import { announceWhenDue } from '@/server/jobs/enqueue';
import { log } from '@/server/observability/log';
import { providerClient } from '@/server/provider/connection';
import type { TaskContext } from '../types';

const payload = z.object({ machineId: z.uuid() });
/** Steps taken in one job run before yielding (a machine goes Pending → Ready in about five). */
const MAX_STEPS = 12;

/**
 * Drives one machine: takes reconciler steps until it waits for something, then schedules itself
 * when that is a deadline (`retryAfter` → a job with a run time, keyed per machine). Waiting for an
 * event (approval, capacity) schedules nothing: the event enqueues this job.
 */
export async function machineReconcile(raw: unknown, { db }: TaskContext) {
  const { machineId } = payload.parse(raw);
  const provider = providerClient();
  for (let step = 0; step < MAX_STEPS; step++) {
    const result = await reconcileMachine(db, provider, machineId);
    if (result.type === 'continue') continue;
    if (result.type === 'retryAfter') {
      const runAt = new Date(Date.now() + result.ms);
      await wakeMachine(db, machineId, runAt);
      announceWhenDue(db, runAt);
      return;
    }
    if (result.type === 'failed') log('warn', `machine ${machineId} failed: ${result.reason}`);
    return;
  }
  await wakeMachine(db, machineId);
}
