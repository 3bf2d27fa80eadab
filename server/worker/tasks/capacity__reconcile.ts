import { z } from 'zod';
import { reconcileCapacityReturn, wakeCapacity } from '@/server/fleet/capacity-return';
import { log } from '@/server/observability/log';
import { providerClient } from '@/server/provider/connection';
import { announceWhenDue } from '@/server/jobs/enqueue';
import type { TaskContext } from '../types';

const payload = z.object({ capacityId: z.uuid() });

/**
 * Drives the return of one quarantined device to the pool (server/fleet/capacity-return.ts): one
 * step, then a keyed job with a run time while the provider's cleanup runs or cannot be reached.
 */
export async function capacityReconcile(raw: unknown, { db }: TaskContext) {
  const { capacityId } = payload.parse(raw);
  const result = await reconcileCapacityReturn(db, providerClient(), capacityId);
  if (result.type === 'retryAfter') {
    const runAt = new Date(Date.now() + result.ms);
    await wakeCapacity(db, capacityId, runAt);
    announceWhenDue(db, runAt);
  } else if (result.type === 'failed') {
    log('warn', `capacity ${capacityId} stays quarantined: ${result.reason}`);
  }
}
