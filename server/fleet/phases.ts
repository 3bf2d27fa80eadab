import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { events } from '@/db/schema/events';
import { machines } from '@/db/schema/fleet';
import { eventActor, type Actor } from '@/server/audit/events';
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
 *
 * A cancel before the provider was asked for anything (Pending … Bound) ends Released at once with
 * the capacity returned (exact); past it (Installing) through Releasing (compensated): see
 * server/fleet/cancellation.ts.
 */
export const machinePhases = ['Pending', 'AwaitingApproval', 'Allocating', 'Bound', 'Installing', 'Ready', 'Releasing', 'Released', 'Failed'] as const;
export type MachinePhase = (typeof machinePhases)[number];

export const transitions: Record<MachinePhase, readonly MachinePhase[]> = {
  Pending: ['AwaitingApproval', 'Allocating', 'Released', 'Failed'],
  AwaitingApproval: ['Pending', 'Released', 'Failed'],
  Allocating: ['Bound', 'Pending', 'Failed', 'Releasing', 'Released'],
  Bound: ['Installing', 'Releasing', 'Failed', 'Released'],
  Installing: ['Ready', 'Failed', 'Releasing', 'Installing'],
  Ready: ['Installing', 'Releasing', 'Failed'],
  Releasing: ['Released'],
  Released: [],
  Failed: ['Releasing', 'Released'],
};

/**
 * Moves a machine from `from` to `to` if it is still in `from` (a conditional update: a concurrent
 * reconciler that already moved it makes this a no-op returning false), recording an event (live
 * views learn of the change from the change feed). The update and the event row are one statement (the event is
 * written only when the update matched), so a transition costs one round trip.
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
  // The event row is recordEvent's (server/audit/events.ts), inserted from the update's result.
  const who = eventActor(actor);
  const recorded = await tx.execute(sql`
    with moved as (
      update ${machines} set phase = ${to}, phase_reason = ${reason}, updated_at = now()${from === to ? sql`` : sql`, phase_changed_at = now()`}
      where ${machines.id} = ${machine.id} and ${machines.phase} = ${from}
      returning ${machines.id}
    )
    insert into ${events} (actor_type, actor_id, actor_label, project_id, action, object_type, object_id, object_name, reason, before, after)
    select ${who.type}, ${who.id}, ${who.label}, ${machine.projectId}, ${`machine.phase.${to}`}, 'machine',
           ${machine.id}, ${machine.name}, ${reason}, ${JSON.stringify({ phase: from })}::jsonb, ${JSON.stringify({ phase: to })}::jsonb
    from moved
    returning 1 as recorded`);
  return recorded.length > 0;
}

/** Updates the reason shown on a machine that stays in its phase (e.g. why it is still Pending); no write when it is unchanged. */
export async function setPhaseReason(tx: DbOrTx, machineId: string, reason: string | null) {
  await tx
    .update(machines)
    .set({ phaseReason: reason, updatedAt: sql`now()` })
    .where(sql`${machines.id} = ${machineId} and ${machines.phaseReason} is distinct from ${reason}`)
    .returning({ id: machines.id });
}
