import { resyncFleet } from '@/server/fleet/resync';
import { log } from '@/server/observability/log';
import type { TaskContext } from '../types';

/** Every minute (the crontab): enqueues the reconciler of every unsettled machine or device that has no job (server/fleet/resync.ts). */
export async function fleetResync(_raw: unknown, { db }: TaskContext) {
  const woken = await resyncFleet(db);
  if (woken.machines || woken.capacity) {
    log('warn', `fleet resync: ${woken.machines} machine(s) and ${woken.capacity} device(s) had no job; reconcilers enqueued`, woken);
  }
}
