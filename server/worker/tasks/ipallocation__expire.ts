import { z } from 'zod';
import { systemActor } from '@/server/audit/events';
import { releaseRetainedAllocation } from '@/server/ipam/claims';
import type { TaskContext } from '../types';

const payload = z.object({ allocationId: z.uuid() });

/**
 * Runs when a retained allocation's retention lease ends (scheduled with `run_at` when its claim
 * was deleted): releases it unless an operator already did, or the lease was extended.
 */
export async function ipallocationExpire(raw: unknown, { db }: TaskContext) {
  const { allocationId } = payload.parse(raw);
  await releaseRetainedAllocation(db, allocationId, systemActor('retention-expiry'), { onlyIfExpired: true });
}
