import { z } from 'zod';
import { returnNodeBlockIfEmpty } from '@/server/cni/leases';
import type { TaskContext } from '../types';

const payload = z.object({ poolId: z.uuid() });

/**
 * Runs a grace period after a node block was emptied by a DEL (or carved): returns it to its pool
 * unless a pod has taken an address from it meanwhile (server/cni/leases.ts blockGraceSeconds).
 */
export async function cniReturnBlock(raw: unknown, { db }: TaskContext) {
  const { poolId } = payload.parse(raw);
  await returnNodeBlockIfEmpty(db, poolId);
}
