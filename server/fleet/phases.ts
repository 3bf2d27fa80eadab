import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { machines } from '@/db/schema/fleet';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError } from '@/server/errors';

/**
 * The machine lifecycle, in one table. Every transition goes through `transitionMachine`, which
 * checks it against this table and writes the new phase and an event in the caller's transaction.
 *
 *   Pending ──▶ AwaitingApproval ──▶ Pending (approved)
 *      │              │
 *      │              └──▶ Released (rejected or deleted while waiting)
 *      ▼
 *   Allocating ──▶ Bound ──▶ Installing ──▶ Ready
 *      │             │           │  ▲          │
 *      ▼             ▼           ▼  └──────────┘ (reinstall)
 *   Pending       Failed      Failed           │
 *   (no capacity after all)                    ▼
 *                 Releasing ◀── (delete from Bound/Installing/Ready/Failed)
 *                     │
 *                     ▼
 *                 Released (terminal; the capacity is Available again or Quarantined)
 */
export const machinePhases = ['Pending', 'AwaitingApproval', 'Allocating', 'Bound', 'Installing', 'Ready', 'Releasing', 'Released', 'Failed'] as const;
export type MachinePhase = (typeof machinePhases)[number];

export const transitions: Record<MachinePhase, readonly MachinePhase[]> = {
  Pending: ['AwaitingApproval', 'Allocating', 'Released', 'Failed'],
  AwaitingApproval: ['Pending', 'Released', 'Failed'],
  Allocating: ['Bound', 'Pending', 'Failed', 'Releasing'],
  Bound: ['Installing', 'Releasing', 'Failed'],
  Installing: ['Ready', 'Failed', 'Releasing', 'Installing'],
  Ready: ['Installing', 'Releasing', 'Failed'],
  Releasing: ['Released'],
  Released: [],
  Failed: ['Releasing', 'Released'],
};

/** Phases where work is in progress (a failure there is `Failed` with the reason). */
export const inProgress: MachinePhase[] = ['Allocating', 'Bound', 'Installing', 'Releasing'];

/**
 * Moves a machine from `from` to `to` if it is still in `from` (a conditional update: a concurrent
 * reconciler that already moved it makes this a no-op returning false), recording an event.
 */
export async function transitionMachine(
  tx: DbOrTx,
  machine: { id: string; projectId: string; name: string },
  from: MachinePhase,
  to: MachinePhase,
  reason: string | null,
  actor: Actor,
): Promise<boolean> {
  if (!transitions[from].includes(to)) throw new DomainError('InvalidTransition', `a machine cannot go from ${from} to ${to}`);
  const updated = await tx
    .update(machines)
    .set({ phase: to, phaseReason: reason, updatedAt: sql`now()`, phaseChangedAt: from === to ? undefined : sql`now()` })
    .where(sql`${machines.id} = ${machine.id} and ${machines.phase} = ${from}`)
    .returning({ id: machines.id });
  if (updated.length === 0) return false;
  await recordEvent(tx, {
    actor,
    projectId: machine.projectId,
    action: `machine.phase.${to}`,
    objectType: 'machine',
    objectId: machine.id,
    objectName: machine.name,
    before: { phase: from },
    after: { phase: to },
    reason,
  });
  return true;
}

/** Updates the reason shown on a machine that stays in its phase (e.g. why it is still Pending). */
export async function setPhaseReason(tx: DbOrTx, machineId: string, reason: string | null) {
  await tx.update(machines).set({ phaseReason: reason, updatedAt: sql`now()` }).where(eq(machines.id, machineId));
}
