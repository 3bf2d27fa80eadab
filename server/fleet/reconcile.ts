/**
 * The machine reconciler: level-triggered, one entry point per machine id. Each call reads all
 * state fresh, takes one step, and says what should happen next. Safe to run any number of times,
 * concurrently with itself (row locks and conditional transitions), and after a crash at any point.
 */
import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, DbOrTx, Tx } from '@/db/client';
import { query } from '@/db/query';
import { installations, machineAllocations, machineCapacity, machineProfiles, machines, providerOperations } from '@/db/schema/fleet';
import { recordEvent, systemActor } from '@/server/audit/events';
import { deleteClaim } from '@/server/ipam/claims';
import { enqueueJob } from '@/server/jobs/enqueue';
import type { ProviderClient } from '@/server/provider';
import { releaseMachine } from '@/server/quota/admission';
import { cancelRequested } from './cancellation';
import { evidenceMaxAgeSeconds, locationUsability } from './catalogue';
import { wakeMachine } from './machines';
import { setPhaseReason, transitionMachine, type MachinePhase } from './phases';
import { admitOperation, backoffMs, callOperation, driveOperation, getOperationRow, recordOperation, verifyCleanup, type OperationRow } from './provider-ops';

export type StepResult =
  | { type: 'continue' }
  | { type: 'done' }
  | { type: 'waitFor'; event: string }
  | { type: 'retryAfter'; ms: number; reason: string }
  | { type: 'failed'; reason: string };

const actor = systemActor('fleet-reconciler');
const MAX_INSTALL_ATTEMPTS = 3;

interface MachineState {
  id: string;
  projectId: string;
  name: string;
  phase: MachinePhase;
  classId: string;
  locationId: string;
  profileId: string;
  imageDigest: string;
  deletionRequested: boolean;
  interfaces: { claims?: string[] }[];
  allocation: { id: string; capacityId: string; epoch: number; status: string; deviceRef: string } | null;
}

/** The machine, its profile's image and its live allocation, in one query. */
async function load(db: DbOrTx, machineId: string): Promise<MachineState | undefined> {
  const [m] = await db
    .select({
      id: machines.id,
      projectId: machines.projectId,
      name: machines.name,
      phase: machines.phase,
      classId: machines.classId,
      locationId: machines.locationId,
      profileId: machines.profileId,
      imageDigest: machineProfiles.imageDigest,
      deletion: machines.deletionRequestedAt,
      interfaces: machines.interfaces,
      allocationId: machineAllocations.id,
      capacityId: machineAllocations.capacityId,
      epoch: machineAllocations.epoch,
      allocationStatus: machineAllocations.status,
      deviceRef: machineCapacity.deviceRef,
    })
    .from(machines)
    .innerJoin(machineProfiles, eq(machineProfiles.id, machines.profileId))
    .leftJoin(machineAllocations, and(eq(machineAllocations.machineId, machines.id), sql`${machineAllocations.status} <> 'Released'`))
    .leftJoin(machineCapacity, eq(machineCapacity.id, machineAllocations.capacityId))
    .where(eq(machines.id, machineId));
  if (!m) return undefined;
  return {
    id: m.id,
    projectId: m.projectId,
    name: m.name,
    phase: m.phase as MachinePhase,
    classId: m.classId,
    locationId: m.locationId,
    profileId: m.profileId,
    imageDigest: m.imageDigest,
    deletionRequested: m.deletion !== null,
    interfaces: (m.interfaces as { claims?: string[] }[]) ?? [],
    allocation:
      m.allocationId && m.capacityId && m.epoch !== null && m.allocationStatus && m.deviceRef
        ? { id: m.allocationId, capacityId: m.capacityId, epoch: m.epoch, status: m.allocationStatus, deviceRef: m.deviceRef }
        : null,
  };
}

/** One step for one machine. */
export async function reconcileMachine(db: Db, provider: ProviderClient, machineId: string): Promise<StepResult> {
  const m = await load(db, machineId);
  if (!m) return { type: 'done' };
  switch (m.phase) {
    case 'Pending':
      if (!m.deletionRequested) return allocate(db, m);
      return (await cancelRequested(db, m.id)) ? cancelExact(db, m, 'Pending') : finishRelease(db, m, 'Pending', 'deleted before it was bound');
    case 'AwaitingApproval':
      if (!m.deletionRequested) return { type: 'waitFor', event: 'approval' };
      return (await cancelRequested(db, m.id))
        ? cancelExact(db, m, 'AwaitingApproval')
        : finishRelease(db, m, 'AwaitingApproval', 'rejected or deleted while awaiting approval');
    case 'Allocating':
      if (m.deletionRequested && (await cancelRequested(db, m.id))) return cancelExact(db, m, 'Allocating');
      return commitAllocation(db, m);
    case 'Bound':
      if (m.deletionRequested) return (await cancelRequested(db, m.id)) ? cancelExact(db, m, 'Bound') : startRelease(db, m, 'Bound');
      return startInstall(db, m, 'Bound');
    case 'Installing':
      if (m.deletionRequested) return startRelease(db, m, 'Installing');
      return driveInstall(db, provider, m);
    case 'Ready':
      return m.deletionRequested ? startRelease(db, m, 'Ready') : { type: 'done' };
    case 'Failed':
      if (!m.deletionRequested) return { type: 'waitFor', event: 'deletion' };
      return m.allocation ? startRelease(db, m, 'Failed') : finishRelease(db, m, 'Failed', 'deleted after failing');
    case 'Releasing':
      return driveCleanup(db, provider, m);
    case 'Released':
      return { type: 'done' };
  }
}

/** The reason a machine shows while it waits for capacity — and the mark releases look for (see `wakeWaiting`). */
export const WAITING_FOR_CAPACITY = 'waiting for capacity: no healthy, available machine of this class in this location';
const WOKEN_FOR_CAPACITY = 'capacity was returned: binding';

/**
 * Serializes, per class and location, a machine deciding to wait for capacity (`exclusive`) with
 * capacity being returned (`wakeWaiting`, shared: returns never wait for each other): whichever
 * comes second sees the first — the waiter the returned capacity, or the return the waiter — so a
 * wake-up is never lost. Binding free capacity never takes it.
 */
async function lockCapacityPool(tx: DbOrTx, classId: string, locationId: string, mode: 'exclusive' | 'shared') {
  const key = sql`hashtextextended(${`machine-capacity:${classId}:${locationId}`}, 0)`;
  await tx.execute(mode === 'exclusive' ? sql`select pg_advisory_xact_lock(${key})` : sql`select pg_advisory_xact_lock_shared(${key})`);
}

/**
 * Takes healthy, available capacity with fresh evidence for the machine, in one statement: the
 * capacity is marked Bound with its next epoch and the (Preparing) allocation inserted.
 * `FOR UPDATE SKIP LOCKED` makes concurrent binders take different capacity; the partial unique
 * indexes on live allocations make a double binding impossible regardless.
 */
async function bindCapacity(tx: DbOrTx, m: MachineState) {
  const [bound] = await query(
    tx,
    sql`
    with picked as (
      select id from ${machineCapacity}
      where class_id = ${m.classId} and location_id = ${m.locationId} and state = 'Available' and health = 'Healthy' and available
        and observed_at > now() - ${`${evidenceMaxAgeSeconds()} seconds`}::interval
      order by device_ref limit 1 for update skip locked
    ), capacity as (
      update ${machineCapacity} set state = 'Bound', asset_epoch = ${machineCapacity.assetEpoch} + 1, state_reason = null, updated_at = now()
      from picked where ${machineCapacity.id} = picked.id
      returning ${machineCapacity.id}, ${machineCapacity.deviceRef}, ${machineCapacity.assetEpoch}
    ), allocation as (
      insert into ${machineAllocations} (machine_id, capacity_id, epoch, status)
      select ${m.id}, capacity.id, capacity.asset_epoch, 'Preparing' from capacity
      returning ${machineAllocations.id}
    )
    select capacity.device_ref as "deviceRef" from capacity, allocation`,
    z.object({ deviceRef: z.string() }),
  );
  return bound;
}

/** Rolls back a step whose machine another run of the reconciler (or a cancel) has already moved on. */
class Superseded extends Error {}

/** A superseded step is rolled back and the machine read afresh. */
function continueWhenSuperseded(e: unknown): StepResult {
  if (e instanceof Superseded) return { type: 'continue' };
  throw e;
}

/**
 * Binds the machine to capacity of its class and location (the location must be usable: fail
 * closed, with the reason). With none free, the machine waits — decided under the pool lock after
 * looking once more — and the next release of that kind wakes it (no polling).
 */
async function allocate(db: Db, m: MachineState): Promise<StepResult> {
  return db
    .transaction(async (tx): Promise<StepResult> => {
      const usability = await locationUsability(tx, m.locationId);
      if (!usability.usable) {
        await setPhaseReason(tx, m.id, `waiting: ${usability.reason}`);
        return { type: 'waitFor', event: 'location' };
      }
      let bound = await bindCapacity(tx, m);
      if (!bound) {
        await lockCapacityPool(tx, m.classId, m.locationId, 'exclusive');
        bound = await bindCapacity(tx, m);
      }
      if (!bound) {
        await setPhaseReason(tx, m.id, WAITING_FOR_CAPACITY);
        return { type: 'waitFor', event: 'capacity' };
      }
      if (!(await transitionMachine(tx, m, 'Pending', 'Allocating', `binding ${bound.deviceRef}`, actor))) throw new Superseded();
      return { type: 'continue' };
    })
    .catch((e: unknown) => {
      if (e instanceof Superseded) return { type: 'continue' } as StepResult;
      throw e;
    });
}

async function commitAllocation(db: Db, m: MachineState): Promise<StepResult> {
  return db.transaction(async (tx) => {
    if (!m.allocation) {
      await transitionMachine(tx, m, 'Allocating', 'Pending', 'allocation lost; retrying', actor);
      return { type: 'continue' } as StepResult;
    }
    await tx
      .update(machineAllocations)
      .set({ status: 'Committed' })
      .where(and(eq(machineAllocations.id, m.allocation.id), eq(machineAllocations.status, 'Preparing')))
      .returning({ id: machineAllocations.id });
    await transitionMachine(tx, m, 'Allocating', 'Bound', `bound to ${m.allocation.deviceRef} (epoch ${m.allocation.epoch})`, actor);
    return { type: 'continue' } as StepResult;
  });
}

async function startInstall(db: Db, m: MachineState, from: MachinePhase): Promise<StepResult> {
  if (!m.allocation) return { type: 'failed', reason: 'no allocation' };
  return db
    .transaction(async (tx) => {
      // The cancellation boundary of an install (server/fleet/cancellation.ts): under the machine's row
      // lock, which a cancel takes too, so a cancel either lands before it (exact) or sees Installing.
      const [locked] = await tx.select({ deletion: machines.deletionRequestedAt }).from(machines).where(eq(machines.id, m.id)).for('update');
      if (!locked || locked.deletion !== null) throw new Superseded();
      const [previous] = await tx
        .select({ id: installations.id, count: sql<number>`count(*) over ()` })
        .from(installations)
        .where(eq(installations.allocationId, m.allocation!.id))
        .orderBy(sql`${installations.createdAt} desc`)
        .limit(1);
      const attempt = previous ? Number(previous.count) + 1 : 1;
      const opId = `install-${m.allocation!.id}-${attempt}`;
      await admitOperation(tx, {
        id: opId,
        kind: 'install',
        machineId: m.id,
        capacityId: m.allocation!.capacityId,
        deviceRef: m.allocation!.deviceRef,
        bindingId: m.allocation!.id,
        epoch: m.allocation!.epoch,
        extra: { imageDigest: m.imageDigest },
      });
      await tx
        .insert(installations)
        .values({ machineId: m.id, allocationId: m.allocation!.id, imageDigest: m.imageDigest, predecessorId: previous?.id ?? null, operationId: opId });
      if (!(await transitionMachine(tx, m, from, 'Installing', `installing ${m.imageDigest.slice(0, 19)}… (${opId})`, actor))) throw new Superseded();
      return { type: 'continue' } as StepResult;
    })
    .catch(continueWhenSuperseded);
}

/**
 * Install failures another attempt cannot change: fenced (the binding moved on), or refused by the
 * provider's identity and authorization checks — the machine fails with the reason at once instead
 * of retrying a request the provider will refuse again.
 */
const FINAL_INSTALL_FAILURES = new Set([
  'StaleEpoch',
  'StaleFencingToken',
  'TargetNotAuthorized',
  'UntrustedIdentity',
  'ClientCertificateRejected',
  'ClientCertificateRequired',
]);

async function driveInstall(db: Db, provider: ProviderClient, m: MachineState): Promise<StepResult> {
  // The latest installation with its operation, in one query.
  const [inst] = await db
    .select({
      id: installations.id,
      operationId: installations.operationId,
      status: installations.status,
      op: {
        id: providerOperations.id,
        kind: providerOperations.kind,
        state: providerOperations.state,
        attempts: providerOperations.attempts,
        request: providerOperations.request,
        lastError: providerOperations.lastError,
        result: providerOperations.result,
      },
    })
    .from(installations)
    .leftJoin(providerOperations, eq(providerOperations.id, installations.operationId))
    .where(eq(installations.machineId, m.id))
    .orderBy(sql`${installations.createdAt} desc`)
    .limit(1);
  if (!inst) return startInstall(db, m, 'Installing');
  const op = (inst.op ?? (await getOperationRow(db, inst.operationId))!) as OperationRow;
  const call = await callOperation(provider, op);
  const outcome = call.result;
  if (outcome.status === 'succeeded') {
    // The operation's success, the installation and Ready commit together — unless a cancel took the
    // machine's row lock first: then the install's effect is compensated by the release that follows
    // (a cancel after this commit finds the machine Ready and is refused: one outcome either way).
    return db.transaction(async (tx): Promise<StepResult> => {
      const [locked] = await tx.select({ deletion: machines.deletionRequestedAt }).from(machines).where(eq(machines.id, m.id)).for('update');
      const cancelled = locked?.deletion != null && (await cancelRequested(tx, m.id));
      await recordOperation(tx, op, call);
      await tx
        .update(installations)
        .set({ status: 'Succeeded', completedAt: sql`now()` })
        .where(eq(installations.id, inst.id));
      if (cancelled) return { type: 'continue' };
      await transitionMachine(tx, m, 'Installing', 'Ready', `installed ${m.imageDigest.slice(0, 19)}…`, actor);
      return { type: 'done' };
    });
  }
  await recordOperation(db, op, call);
  if (outcome.status === 'running') {
    const wait = outcome.completesAt ? Math.max(50, outcome.completesAt.getTime() - Date.now() + 50) : backoffMs(op.attempts);
    return { type: 'retryAfter', ms: wait, reason: 'install running' };
  }
  if (outcome.status === 'unknown') {
    await setPhaseReason(db, m.id, `install outcome unknown (${outcome.reason}); resolving by lookup, attempt ${outcome.attempts}`);
    return { type: 'retryAfter', ms: backoffMs(outcome.attempts), reason: outcome.reason };
  }
  const [{ n }] = await query(db, sql`select count(*)::int as n from installations where allocation_id = ${m.allocation!.id}`, z.object({ n: z.number() }));
  await db
    .update(installations)
    .set({ status: 'Failed', completedAt: sql`now()` })
    .where(eq(installations.id, inst.id));
  if (n < MAX_INSTALL_ATTEMPTS && !FINAL_INSTALL_FAILURES.has(outcome.code)) {
    await db.transaction(async (tx) => {
      await recordEvent(tx, {
        actor,
        projectId: m.projectId,
        action: 'machine.install.retry',
        objectType: 'machine',
        objectId: m.id,
        objectName: m.name,
        reason: `${outcome.code}: ${outcome.message}`,
      });
    });
    return startInstall(db, m, 'Installing');
  }
  await db.transaction((tx) => transitionMachine(tx, m, 'Installing', 'Failed', `install failed: ${outcome.code}: ${outcome.message}`, actor));
  return { type: 'failed', reason: outcome.message };
}

async function startRelease(db: Db, m: MachineState, from: MachinePhase): Promise<StepResult> {
  if (!m.allocation) return finishRelease(db, m, from, 'nothing was bound');
  return db.transaction(async (tx) => {
    await tx
      .update(machineAllocations)
      .set({ status: 'Releasing' })
      .where(eq(machineAllocations.id, m.allocation!.id))
      .returning({ id: machineAllocations.id });
    await tx
      .update(machineCapacity)
      .set({ state: 'Cleaning', updatedAt: sql`now()` })
      .where(eq(machineCapacity.id, m.allocation!.capacityId))
      .returning({ id: machineCapacity.id });
    await admitOperation(tx, {
      id: `cleanup-${m.allocation!.id}`,
      kind: 'cleanup',
      machineId: m.id,
      capacityId: m.allocation!.capacityId,
      deviceRef: m.allocation!.deviceRef,
      bindingId: m.allocation!.id,
      epoch: m.allocation!.epoch,
    });
    await transitionMachine(tx, m, from, 'Releasing', `cleaning ${m.allocation!.deviceRef}`, actor);
    return { type: 'continue' } as StepResult;
  });
}

/**
 * Drives the cleanup and verifies it with the provider before the capacity goes back to the
 * pool: the asset must report its epoch closed and wiped. A failed cleanup quarantines the
 * capacity for an operator instead.
 */
async function driveCleanup(db: Db, provider: ProviderClient, m: MachineState): Promise<StepResult> {
  if (!m.allocation) return finishRelease(db, m, 'Releasing', 'released');
  const op =
    (await getOperationRow(db, `cleanup-${m.allocation.id}`)) ??
    (await admitOperation(db, {
      id: `cleanup-${m.allocation.id}`,
      kind: 'cleanup',
      machineId: m.id,
      capacityId: m.allocation.capacityId,
      deviceRef: m.allocation.deviceRef,
      bindingId: m.allocation.id,
      epoch: m.allocation.epoch,
    }));
  const call = await callOperation(provider, op);
  const outcome = call.result;
  // A verified success is recorded with the release itself (below); anything else, or a success
  // that cannot be verified yet, is recorded now.
  const recordNow = () => recordOperation(db, op, call);
  if (outcome.status !== 'succeeded') await recordNow();
  if (outcome.status === 'running') {
    return {
      type: 'retryAfter',
      ms: outcome.completesAt ? Math.max(50, outcome.completesAt.getTime() - Date.now() + 50) : backoffMs(op.attempts),
      reason: 'cleanup running',
    };
  }
  if (outcome.status === 'unknown') {
    await setPhaseReason(db, m.id, `cleanup outcome unknown (${outcome.reason}); resolving by lookup, attempt ${outcome.attempts}`);
    return { type: 'retryAfter', ms: backoffMs(outcome.attempts), reason: outcome.reason };
  }
  let verified = false;
  let why = outcome.status === 'failed' ? `cleanup failed: ${outcome.code}: ${outcome.message}` : '';
  if (outcome.status === 'succeeded') {
    // The binding's other operations still unresolved (a release during an install) are resolved
    // now: the cleanup closed their epoch, so each has finished or will never take effect (the
    // provider refuses a closed epoch), and no record may stay in flight forever.
    const unresolved = await db
      .select({ id: providerOperations.id })
      .from(providerOperations)
      .where(
        and(
          eq(providerOperations.bindingId, m.allocation.id),
          sql`${providerOperations.state} in ('Admitted', 'Submitted', 'Unknown') and ${providerOperations.id} <> ${op.id}`,
        ),
      );
    for (const { id } of unresolved) {
      const other = (await getOperationRow(db, id))!;
      const resolved = await driveOperation(db, provider, other);
      if (resolved.status === 'running' || resolved.status === 'unknown') {
        await recordNow();
        return { type: 'retryAfter', ms: backoffMs(other.attempts + 1), reason: `resolving ${id}` };
      }
    }
    const check = await verifyCleanup(provider, m.allocation.deviceRef, m.allocation.epoch);
    if (check.type === 'unknown') {
      await recordNow();
      return { type: 'retryAfter', ms: backoffMs(op.attempts + 1), reason: `verification: ${check.reason}` };
    }
    verified = check.type === 'verified';
    if (check.type === 'dirty') why = check.why;
  }
  const allocation = m.allocation;
  // The cleanup's outcome, the capacity's return (or quarantine), the wake-up of a waiter and the
  // machine's Released phase commit together.
  const cancelled = await cancelRequested(db, m.id);
  const released = verified ? 'released; capacity verified clean' : `released; capacity quarantined (${why})`;
  const reason = cancelled ? `cancelled (compensated): ${released}` : released;
  return finishRelease(db, m, 'Releasing', reason, async (tx) => {
    if (cancelled)
      await recordEvent(tx, {
        actor,
        projectId: m.projectId,
        action: 'machine.cancel.compensated',
        objectType: 'machine',
        objectId: m.id,
        objectName: m.name,
        reason,
      });
    if (outcome.status === 'succeeded') await recordOperation(tx, op, call);
    await tx
      .update(machineAllocations)
      .set({ status: 'Released', releasedAt: sql`now()`, releaseReason: verified ? 'cleanup verified' : why })
      .where(eq(machineAllocations.id, allocation.id))
      .returning({ id: machineAllocations.id });
    await tx
      .update(machineCapacity)
      .set({ state: verified ? 'Available' : 'Quarantined', stateReason: verified ? null : why, updatedAt: sql`now()` })
      .where(eq(machineCapacity.id, allocation.capacityId))
      .returning({ id: machineCapacity.id });
    await recordEvent(tx, {
      actor,
      projectId: null,
      action: verified ? 'capacity.available' : 'capacity.quarantine',
      objectType: 'capacity',
      objectId: allocation.capacityId,
      objectName: allocation.deviceRef,
      reason: verified ? `cleanup of epoch ${allocation.epoch} verified` : why,
    });
    if (verified) await wakeWaiting(tx, m.classId, m.locationId, 1);
  });
}

/**
 * The machine is done: its addresses and quota go back, in one transaction with the final phase
 * (and with `prelude`'s writes, run first in it).
 */
async function finishRelease(db: Db, m: MachineState, from: MachinePhase, reason: string, prelude?: (tx: Tx) => Promise<void>): Promise<StepResult> {
  return db
    .transaction(async (tx): Promise<StepResult> => {
      await prelude?.(tx);
      // Lock order shared with claim creates and machine requests (no deadlock): the claims, their
      // pools (by id, as claim creation takes them), then the ipclaims and machines buckets.
      const names = m.interfaces.flatMap((nic) => nic.claims ?? []);
      if (names.length) {
        await tx.execute(sql`select id from ip_claims where project_id = ${m.projectId} and name in ${names} order by name for update`);
        await tx.execute(sql`
        select p.id from ip_pools p where p.id in (select pool_id from ip_claims where project_id = ${m.projectId} and name in ${names})
        order by p.id for update`);
      }
      for (const nic of m.interfaces) {
        for (const claim of nic.claims ?? []) {
          await deleteClaim(tx, m.projectId, claim, actor).catch((e: { code?: string }) => {
            if (e.code !== 'NotFound') throw e;
          });
        }
      }
      // Conditional: a run that finds the machine moved on rolls back, so quota and addresses go back once.
      if (!(await transitionMachine(tx, m, from, 'Released', reason, actor))) throw new Superseded();
      // Last before the commit: the buckets stay locked from here to the commit (see requestMachine).
      await releaseMachine(tx, m.projectId, m.name);
      return { type: 'done' };
    })
    .catch(continueWhenSuperseded);
}

/**
 * A cancel before the install's boundary: the provider was never asked for anything on this
 * binding, so the binding is dropped and the capacity returned as it was (no cleanup to verify),
 * with the machine's Released phase, its quota and its addresses, in one transaction.
 */
async function cancelExact(db: Db, m: MachineState, from: MachinePhase): Promise<StepResult> {
  const reason = 'cancelled (exact): nothing was asked of the provider';
  const allocation = m.allocation;
  return finishRelease(db, m, from, reason, async (tx) => {
    await recordEvent(tx, { actor, projectId: m.projectId, action: 'machine.cancel.exact', objectType: 'machine', objectId: m.id, objectName: m.name, reason });
    if (!allocation) return;
    await tx
      .update(machineAllocations)
      .set({ status: 'Released', releasedAt: sql`now()`, releaseReason: 'cancelled before the provider was called' })
      .where(eq(machineAllocations.id, allocation.id));
    const returned = await tx
      .update(machineCapacity)
      .set({ state: 'Available', stateReason: null, updatedAt: sql`now()` })
      .where(and(eq(machineCapacity.id, allocation.capacityId), eq(machineCapacity.state, 'Bound')))
      .returning({ id: machineCapacity.id });
    if (returned.length) await wakeWaiting(tx, m.classId, m.locationId, 1);
  });
}

/**
 * Capacity of this class and location was returned: wakes the `count` oldest machines waiting for
 * it — the release is the event, so nothing polls for free capacity. Each woken machine loses its
 * waiting mark, so the next release wakes the next waiter (two releases never wake the same one
 * while another keeps waiting). Call it in the transaction that returns the capacity.
 */
export async function wakeWaiting(tx: DbOrTx, classId: string, locationId: string, count: number) {
  await lockCapacityPool(tx, classId, locationId, 'shared');
  const waiters = sql`phase = 'Pending' and class_id = ${classId} and location_id = ${locationId} and deletion_requested_at is null and phase_reason = ${WAITING_FOR_CAPACITY}`;
  const first = await query(tx, sql`select id from ${machines} where ${waiters} order by created_at limit ${count}`, z.object({ id: z.string() }));
  // SKIP LOCKED: a waiter another return is waking right now is left to it (that one wakes it),
  // and this return wakes the next one.
  const woken = await query(
    tx,
    sql`
    with waiting as (
      select id from ${machines} where ${waiters}
      order by created_at limit ${count} for update skip locked
    )
    update ${machines} set phase_reason = ${WOKEN_FOR_CAPACITY}, updated_at = now()
    from waiting where ${machines.id} = waiting.id and ${machines.phaseReason} = ${WAITING_FOR_CAPACITY}
    returning ${machines.id}`,
    z.object({ id: z.string() }),
  );
  for (const w of woken) await wakeMachine(tx, w.id);
  // A waiter skipped above may instead be locked by a change to the machine itself (a delete, an
  // approval refused) that rolls back and wakes nobody: its reconciler runs once more as well (on a
  // machine still waiting it only looks again, under the capacity lock). Without the job key, which
  // that change's own keyed add may hold until it ends; the machine's queue still runs one at a time.
  const wokenIds = new Set(woken.map((w) => w.id));
  for (const f of first) {
    if (!wokenIds.has(f.id)) await enqueueJob(tx, 'machine__reconcile', { machineId: f.id }, { queueName: `machine:${f.id}` });
  }
}
