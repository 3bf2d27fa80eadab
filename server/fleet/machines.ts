import { and, eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { query } from '@/db/query';
import { z } from 'zod';
import { machines, projectFleetSettings } from '@/db/schema/fleet';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, pgCode } from '@/server/errors';
import { createClaim } from '@/server/ipam/claims';
import { enqueueJob } from '@/server/jobs/enqueue';
import { admitMachine } from '@/server/quota/admission';
import { findCatalogueIds, locationUsability } from './catalogue';
import { machineClaimName } from './claim-names';
import { transitionMachine, type MachinePhase } from './phases';
import type { MachineCreateInput } from './schemas';

/**
 * Enqueues the machine's reconciler in the caller's transaction. Keyed, so bursts collapse into
 * one pending job; and in a queue of its own, so two runs for one machine never overlap (a job
 * enqueued while another runs waits for it).
 */
export function wakeMachine(tx: DbOrTx, machineId: string, runAt?: Date) {
  return enqueueJob(tx, 'machine__reconcile', { machineId }, { jobKey: `machine:${machineId}`, queueName: `machine:${machineId}`, runAt });
}

interface InterfaceStatus {
  network: string;
  families: ('IPv4' | 'IPv6')[];
  addressClasses: number;
  claims: string[];
  addresses: string[];
}

/**
 * A tenant requests a machine. Refused up front (nothing stored) when the catalogue entries do
 * not exist, the location is not usable (fail closed, with the reason) or quota is exhausted; the
 * quota claim, the IP claims for its interfaces and the machine are created in one transaction,
 * with its reconciler job.
 */
export async function requestMachine(db: DbOrTx, projectId: string, input: MachineCreateInput, actor: Actor) {
  const { cls, profile, location } = await findCatalogueIds(db, input);
  const usability = await locationUsability(db, location.id);
  if (!usability.usable) throw new DomainError('LocationUnavailable', `machines cannot be placed in ${location.name}: ${usability.reason}`, 'location');
  try {
    return await db.transaction(async (tx) => {
      const [settings] = await tx
        .select({ approvalRequired: projectFleetSettings.approvalRequired })
        .from(projectFleetSettings)
        .where(eq(projectFleetSettings.projectId, projectId));
      const requiresApproval = cls.requiresApproval || Boolean(settings?.approvalRequired);
      // Lock order shared with claim creates and machine releases, so that none of them can deadlock
      // another: the interfaces' pools first, by id as claim creation takes them (ipam_claim_try,
      // ipam_claim_create_many: a batch of an IPv4 and an IPv6 claim holds both pools), then the
      // ipclaims bucket (each claim's admission), then the machines bucket (this admission, last).
      const pools = input.interfaces.flatMap((nic) => nic.families.map((f) => sql`(${nic.network}, ${f === 'IPv4' ? 4 : 6}::smallint)`));
      if (pools.length) {
        await tx.execute(sql`
          select p.id from ip_pools p join networks n on n.id = p.network_id
          where n.project_id = ${projectId} and p.kind <> 'NodeBlock' and (n.name, p.family) in (${sql.join(pools, sql`, `)})
          order by p.id for update of p`);
      }
      const [machine] = await tx
        .insert(machines)
        .values({
          projectId,
          name: input.name,
          classId: cls.id,
          profileId: profile.id,
          locationId: location.id,
          desiredPower: input.desiredPower,
          phase: 'Pending',
          phaseReason: requiresApproval ? 'waiting for operator approval' : 'waiting for capacity',
          requiresApproval,
          createdBy: actor.label,
        })
        .returning({ id: machines.id, name: machines.name, projectId: machines.projectId });
      const interfaces: InterfaceStatus[] = [];
      for (const [i, nic] of input.interfaces.entries()) {
        const status: InterfaceStatus = { ...nic, claims: [], addresses: [] };
        for (const family of nic.families) {
          for (let n = 0; n < nic.addressClasses; n++) {
            const claimName = machineClaimName(input.name, i, family, n);
            const { claim } = await createClaim(
              tx,
              projectId,
              {
                name: claimName,
                network: nic.network,
                family: family === 'IPv4' ? 4 : 6,
                prefixLength: family === 'IPv4' ? 32 : 128,
                reclaimPolicy: 'Delete',
                ownerRef: { kind: 'Machine', name: input.name },
              },
              actor,
            );
            status.claims.push(claim.name);
            status.addresses.push(claim.allocatedCidr);
          }
        }
        interfaces.push(status);
      }
      await tx.update(machines).set({ interfaces }).where(eq(machines.id, machine.id));
      await recordEvent(tx, {
        actor,
        projectId,
        action: 'machine.create',
        objectType: 'machine',
        objectId: machine.id,
        objectName: machine.name,
        after: { class: cls.name, profile: profile.name, location: location.name, interfaces },
      });
      if (requiresApproval) await transitionMachine(tx, machine, 'Pending', 'AwaitingApproval', 'the project or class requires operator approval', actor);
      else await wakeMachine(tx, machine.id);
      const view = await getMachine(tx, projectId, input.name);
      // Last before the commit: the machines bucket row stays locked from here to the commit, and
      // every request and release of the project queues for it.
      await admitMachine(
        tx,
        projectId,
        { name: input.name, spec: { class: cls.name, profile: profile.name, location: location.name, interfaces: input.interfaces } },
        actor,
      );
      return view;
    });
  } catch (e) {
    if (pgCode(e) === '23505') throw new DomainError('Conflict', `machine "${input.name}" already exists`, 'name');
    throw e;
  }
}

/**
 * The machine a name addresses: the live one holding it, else the newest Released one (a name is
 * unique among live machines only, so released machines of that name may be several).
 */
const liveFirst = [sql`${machines.phase} = 'Released'`, sql`${machines.createdAt} desc`];

/**
 * Asks for a machine's release: the reconciler cleans it up through the provider and verifies.
 * Addresses the live machine of that name; with only released ones left, answers Released.
 */
export async function deleteMachine(db: DbOrTx, projectId: string, name: string, actor: Actor, reason = 'deleted by the tenant') {
  return db.transaction(async (tx) => {
    const [m] = await tx
      .select({ id: machines.id, phase: machines.phase, deletion: machines.deletionRequestedAt })
      .from(machines)
      .where(and(eq(machines.projectId, projectId), eq(machines.name, name)))
      .orderBy(...liveFirst)
      .limit(1)
      .for('update');
    if (!m) throw new DomainError('NotFound', `machine "${name}" not found`, 'name');
    if (m.phase === 'Released') return { name, phase: 'Released' as MachinePhase };
    if (!m.deletion) {
      await tx
        .update(machines)
        .set({ deletionRequestedAt: sql`now()`, updatedAt: sql`now()` })
        .where(eq(machines.id, m.id))
        .returning({ id: machines.id });
      await recordEvent(tx, { actor, projectId, action: 'machine.release.requested', objectType: 'machine', objectId: m.id, objectName: name, reason });
    }
    await wakeMachine(tx, m.id);
    return { name, phase: m.phase as MachinePhase };
  });
}

/** Operator approval: the machine goes on to allocation. */
export async function approveMachine(db: Db, machineId: string, actor: Actor) {
  return db.transaction(async (tx) => {
    const [m] = await tx
      .select({ id: machines.id, projectId: machines.projectId, name: machines.name, phase: machines.phase })
      .from(machines)
      .where(eq(machines.id, machineId))
      .for('update');
    if (!m) throw new DomainError('NotFound', `machine ${machineId} not found`);
    if (m.phase !== 'AwaitingApproval') throw new DomainError('InvalidTransition', `machine "${m.name}" is ${m.phase}, not awaiting approval`);
    await tx
      .update(machines)
      .set({ approvedAt: sql`now()`, approvedBy: actor.type === 'user' ? actor.id : actor.type === 'token' ? (actor.userId ?? null) : null })
      .where(eq(machines.id, m.id));
    await transitionMachine(tx, m, 'AwaitingApproval', 'Pending', `approved by ${actor.label}`, actor);
    await wakeMachine(tx, m.id);
    return { id: m.id, name: m.name };
  });
}

/** Operator rejection with a reason: the request ends (Released), its quota and addresses are returned. */
export async function rejectMachine(db: Db, machineId: string, reason: string, actor: Actor) {
  if (!reason.trim()) throw new DomainError('ValidationFailed', 'a reason is required', 'reason');
  return db.transaction(async (tx) => {
    const [m] = await tx
      .select({ id: machines.id, projectId: machines.projectId, name: machines.name, phase: machines.phase })
      .from(machines)
      .where(eq(machines.id, machineId))
      .for('update');
    if (!m) throw new DomainError('NotFound', `machine ${machineId} not found`);
    if (m.phase !== 'AwaitingApproval') throw new DomainError('InvalidTransition', `machine "${m.name}" is ${m.phase}, not awaiting approval`);
    await tx
      .update(machines)
      .set({ deletionRequestedAt: sql`now()` })
      .where(eq(machines.id, m.id))
      .returning({ id: machines.id });
    await recordEvent(tx, {
      actor,
      projectId: m.projectId,
      action: 'machine.request.rejected',
      objectType: 'machine',
      objectId: m.id,
      objectName: m.name,
      reason,
    });
    await wakeMachine(tx, m.id);
    return { id: m.id, name: m.name };
  });
}

const machineView = sql`
  select m.id, m.name, m.phase, m.phase_reason as "phaseReason", m.desired_power as "desiredPower", m.interfaces,
         m.requires_approval as "requiresApproval", m.approved_at as "approvedAt", m.deletion_requested_at as "deletionRequestedAt",
         m.created_by as "createdBy", m.created_at as "createdAt", m.updated_at as "updatedAt", m.phase_changed_at as "phaseChangedAt",
         k.name as class, k.cores, k.memory_gib as "memoryGib", k.arch, pf.name as profile, pf.image_digest as "imageDigest", l.name as location,
         p.slug as project,
         a.id as "allocationId", a.status as "allocationStatus", a.epoch::int as epoch, c.device_ref as "deviceRef", c.state as "capacityState",
         (select row_to_json(o) from (select id, kind, state, attempts, last_error as "lastError", updated_at as "updatedAt"
            from provider_operations where machine_id = m.id order by created_at desc limit 1) o) as "lastOperation"
  from machines m
    join machine_classes k on k.id = m.class_id
    join machine_profiles pf on pf.id = m.profile_id
    join locations l on l.id = m.location_id
    join projects p on p.id = m.project_id
    left join machine_allocations a on a.machine_id = m.id and a.status <> 'Released'
    left join machine_capacity c on c.id = a.capacity_id`;

export type MachineView = {
  id: string;
  name: string;
  phase: MachinePhase;
  phaseReason: string | null;
  desiredPower: string;
  interfaces: InterfaceStatus[];
  class: string;
  profile: string;
  location: string;
  project: string;
  allocationId: string | null;
  deviceRef: string | null;
  epoch: number | null;
  lastOperation: { id: string; kind: string; state: string; attempts: number; lastError: string | null } | null;
  createdAt: Date;
  [k: string]: unknown;
};

/**
 * A machine by name: the live one holding the name, else the newest Released one of that name.
 * With `id`, exactly that machine (a released one whose name was taken again), if it has the name.
 */
export async function getMachine(db: DbOrTx, projectId: string, name: string, id?: string): Promise<MachineView> {
  const which = id ? sql`and m.id = ${id}` : sql``;
  const [m] = (await db.execute(
    sql`${machineView} where m.project_id = ${projectId} and m.name = ${name} ${which} order by m.phase = 'Released', m.created_at desc limit 1`,
  )) as unknown as MachineView[];
  if (!m) throw new DomainError('NotFound', `machine "${name}" not found`, 'name');
  return m;
}

/**
 * A page of machines, newest first. Released machines are history: they are listed only when
 * asked for with `phase: 'Released'`; without a phase the list holds the live machines.
 */
export async function listMachines(db: DbOrTx, projectId: string | null, input: { phase?: MachinePhase; search?: string; limit: number; offset: number }) {
  const filters = [projectId ? sql`m.project_id = ${projectId}` : sql`true`];
  filters.push(input.phase ? sql`m.phase = ${input.phase}` : sql`m.phase <> 'Released'`);
  if (input.search) filters.push(sql`(m.name ilike ${'%' + input.search + '%'} or c.device_ref ilike ${'%' + input.search + '%'})`);
  const where = sql.join(filters, sql` and `);
  const items = (await db.execute(
    sql`${machineView} where ${where} order by m.created_at desc limit ${input.limit} offset ${input.offset}`,
  )) as unknown as MachineView[];
  const [{ total }] = (await db.execute(
    sql`select count(*)::int as total from machines m left join machine_allocations a on a.machine_id = m.id and a.status <> 'Released' left join machine_capacity c on c.id = a.capacity_id where ${where}`,
  )) as unknown as { total: number }[];
  return { items, total };
}

/**
 * A machine's timeline, oldest first, from what happened: phase changes, waits with their reason,
 * each provider operation outcome (written by the trigger in server/fleet/sql/provider_operation_history.sql,
 * with unknown outcomes and their resolution and each retry's error), and other events. Events of
 * one transaction share a time: the event id keeps their order. An operation recorded before that
 * history existed shows once, in its current state.
 */
export async function machineTimeline(db: DbOrTx, machineId: string) {
  return query(
    db,
    sql`
    select at, id as seq, action, actor_label as actor, reason, before, after from events where object_type = 'machine' and object_id = ${machineId}
    union all
    select o.created_at, 0, 'operation.' || o.kind || '.' || o.state, 'provider', o.last_error, null,
           json_build_object('id', o.id, 'kind', o.kind, 'state', o.state, 'attempts', o.attempts, 'epoch', o.epoch, 'fencingToken', o.fencing_token)::jsonb
    from provider_operations o
    where o.machine_id = ${machineId}
      and not exists (select 1 from events e where e.object_type = 'machine' and e.object_id = ${machineId} and e.after->>'id' = o.id)
    order by 1, 2`,
    timelineRow,
  );
}

const timelineRow = z.object({
  at: z.coerce.date(),
  seq: z.coerce.number(),
  action: z.string(),
  actor: z.string(),
  reason: z.string().nullable(),
  before: z.unknown(),
  after: z.unknown(),
});
