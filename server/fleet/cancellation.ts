/**
 * Cancellation of machine requests and in-flight provider operations, with one boundary per
 * operation kind. Before the boundary the provider has not been asked for any effect, so a cancel
 * is exact: the machine ends Released and nothing happened at the provider. Past it, a cancel is
 * compensation: the effect may have happened, so the machine is released through the cleanup the
 * provider must verify (the capacity is quarantined when it cannot be) and ends Released.
 *
 * One outcome, agreed by both sides: a cancel takes the machine's row lock and is refused once the
 * machine is Ready (the install won); the install's success takes the same lock and, finding the
 * cancel, does not make the machine Ready (the cancel won). Quota and addresses go back in the one
 * transaction that makes the machine Released, whose phase change is conditional, so once.
 */
import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, DbOrTx } from '@/db/client';
import { query } from '@/db/query';
import { events } from '@/db/schema/events';
import { machines, providerOperations } from '@/db/schema/fleet';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError } from '@/server/errors';
import { wakeMachine } from './machines';
import type { MachinePhase } from './phases';
import type { OperationKind } from './provider-ops';

/** Where cancelling an operation of each kind stops being exact, and what it becomes past that point. */
export const cancellationBoundaries: Record<OperationKind, { cancellable: boolean; boundary: string; before: string; after: string }> = {
  install: {
    cancellable: true,
    boundary: 'the install operation is admitted (the machine enters Installing); from then on the provider may be writing the image',
    before: 'exact: the binding is dropped and the capacity returned without calling the provider',
    after: 'compensation: the machine is released through a cleanup of its epoch, verified with the provider (else quarantined)',
  },
  power: {
    cancellable: true,
    boundary: 'the power operation is admitted',
    before: 'exact: nothing is sent',
    after: 'compensation: the machine is released through a verified cleanup, which powers the asset off',
  },
  cleanup: {
    cancellable: false,
    boundary: 'none: a cleanup is itself the compensation',
    before: 'not cancellable: it runs to its verified end',
    after: 'not cancellable: it runs to its verified end',
  },
};

/** The phases in which no provider effect has been asked for: a cancel there is exact. */
export const exactCancelPhases: readonly MachinePhase[] = ['Pending', 'AwaitingApproval', 'Allocating', 'Bound'];
/** The phases past the install's boundary: a cancel there is compensated. */
export const compensatedCancelPhases: readonly MachinePhase[] = ['Installing'];

export const CANCEL_REQUESTED = 'machine.cancel.requested';

/** Whether a cancel of the machine was accepted (read in the transaction deciding what comes next). */
export async function cancelRequested(tx: DbOrTx, machineId: string): Promise<boolean> {
  const rows = await query(
    tx,
    sql`select 1 as found from ${events} where object_type = 'machine' and object_id = ${machineId} and action = ${CANCEL_REQUESTED} limit 1`,
    z.object({ found: z.number() }),
  );
  return rows.length > 0;
}

export interface CancelOutcome {
  name: string;
  /** The phase the machine was in when the cancel was accepted. */
  phase: MachinePhase;
  /** exact: nothing happened at the provider; compensated: a verified cleanup undoes what may have. */
  mode: 'exact' | 'compensated';
  /** False when the machine had been cancelled already (the first cancel's outcome stands). */
  accepted: boolean;
}

async function cancelLocked(
  tx: DbOrTx,
  m: { id: string; projectId: string; name: string; phase: string; deletion: Date | null },
  reason: string,
  actor: Actor,
): Promise<CancelOutcome> {
  const phase = m.phase as MachinePhase;
  const exact = exactCancelPhases.includes(phase);
  if (!exact && !compensatedCancelPhases.includes(phase)) {
    throw new DomainError(
      'InvalidTransition',
      phase === 'Ready'
        ? `machine "${m.name}" is Ready: its install completed before the cancel; release it instead`
        : `machine "${m.name}" is ${phase}: there is nothing in flight to cancel`,
    );
  }
  const mode = exact ? 'exact' : 'compensated';
  if (await cancelRequested(tx, m.id)) return { name: m.name, phase, mode, accepted: false };
  await tx
    .update(machines)
    .set({ deletionRequestedAt: m.deletion ?? sql`now()`, phaseReason: `cancelling (${mode}): ${reason}`, updatedAt: sql`now()` })
    .where(eq(machines.id, m.id));
  await recordEvent(tx, {
    actor,
    projectId: m.projectId,
    action: CANCEL_REQUESTED,
    objectType: 'machine',
    objectId: m.id,
    objectName: m.name,
    reason,
    before: { phase },
    after: { mode },
  });
  await wakeMachine(tx, m.id);
  return { name: m.name, phase, mode, accepted: true };
}

const machineColumns = { id: machines.id, projectId: machines.projectId, name: machines.name, phase: machines.phase, deletion: machines.deletionRequestedAt };

/**
 * A tenant cancels its machine request: exact before the provider was asked for anything,
 * compensated past that; refused (InvalidTransition) once the machine is Ready or on its way out.
 * Cancelling again answers the first cancel's outcome. Audited (`machine.cancel.requested`).
 */
export async function cancelMachine(db: Db, projectId: string, name: string, actor: Actor, reason = 'cancelled by the tenant'): Promise<CancelOutcome> {
  return db.transaction(async (tx) => {
    const [m] = await tx
      .select(machineColumns)
      .from(machines)
      .where(and(eq(machines.projectId, projectId), eq(machines.name, name), sql`${machines.phase} <> 'Released'`))
      .limit(1)
      .for('update');
    if (!m) throw new DomainError('NotFound', `machine "${name}" not found`, 'name');
    return cancelLocked(tx, m, reason, actor);
  });
}

/**
 * An operator cancels an in-flight provider operation: the machine it works for is cancelled (exact
 * or compensated by the operation kind's boundary). A cleanup is not cancellable. Needs a reason.
 */
export async function cancelOperation(db: Db, operationId: string, reason: string, actor: Actor): Promise<CancelOutcome & { operationId: string }> {
  if (!reason.trim()) throw new DomainError('ValidationFailed', 'a reason is required', 'reason');
  return db.transaction(async (tx) => {
    const [op] = await tx
      .select({ id: providerOperations.id, kind: providerOperations.kind, state: providerOperations.state, machineId: providerOperations.machineId })
      .from(providerOperations)
      .where(eq(providerOperations.id, operationId));
    if (!op) throw new DomainError('NotFound', `operation ${operationId} not found`);
    const kind = op.kind as OperationKind;
    if (!cancellationBoundaries[kind].cancellable)
      throw new DomainError('InvalidTransition', `a ${kind} operation cannot be cancelled: ${cancellationBoundaries[kind].before}`);
    if (op.state === 'Succeeded' || op.state === 'Failed') throw new DomainError('InvalidTransition', `operation ${operationId} has ended (${op.state})`);
    if (!op.machineId) throw new DomainError('InvalidTransition', `operation ${operationId} works for no machine`);
    const [m] = await tx.select(machineColumns).from(machines).where(eq(machines.id, op.machineId)).for('update');
    if (!m) throw new DomainError('NotFound', `machine of operation ${operationId} not found`);
    return { ...(await cancelLocked(tx, m, `operation ${operationId} cancelled by an operator: ${reason}`, actor)), operationId };
  });
}
