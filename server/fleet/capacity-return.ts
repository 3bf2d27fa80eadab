/**
 * Returning quarantined capacity to the pool. A device is quarantined because it could not be
 * verified clean (its cleanup failed, or its binding was force-released), so it goes back only the
 * way a release returns a device: a cleanup through the provider, verified with the provider,
 * before it is `Available`. A failed cleanup quarantines it again, with the failure as the reason.
 *
 *   Quarantined ──(return)──▶ Cleaning ──(cleanup verified)──▶ Available (a waiting request is woken)
 *        ▲                                  │
 *        └──────(cleanup failed)────────────┘
 *
 * The return is a binding of its own at the provider: it advances the device's epoch and cleans
 * under a fresh binding id, so it works whatever the device went through (an open epoch of a
 * failed cleanup, a force-released binding, never bound at all) and fences every operation of
 * earlier bindings still in flight. `Cleaning` without a live allocation is this state; with a
 * live allocation the device is being released by its machine's reconciler instead.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, DbOrTx } from '@/db/client';
import { query } from '@/db/query';
import { machineCapacity } from '@/db/schema/fleet';
import { recordEvent, systemActor, type Actor } from '@/server/audit/events';
import { enqueueJob } from '@/server/jobs/enqueue';
import type { ProviderClient } from '@/server/provider';
import { admitOperation, backoffMs, callOperation, getOperationRow, recordOperation, verifyCleanup } from './provider-ops';
import { wakeWaiting, type StepResult } from './reconcile';

const actor = systemActor('fleet-capacity-return');

/** The return's provider operation: one per device epoch, so a retried step finds the same record. */
export const returnOperationId = (capacityId: string, epoch: number) => `return-${capacityId}-${epoch}`;

/** Enqueues the capacity's return in the caller's transaction (keyed and queued per capacity, like a machine's reconciler). */
export function wakeCapacity(tx: DbOrTx, capacityId: string, runAt?: Date) {
  return enqueueJob(tx, 'capacity__reconcile', { capacityId }, { jobKey: `capacity:${capacityId}`, queueName: `capacity:${capacityId}`, runAt });
}

/**
 * Starts the return of a Quarantined device the caller holds locked: Cleaning at the next epoch,
 * the cleanup admitted under a fresh binding id, the request audited with the operator's reason,
 * and the job that drives it enqueued — all in the caller's transaction.
 */
export async function startCapacityReturn(tx: DbOrTx, c: { id: string; deviceRef: string; state: string }, reason: string, by: Actor) {
  const [next] = await query(
    tx,
    sql`
    update ${machineCapacity} set state = 'Cleaning', asset_epoch = asset_epoch + 1, updated_at = now(),
      state_reason = 'returning to the pool: cleanup of epoch ' || (asset_epoch + 1) || ' by the provider, to be verified'
    where id = ${c.id}
    returning asset_epoch::int as epoch`,
    z.object({ epoch: z.number() }),
  );
  const op = await admitOperation(tx, {
    id: returnOperationId(c.id, next.epoch),
    kind: 'cleanup',
    machineId: null,
    capacityId: c.id,
    deviceRef: c.deviceRef,
    bindingId: randomUUID(),
    epoch: next.epoch,
  });
  await recordEvent(tx, {
    actor: by,
    action: 'capacity.returnToPool',
    objectType: 'capacity',
    objectId: c.id,
    objectName: c.deviceRef,
    before: { state: c.state },
    after: { state: 'Cleaning', epoch: next.epoch, operation: op.id },
    reason,
  });
  await wakeCapacity(tx, c.id);
}

/**
 * One step of a device's return: drives its cleanup and, once the provider reports success,
 * verifies the device with the provider. The outcome — Available (waking a waiting request) or
 * Quarantined again with the reason — commits with the operation's record and its event, and only
 * if the device is still in this return (same epoch, Cleaning, unbound).
 */
export async function reconcileCapacityReturn(db: Db, provider: ProviderClient, capacityId: string): Promise<StepResult> {
  const [c] = await query(
    db,
    sql`
    select c.id, c.device_ref as "deviceRef", c.class_id as "classId", c.location_id as "locationId", c.asset_epoch::int as epoch
    from ${machineCapacity} c
    where c.id = ${capacityId} and c.state = 'Cleaning'
      and not exists (select 1 from machine_allocations a where a.capacity_id = c.id and a.status <> 'Released')`,
    z.object({ id: z.string(), deviceRef: z.string(), classId: z.string(), locationId: z.string(), epoch: z.number() }),
  );
  if (!c) return { type: 'done' };
  const op = await getOperationRow(db, returnOperationId(c.id, c.epoch));
  if (!op) return { type: 'failed', reason: `capacity ${c.deviceRef} is Cleaning with no return operation for epoch ${c.epoch}` };
  const call = await callOperation(provider, op);
  const outcome = call.result;
  if (outcome.status === 'running' || outcome.status === 'unknown') {
    await recordOperation(db, op, call);
    const ms = outcome.status === 'running' && outcome.completesAt ? Math.max(50, outcome.completesAt.getTime() - Date.now() + 50) : backoffMs(op.attempts + 1);
    return { type: 'retryAfter', ms, reason: outcome.status === 'running' ? 'cleanup running' : outcome.reason };
  }
  let why = outcome.status === 'failed' ? `returned to the pool, but the cleanup failed: ${outcome.code}: ${outcome.message}` : '';
  if (outcome.status === 'succeeded') {
    const check = await verifyCleanup(provider, c.deviceRef, c.epoch);
    if (check.type === 'unknown') return { type: 'retryAfter', ms: backoffMs(op.attempts + 1), reason: `verification: ${check.reason}` };
    if (check.type === 'dirty') why = `returned to the pool, but ${check.why}`;
  }
  const verified = why === '';
  await db.transaction(async (tx) => {
    await recordOperation(tx, op, call);
    const moved = await tx.execute(sql`
      update ${machineCapacity} set state = ${verified ? 'Available' : 'Quarantined'}, state_reason = ${verified ? null : why}, updated_at = now()
      where id = ${c.id} and state = 'Cleaning' and asset_epoch = ${c.epoch}
        and not exists (select 1 from machine_allocations a where a.capacity_id = ${c.id} and a.status <> 'Released')
      returning 1 as changed`);
    if (moved.length === 0) return;
    await recordEvent(tx, {
      actor,
      action: verified ? 'capacity.available' : 'capacity.quarantine',
      objectType: 'capacity',
      objectId: c.id,
      objectName: c.deviceRef,
      before: { state: 'Cleaning' },
      after: { state: verified ? 'Available' : 'Quarantined' },
      reason: verified ? `cleanup of epoch ${c.epoch} verified (${op.id})` : why,
    });
    if (verified) await wakeWaiting(tx, c.classId, c.locationId, 1);
  });
  return verified ? { type: 'done' } : { type: 'failed', reason: why };
}
