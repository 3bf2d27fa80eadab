import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, DbOrTx } from '@/db/client';
import { query, timestampColumn } from '@/db/query';
import { machineAllocations, machineCapacity, machines, providerOperations } from '@/db/schema/fleet';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError } from '@/server/errors';
import { MACHINE_SERVICE } from './catalogue';
import { startCapacityReturn } from './capacity-return';
import { deleteMachine, wakeMachine } from './machines';
import { transitionMachine, type MachinePhase } from './phases';
import { wakeWaiting } from './reconcile';

/** Requests awaiting approval, oldest first, with the free capacity that matches each. */
export async function approvalQueue(db: DbOrTx, input: { limit: number; offset: number }) {
  return query(
    db,
    sql`
    select m.id, m.name, p.slug as project, k.name as class, l.name as location, pf.name as profile, m.created_at as "createdAt", m.created_by as "createdBy",
      (select count(*)::int from machine_capacity c where c.class_id = m.class_id and c.location_id = m.location_id
         and c.state = 'Available' and c.health = 'Healthy' and c.available) as "freeCapacity"
    from machines m join projects p on p.id = m.project_id join machine_classes k on k.id = m.class_id
      join locations l on l.id = m.location_id join machine_profiles pf on pf.id = m.profile_id
    where m.phase = 'AwaitingApproval' and m.deletion_requested_at is null
    order by m.created_at limit ${input.limit} offset ${input.offset}`,
    z.object({
      id: z.string(),
      name: z.string(),
      project: z.string(),
      class: z.string(),
      location: z.string(),
      profile: z.string(),
      createdAt: timestampColumn,
      createdBy: z.string(),
      freeCapacity: z.number(),
    }),
  );
}

/** Capacity by location and class with health and state counts (the inventory). */
export async function inventory(db: DbOrTx) {
  return query(
    db,
    sql`
    select l.name as location, k.name as class, c.state, c.health, count(*)::int as count
    from machine_capacity c join locations l on l.id = c.location_id join machine_classes k on k.id = c.class_id
    group by 1, 2, 3, 4 order by 1, 2, 3, 4`,
    z.object({ location: z.string(), class: z.string(), state: z.string(), health: z.string(), count: z.number() }),
  );
}

export type CapacityState = 'Available' | 'Bound' | 'Cleaning' | 'Quarantined' | 'Retired';

/** One capacity row as operators see it: where, what, its evidence, its state and what is bound to it. */
export interface CapacityView {
  id: string;
  deviceRef: string;
  location: string;
  class: string;
  health: string;
  available: boolean;
  observedAt: Date;
  state: CapacityState;
  stateReason: string | null;
  assetEpoch: number;
  updatedAt: Date;
  machine: string | null;
  project: string | null;
  /** Install attempts that failed on this device since its last successful install. */
  failedInstalls: number;
  /** Why no machine can be placed in the device's location (its machine service), or null when it can. */
  locationUnavailable: string | null;
}

const capacitySelect = sql`
    select c.id, c.device_ref as "deviceRef", l.name as location, k.name as class, c.health, c.available, c.observed_at as "observedAt",
           c.state, c.state_reason as "stateReason", c.asset_epoch as "assetEpoch", c.updated_at as "updatedAt",
           m.name as machine, p.slug as project,
           (select count(*)::int from installations i join machine_allocations ia on ia.id = i.allocation_id
             where ia.capacity_id = c.id and i.status = 'Failed'
               and i.created_at > coalesce((select max(s.created_at) from installations s join machine_allocations sa on sa.id = s.allocation_id
                                              where sa.capacity_id = c.id and s.status = 'Succeeded'), '-infinity')) as "failedInstalls",
           case when not l.ready then 'the location is not Ready'
                else (select case when count(*) = 0 then 'the location publishes no availability'
                                  when count(*) > 1 then 'the location publishes conflicting availability'
                                  when bool_and(sa.status = 'Available') then null
                                  else coalesce(max(sa.reason), max(sa.status)) end
                      from service_availability sa where sa.location_id = l.id and sa.service = ${MACHINE_SERVICE}) end as "locationUnavailable"
    from machine_capacity c join locations l on l.id = c.location_id join machine_classes k on k.id = c.class_id
      left join machine_allocations a on a.capacity_id = c.id and a.status <> 'Released'
      left join machines m on m.id = a.machine_id left join projects p on p.id = m.project_id`;

const capacityRow = z.object({
  id: z.string(),
  deviceRef: z.string(),
  location: z.string(),
  class: z.string(),
  health: z.string(),
  available: z.boolean(),
  observedAt: timestampColumn,
  state: z.enum(['Available', 'Bound', 'Cleaning', 'Quarantined', 'Retired']),
  stateReason: z.string().nullable(),
  assetEpoch: z.coerce.number(),
  updatedAt: timestampColumn,
  machine: z.string().nullable(),
  project: z.string().nullable(),
  failedInstalls: z.number(),
  locationUnavailable: z.string().nullable(),
}) satisfies z.ZodType<CapacityView>;

export async function listCapacity(db: DbOrTx, input: { state?: string; location?: string; search?: string; limit: number; offset: number }) {
  const filters = [sql`true`];
  if (input.state) filters.push(sql`c.state = ${input.state}`);
  if (input.location) filters.push(sql`l.name = ${input.location}`);
  if (input.search) filters.push(sql`c.device_ref ilike ${'%' + input.search + '%'}`);
  const where = sql.join(filters, sql` and `);
  const items = await query(
    db,
    sql`${capacitySelect} where ${where} order by l.name, k.name, c.device_ref limit ${input.limit} offset ${input.offset}`,
    capacityRow,
  );
  const [{ total }] = await query(
    db,
    sql`select count(*)::int as total from machine_capacity c join locations l on l.id = c.location_id where ${where}`,
    z.object({ total: z.number() }),
  );
  return { items, total };
}

/** One capacity by its device reference (the provider's immutable name for the machine), or NotFound. */
export async function getCapacity(db: DbOrTx, deviceRef: string): Promise<CapacityView> {
  const [row] = await query(db, sql`${capacitySelect} where c.device_ref = ${deviceRef}`, capacityRow);
  if (!row) throw new DomainError('NotFound', `capacity "${deviceRef}" not found`, 'name');
  return row;
}

/** Live allocations across projects. */
export async function liveAllocations(db: DbOrTx, input: { limit: number; offset: number }) {
  return query(
    db,
    sql`
    select a.id, a.status, a.epoch, a.created_at as "createdAt", c.device_ref as "deviceRef", m.id as "machineId", m.name as machine, m.phase, p.slug as project
    from machine_allocations a join machine_capacity c on c.id = a.capacity_id join machines m on m.id = a.machine_id join projects p on p.id = m.project_id
    where a.status <> 'Released' order by a.created_at desc limit ${input.limit} offset ${input.offset}`,
    z.object({
      id: z.string(),
      status: z.string(),
      epoch: z.union([z.string(), z.number()]),
      createdAt: timestampColumn,
      deviceRef: z.string(),
      machineId: z.string(),
      machine: z.string(),
      phase: z.string(),
      project: z.string(),
    }),
  );
}

/**
 * Whether operation `o` still needs an operator's attention: its outcome is Unknown, it failed or
 * it is not done, and nothing has resolved it since — no operator acknowledged it, its device was
 * not retired, and no later operation on its device (fencing tokens only grow per device)
 * succeeded that settles it: a retry of the same kind for the same binding, or a cleanup that
 * closed its epoch or a later one (a verified release or return to the pool: nothing of that
 * binding can act any more).
 */
const needsAttention = sql`
  o.state in ('Unknown', 'Failed', 'Admitted', 'Submitted') and o.acknowledged_at is null
  and not exists (select 1 from machine_capacity rc where rc.id = o.capacity_id and rc.state = 'Retired')
  and not exists (
    select 1 from provider_operations later
    where later.capacity_id = o.capacity_id and later.fencing_token > o.fencing_token and later.state = 'Succeeded'
      and ((later.kind = o.kind and later.binding_id = o.binding_id) or (later.kind = 'cleanup' and later.epoch >= o.epoch)))`;

/** Provider operations that need attention (see `needsAttention`), most recently changed first. */
export async function troubledOperations(db: DbOrTx, input: { limit: number }) {
  return query(
    db,
    sql`
    select o.id, o.kind, o.state, o.attempts, o.last_error as "lastError", o.epoch, o.fencing_token as "fencingToken", o.device_ref as "deviceRef",
           o.updated_at as "updatedAt", m.name as machine, p.slug as project, o.result->>'caller' as caller
    from provider_operations o left join machines m on m.id = o.machine_id left join projects p on p.id = m.project_id
    where ${needsAttention} order by o.updated_at desc limit ${input.limit}`,
    z.object({
      id: z.string(),
      kind: z.string(),
      state: z.string(),
      attempts: z.number(),
      lastError: z.string().nullable(),
      // bigint columns: PostgreSQL's text, as the driver hands them over.
      epoch: z.union([z.string(), z.number()]).nullable(),
      fencingToken: z.union([z.string(), z.number()]).nullable(),
      deviceRef: z.string().nullable(),
      updatedAt: timestampColumn,
      machine: z.string().nullable(),
      project: z.string().nullable(),
      caller: z.string().nullable(),
    }),
  );
}

/**
 * An operator acknowledges an operation that needs attention, with a note (audited): it leaves the
 * list. NotFound for an unknown id; InvalidTransition when it needs no attention (done, or resolved
 * by a later operation); Conflict, naming who, when someone acknowledged it first.
 */
export async function acknowledgeOperation(db: Db, operationId: string, note: string, actor: Actor) {
  const text = note.trim();
  if (!text) throw new DomainError('ValidationFailed', 'a note is required', 'note');
  return db.transaction(async (tx) => {
    const [o] = await query(
      tx,
      sql`
      select o.id, o.kind, o.state, o.device_ref as "deviceRef", o.acknowledged_by as "acknowledgedBy", o.acknowledgement,
             (${needsAttention}) as "needsAttention", m.project_id as "projectId"
      from provider_operations o left join machines m on m.id = o.machine_id
      where o.id = ${operationId} for update of o`,
      z.object({
        id: z.string(),
        kind: z.string(),
        state: z.string(),
        deviceRef: z.string(),
        acknowledgedBy: z.string().nullable(),
        acknowledgement: z.string().nullable(),
        needsAttention: z.boolean(),
        projectId: z.string().nullable(),
      }),
    );
    if (!o) throw new DomainError('NotFound', `provider operation ${operationId} not found`, 'id');
    if (o.acknowledgedBy !== null)
      throw new DomainError('Conflict', `provider operation ${o.id} was already acknowledged by ${o.acknowledgedBy}: ${o.acknowledgement}`, 'id');
    if (!o.needsAttention)
      throw new DomainError(
        'InvalidTransition',
        `provider operation ${o.id} (${o.state}) does not need attention: it is done or a later operation resolved it`,
        'id',
      );
    await tx
      .update(providerOperations)
      .set({ acknowledgedAt: sql`now()`, acknowledgedBy: actor.label, acknowledgement: text, updatedAt: sql`now()` })
      .where(eq(providerOperations.id, o.id))
      .returning({ id: providerOperations.id });
    await recordEvent(tx, {
      actor,
      projectId: o.projectId,
      action: 'operation.acknowledge',
      objectType: 'operation',
      objectId: o.id,
      objectName: `${o.kind} on ${o.deviceRef}`,
      before: { state: o.state },
      reason: text,
    });
    return { id: o.id, acknowledgedBy: actor.label };
  });
}

/** Operator release of a machine (same path as the tenant's delete: cleanup, verify, return). */
export async function releaseMachineAsOperator(db: Db, machineId: string, reason: string, actor: Actor) {
  const [m] = await db.select({ projectId: machines.projectId, name: machines.name }).from(machines).where(eq(machines.id, machineId));
  if (!m) throw new DomainError('NotFound', `machine ${machineId} not found`);
  return deleteMachine(db, m.projectId, m.name, actor, reason || 'released by an operator');
}

/**
 * Force release: ends the binding without waiting for the provider (e.g. the provider lost the
 * asset). The capacity cannot be verified clean, so it is quarantined for inspection, never
 * returned to the pool directly.
 */
export async function forceReleaseMachine(db: Db, machineId: string, reason: string, actor: Actor) {
  if (!reason.trim()) throw new DomainError('ValidationFailed', 'a reason is required for a force release', 'reason');
  return db.transaction(async (tx) => {
    const [m] = await tx
      .select({ id: machines.id, projectId: machines.projectId, name: machines.name, phase: machines.phase })
      .from(machines)
      .where(eq(machines.id, machineId))
      .for('update');
    if (!m) throw new DomainError('NotFound', `machine ${machineId} not found`);
    const [a] = await tx
      .select({ id: machineAllocations.id, capacityId: machineAllocations.capacityId })
      .from(machineAllocations)
      .where(sql`${machineAllocations.machineId} = ${m.id} and ${machineAllocations.status} <> 'Released'`);
    if (a) {
      await tx
        .update(machineAllocations)
        .set({ status: 'Released', releasedAt: sql`now()`, releaseReason: `force released: ${reason}` })
        .where(eq(machineAllocations.id, a.id))
        .returning({ id: machineAllocations.id });
      await tx
        .update(machineCapacity)
        .set({ state: 'Quarantined', stateReason: `force released: ${reason}`, updatedAt: sql`now()` })
        .where(eq(machineCapacity.id, a.capacityId))
        .returning({ id: machineCapacity.id });
    }
    await tx
      .update(machines)
      .set({ deletionRequestedAt: sql`coalesce(deletion_requested_at, now())` })
      .where(eq(machines.id, m.id))
      .returning({ id: machines.id });
    await recordEvent(tx, {
      actor,
      projectId: m.projectId,
      action: 'machine.release.forced',
      objectType: 'machine',
      objectId: m.id,
      objectName: m.name,
      reason,
    });
    // A machine that never bound is left to its reconciler, which releases it as a deletion does
    // (its quota and addresses with it, so its name can be taken again); one that was bound fails.
    const phase = m.phase as MachinePhase;
    if (phase !== 'Released' && phase !== 'Releasing' && phase !== 'Failed' && phase !== 'Pending' && phase !== 'AwaitingApproval') {
      await transitionMachine(tx, m, phase, 'Failed', `force released: ${reason}`, actor);
    }
    await wakeMachine(tx, m.id);
    return { id: m.id, name: m.name };
  });
}

export type CapacityAction = 'quarantine' | 'returnToPool' | 'retire';

/**
 * Operator actions on capacity: quarantine (not while bound), return a quarantined one to the pool,
 * retire. A return re-runs the cleanup through the provider and the device is Available only once
 * it is verified (answers `Cleaning`; see capacity-return.ts). With `force` (a reason required) a
 * return skips the provider and makes the device Available at once, audited as forced.
 */
export async function setCapacityState(db: Db, capacityId: string, action: CapacityAction, reason: string, actor: Actor, options: { force?: boolean } = {}) {
  const force = action === 'returnToPool' && Boolean(options.force);
  if (force && !reason.trim()) throw new DomainError('ValidationFailed', 'a reason is required to force a return to the pool', 'reason');
  return db.transaction(async (tx) => {
    const [c] = await tx.select().from(machineCapacity).where(eq(machineCapacity.id, capacityId)).for('update');
    if (!c) throw new DomainError('NotFound', `capacity ${capacityId} not found`);
    const allowed: Record<CapacityAction, string[]> = { quarantine: ['Available'], returnToPool: ['Quarantined'], retire: ['Available', 'Quarantined'] };
    if (!allowed[action].includes(c.state)) throw new DomainError('InvalidTransition', `capacity ${c.deviceRef} is ${c.state}; cannot ${action}`);
    if (action === 'returnToPool' && !force) {
      await startCapacityReturn(tx, c, reason, actor);
      return { id: c.id, deviceRef: c.deviceRef, state: 'Cleaning' as CapacityState };
    }
    const next: CapacityState = action === 'quarantine' ? 'Quarantined' : action === 'retire' ? 'Retired' : 'Available';
    await tx
      .update(machineCapacity)
      .set({ state: next, stateReason: next === 'Available' ? null : reason || null, updatedAt: sql`now()` })
      .where(eq(machineCapacity.id, c.id))
      .returning({ id: machineCapacity.id });
    await recordEvent(tx, {
      actor,
      action: `capacity.${action}`,
      objectType: 'capacity',
      objectId: c.id,
      objectName: c.deviceRef,
      before: { state: c.state },
      after: { state: next, ...(force ? { force: true } : {}) },
      reason,
    });
    if (next === 'Available') await wakeWaiting(tx, c.classId, c.locationId, 1);
    return { id: c.id, deviceRef: c.deviceRef, state: next };
  });
}
