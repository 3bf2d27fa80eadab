/**
 * Deleting a project in the presence of failure: a workflow over tenancy, quota, fleet, cni and
 * ipam, each released through its own domain functions.
 *
 * `requestProjectDeletion` puts the project in phase `Deleting` (reads still work; the database
 * refuses new objects in it: server/tenancy/sql/project_refuse_new_objects.sql), revokes every token of the project and enqueues the
 * `project__delete` job, all in one transaction. The job runs `runDeletionPass`: level-triggered and
 * idempotent, it reads everything fresh and releases what it finds through the features' own
 * delete paths (so every release is audited and the quota books follow):
 *
 *   pending increase requests (rejected) ─┐
 *   machines (release requested: the fleet reconciler cleans them through the provider and
 *             verifies, or quarantines the capacity) ─┐
 *   clusters (their pod leases and node blocks) ──────┤
 *   IP claims not held by a machine still releasing ──┤
 *   retained allocations ─────────────────────────────┤
 *   networks with nothing left in them ───────────────┘
 *        │ once no machine is left:
 *        ▼
 *   orphaned quota claims, grants ──▶ the project row (locked, checked empty, deleted; cascades
 *                                     memberships, revoked tokens, buckets, the claim log)
 *
 * What cannot be released yet — a machine whose cleanup waits on the provider — is recorded in
 * `project_deletion_blockers` with the dependency, the machine's own retry count, its next attempt
 * and the last error. The pass is then retried with capped exponential backoff and jitter (a job
 * with a run time, keyed per project, never a loop), counted in
 * `meridian_project_deletion_retries_total`; and a machine of a deleting project reaching
 * `Released` wakes the job at once (a trigger: server/tenancy/sql/project_deletion_wake_on_release.sql), so the deletion completes as soon
 * as the provider is back. The provider itself is retried only by the machine's reconciler, with
 * its own capped backoff: deletion adds no calls to a dependency that is down.
 *
 * The audit log outlives the project (`events.project_id` has no foreign key): its history, the
 * release of each object and a final `project.deleted` event stay.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query, timestampColumn } from '@/db/query';
import { apiTokens, projectDeletionBlockers, projects } from '@/db/schema';
import { recordEvent, systemActor, type Actor } from '@/server/audit/events';
import { deleteCluster } from '@/server/cni/clusters';
import { DomainError } from '@/server/errors';
import { env } from '@/server/env';
import { deleteMachine } from '@/server/fleet/machines';
import { deleteClaim, releaseRetainedAllocation } from '@/server/ipam/claims';
import { deleteNetwork } from '@/server/ipam/networks';
import { enqueueJob } from '@/server/jobs/enqueue';
import { log } from '@/server/observability/log';
import { incrementCounter } from '@/server/observability/metrics';
import { release as releaseQuotaClaim } from '@/server/quota/admission';
import { deleteGrant } from '@/server/quota/grants';
import { rejectIncreaseRequest } from '@/server/quota/increases';
import type { ProjectPhase } from '@/server/tenancy/projects';

const actor = systemActor('project-deletion');

/** Who a blocked object waits on: the machine provider, the fleet reconciler mid-step, or a failed step of Meridian's own (retried). */
export type DeletionDependency = 'provider' | 'fleet' | 'meridian';

export interface DeletionBlocker {
  objectKind: string;
  objectId: string;
  objectName: string;
  waitingOn: DeletionDependency;
  status: string;
  attempts: number;
  nextAttemptAt: Date | null;
  lastError: string | null;
}

// ---- Backoff -----------------------------------------------------------------------------------

/** The pass backoff: `PROJECT_DELETION_RETRY_BASE_MS` (1 s) doubling per waiting pass up to `PROJECT_DELETION_RETRY_CAP_MS` (60 s). */
export function deletionBackoffSchedule() {
  const e = env();
  return { baseMs: e.PROJECT_DELETION_RETRY_BASE_MS, capMs: Math.max(e.PROJECT_DELETION_RETRY_BASE_MS, e.PROJECT_DELETION_RETRY_CAP_MS) };
}

/**
 * The delay before waiting pass number `attempt` (1, 2, …) is retried: capped exponential backoff
 * with equal jitter — a ceiling of base·2^(attempt−1), at most the cap, and a delay uniformly in
 * [ceiling/2, ceiling] — so many projects deleting at once spread out instead of retrying in step,
 * and the delay never drops below half the ceiling (the retry rate has a hard bound).
 */
export function deletionBackoffMs(attempt: number, schedule = deletionBackoffSchedule(), random = Math.random): number {
  const ceiling = Math.min(schedule.capMs, schedule.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * The most retries the backoff allows within `windowMs` of the first pass: every delay is at least
 * half its ceiling, so n retries take at least base·(2^n − 1)/2 while uncapped (and capMs/2 each
 * once capped). What the tests hold the retry count to.
 */
export function maxRetriesWithin(windowMs: number, schedule = deletionBackoffSchedule()): number {
  let elapsed = 0;
  let n = 0;
  for (;;) {
    const ceiling = Math.min(schedule.capMs, schedule.baseMs * 2 ** Math.min(n, 30));
    if (elapsed + ceiling / 2 > windowMs) return n;
    elapsed += ceiling / 2;
    n++;
  }
}

// ---- The job -----------------------------------------------------------------------------------

/** The job key (and queue: passes of one project never overlap) of a project's deletion. */
export const deletionJobKey = (projectId: string) => `project-delete:${projectId}`;

/**
 * Enqueues a deletion pass in the caller's transaction. `hurry` replaces a scheduled pass with one
 * now (something changed); otherwise a pass already scheduled keeps its time, so asking again — or
 * a pass rescheduling itself while a wake-up is pending — never hurries the backoff.
 */
export function enqueueDeletionPass(tx: DbOrTx, projectId: string, options: { runAt?: Date; hurry: boolean }) {
  return enqueueJob(
    tx,
    'project__delete',
    { projectId },
    {
      jobKey: deletionJobKey(projectId),
      queueName: deletionJobKey(projectId),
      runAt: options.runAt,
      jobKeyMode: options.hurry ? 'replace' : 'preserve_run_at',
    },
  );
}

// ---- Request -----------------------------------------------------------------------------------

/**
 * Starts deleting a project: phase `Deleting` at once (creates are refused from now on, reads
 * still work), every token revoked, the deletion job enqueued — one transaction. Asking again is a
 * no-op that returns the deletion's status (and makes sure a pass is scheduled, without hurrying it).
 * Callers check who may ask (owners, platform operators).
 */
export async function requestProjectDeletion(db: Db, projectId: string, by: Actor, reason?: string | null) {
  await db.transaction(async (tx) => {
    const [p] = await tx.select({ id: projects.id, slug: projects.slug, phase: projects.phase }).from(projects).where(eq(projects.id, projectId)).for('update');
    if (!p) throw new DomainError('NotFound', `project ${projectId} not found`);
    if (p.phase !== 'Active') {
      await enqueueDeletionPass(tx, p.id, { hurry: false });
      return;
    }
    await tx
      .update(projects)
      .set({ phase: 'Deleting', deletionRequestedAt: sql`now()`, deletionRequestedBy: by.label, deletionAttempts: 0, deletionNextPassAt: null })
      .where(eq(projects.id, p.id));
    await recordEvent(tx, {
      actor: by,
      projectId: p.id,
      action: 'project.delete',
      objectType: 'project',
      objectId: p.id,
      objectName: p.slug,
      reason: reason ?? null,
      before: { phase: 'Active' },
      after: { phase: 'Deleting' },
    });
    const revoked = await tx
      .update(apiTokens)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(apiTokens.projectId, p.id), isNull(apiTokens.revokedAt)))
      .returning({ id: apiTokens.id, name: apiTokens.name });
    for (const t of revoked) {
      await recordEvent(tx, {
        actor: by,
        projectId: p.id,
        action: 'token.revoke',
        objectType: 'apiToken',
        objectId: t.id,
        objectName: t.name,
        reason: 'project is being deleted',
      });
    }
    await enqueueDeletionPass(tx, p.id, { hurry: true });
  });
  return getDeletionStatus(db, projectId);
}

// ---- One pass ----------------------------------------------------------------------------------

export type PassResult =
  /** The project row is gone (this pass deleted it, or an earlier one did). */
  | { type: 'deleted' }
  /** The project is not being deleted (nothing to do). */
  | { type: 'notDeleting' }
  /** Something is left: the blockers as recorded. */
  | { type: 'waiting'; blockers: DeletionBlocker[] };

const remainingRow = z.object({
  networks: z.number(),
  claims: z.number(),
  retained: z.number(),
  clusters: z.number(),
  leases: z.number(),
  machines: z.number(),
  quotaClaims: z.number(),
  grants: z.number(),
  increaseRequests: z.number(),
  tokens: z.number(),
});
export type Remaining = z.infer<typeof remainingRow>;

/** Counts of what a deleting project still holds. */
async function remaining(db: DbOrTx, projectId: string) {
  const [row] = await query(
    db,
    sql`
    select (select count(*) from networks where project_id = ${projectId})::int as networks,
           (select count(*) from ip_claims where project_id = ${projectId})::int as claims,
           (select count(*) from ip_allocations where project_id = ${projectId} and retained_name is not null)::int as retained,
           (select count(*) from clusters where project_id = ${projectId})::int as clusters,
           (select count(*) from pod_leases where project_id = ${projectId})::int as leases,
           (select count(*) from machines where project_id = ${projectId} and phase <> 'Released')::int as machines,
           (select count(*) from resource_claims where project_id = ${projectId} and status = 'Granted' and released_at is null)::int as "quotaClaims",
           (select count(*) from resource_grants where project_id = ${projectId})::int as grants,
           (select count(*) from quota_increase_requests where project_id = ${projectId} and status = 'Pending')::int as "increaseRequests",
           (select count(*) from api_tokens where project_id = ${projectId} and revoked_at is null)::int as tokens`,
    remainingRow,
  );
  return row;
}

const nothingLeft = (r: Remaining) => Object.values(r).every((n) => n === 0);

/** Runs one release step; a failure is recorded as a blocker (retried by the next pass), not thrown. */
async function attempt(failures: DeletionBlocker[], object: { kind: string; id: string; name: string }, step: () => Promise<unknown>) {
  try {
    await step();
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === 'NotFound') return; // released meanwhile (by its owner, or a concurrent pass)
    log('warn', `project deletion: releasing ${object.kind} ${object.name} failed`, { error: (e as Error).message });
    failures.push({
      objectKind: object.kind,
      objectId: object.id,
      objectName: object.name,
      waitingOn: 'meridian',
      status: 'release failed; retried by the next pass',
      attempts: 1,
      nextAttemptAt: null,
      lastError: (e as Error).message,
    });
  }
}

/**
 * One deletion pass over a project (the `project__delete` job): releases everything it can, records
 * what it must wait for, and deletes the project row when nothing is left. Safe to run any number
 * of times and concurrently with anything (every step is an idempotent domain operation; the last
 * one re-checks under the project's row lock).
 */
export async function runDeletionPass(db: Db, projectId: string): Promise<PassResult> {
  const [p] = await db.select({ id: projects.id, slug: projects.slug, phase: projects.phase }).from(projects).where(eq(projects.id, projectId));
  if (!p) return { type: 'deleted' };
  if (p.phase !== 'Deleting') return { type: 'notDeleting' };
  const failures: DeletionBlocker[] = [];
  const idName = z.object({ id: z.string(), name: z.string() });

  for (const r of await query(
    db,
    sql`select id from quota_increase_requests where project_id = ${projectId} and status = 'Pending'`,
    z.object({ id: z.string() }),
  )) {
    await attempt(failures, { kind: 'QuotaIncreaseRequest', id: r.id, name: r.id }, () =>
      rejectIncreaseRequest(db, { id: r.id, reason: 'the project is being deleted' }, actor).catch((e: { code?: string }) => {
        if (e.code !== 'Conflict') throw e; // decided meanwhile
      }),
    );
  }

  // Machines: ask once per machine (asking again would wake its reconciler early and defeat its backoff).
  for (const m of await query(
    db,
    sql`select id, name from machines where project_id = ${projectId} and phase <> 'Released' and deletion_requested_at is null`,
    idName,
  )) {
    await attempt(failures, { kind: 'Machine', id: m.id, name: m.name }, () => deleteMachine(db, projectId, m.name, actor, 'the project is being deleted'));
  }

  for (const c of await query(db, sql`select id, name from clusters where project_id = ${projectId} order by name`, idName)) {
    await attempt(failures, { kind: 'Cluster', id: c.id, name: c.name }, () => deleteCluster(db, projectId, c.name, actor));
  }

  // A machine's own addresses go back with it (in the transaction that marks it Released).
  const claims = await query(
    db,
    sql`
    select c.id, c.name from ip_claims c
    where c.project_id = ${projectId}
      and not exists (select 1 from machines m where m.project_id = c.project_id and c.owner_ref->>'kind' = 'Machine'
                        and m.name = c.owner_ref->>'name' and m.phase <> 'Released')
    order by c.name`,
    idName,
  );
  for (const c of claims) await attempt(failures, { kind: 'IPClaim', id: c.id, name: c.name }, () => deleteClaim(db, projectId, c.name, actor));

  for (const a of await query(
    db,
    sql`select id, retained_name as name from ip_allocations where project_id = ${projectId} and retained_name is not null`,
    idName,
  )) {
    await attempt(failures, { kind: 'IPAllocation', id: a.id, name: a.name }, () => releaseRetainedAllocation(db, a.id, actor, { projectId }));
  }

  const emptyNetworks = await query(
    db,
    sql`
    select n.id, n.name from networks n
    where n.project_id = ${projectId}
      and not exists (select 1 from ip_claims c where c.network_id = n.id)
      and not exists (select 1 from clusters k where k.network_id = n.id)
      and not exists (select 1 from ip_allocations a where a.network_id = n.id and (a.retained_name is not null or a.kind = 'PodAddress'))
    order by n.name`,
    idName,
  );
  for (const n of emptyNetworks) await attempt(failures, { kind: 'Network', id: n.id, name: n.name }, () => deleteNetwork(db, projectId, n.name, actor));

  const machineBlockers = await machinesStillReleasing(db, projectId);
  if (machineBlockers.length === 0 && failures.length === 0) {
    // Quota last: grants go only when no object of the project draws on them any more.
    const orphans = await query(
      db,
      sql`
      select id, ref_kind as kind, ref_name as name from resource_claims where project_id = ${projectId} and status = 'Granted' and released_at is null`,
      z.object({ id: z.string(), kind: z.string(), name: z.string() }),
    );
    for (const o of orphans) {
      await attempt(failures, { kind: 'ResourceClaim', id: o.id, name: `${o.kind}/${o.name}` }, () =>
        db.transaction(async (tx) => {
          if (await releaseQuotaClaim(tx, { projectId, kind: o.kind, name: o.name })) {
            await recordEvent(tx, {
              actor,
              projectId,
              action: 'quota.claim.release',
              objectType: 'resourceclaim',
              objectId: o.id,
              objectName: `${o.kind}/${o.name}`,
              reason: 'its object is gone; the project is being deleted',
            });
          }
        }),
      );
    }
    for (const g of await query(db, sql`select id, name from resource_grants where project_id = ${projectId} order by name`, idName)) {
      await attempt(failures, { kind: 'ResourceGrant', id: g.id, name: g.name }, () => deleteGrant(db, projectId, g.name, actor));
    }
    if (failures.length === 0 && (await deleteIfEmpty(db, projectId))) return { type: 'deleted' };
  }

  const blockers = [...machineBlockers, ...failures];
  if (blockers.length === 0) {
    // Something appeared after the sweep (an insert that raced the phase change): the next pass takes it.
    blockers.push({
      objectKind: 'Project',
      objectId: projectId,
      objectName: p.slug,
      waitingOn: 'meridian',
      status: 'objects appeared during the pass; sweeping again',
      attempts: 0,
      nextAttemptAt: null,
      lastError: null,
    });
  }
  await recordBlockers(db, projectId, blockers);
  return { type: 'waiting', blockers };
}

/**
 * The project's machines not yet Released, as blockers: a machine whose binding is being cleaned
 * waits on the provider (its cleanup operation's retry count and last error, and when its
 * reconciler tries again); one still mid-step (e.g. allocating when deletion began) waits on the
 * fleet reconciler.
 */
async function machinesStillReleasing(db: DbOrTx, projectId: string): Promise<DeletionBlocker[]> {
  const rows = await query(
    db,
    sql`
    select m.id, m.name, m.phase, m.phase_reason as "phaseReason",
           exists (select 1 from machine_allocations a where a.machine_id = m.id and a.status <> 'Released') as bound,
           o.state as "opState", o.attempts, o.last_error as "lastError",
           (select j.run_at from graphile_worker._private_jobs j where j.key = 'machine:' || m.id::text) as "nextAttemptAt"
    from machines m
      left join lateral (select state, attempts, last_error from provider_operations
                         where machine_id = m.id and kind = 'cleanup' order by created_at desc limit 1) o on true
    where m.project_id = ${projectId} and m.phase <> 'Released'
    order by m.name`,
    z.object({
      id: z.string(),
      name: z.string(),
      phase: z.string(),
      phaseReason: z.string().nullable(),
      bound: z.boolean(),
      opState: z.string().nullable(),
      attempts: z.number().nullable(),
      lastError: z.string().nullable(),
      nextAttemptAt: timestampColumn.nullable(),
    }),
  );
  return rows.map((m) => {
    const onProvider = m.bound || m.phase === 'Releasing' || (m.opState !== null && m.opState !== 'Succeeded' && m.opState !== 'Failed');
    return {
      objectKind: 'Machine',
      objectId: m.id,
      objectName: m.name,
      waitingOn: onProvider ? 'provider' : 'fleet',
      status: `${m.phase}${m.phaseReason ? `: ${m.phaseReason}` : ''}`,
      attempts: m.attempts ?? 0,
      nextAttemptAt: m.nextAttemptAt ? new Date(m.nextAttemptAt) : null,
      lastError: m.lastError,
    };
  });
}

/** Replaces the project's blocker rows with this pass's (keeping when each object was first seen waiting). */
async function recordBlockers(db: Db, projectId: string, blockers: DeletionBlocker[]) {
  await db.transaction(async (tx) => {
    const current = blockers.map((b) => sql`(${b.objectKind}, ${b.objectId})`);
    await tx.execute(sql`delete from project_deletion_blockers where project_id = ${projectId}
      ${current.length ? sql`and (object_kind, object_id) not in (${sql.join(current, sql`, `)})` : sql``}`);
    for (const b of blockers) {
      await tx
        .insert(projectDeletionBlockers)
        .values({ projectId, ...b })
        .onConflictDoUpdate({
          target: [projectDeletionBlockers.projectId, projectDeletionBlockers.objectKind, projectDeletionBlockers.objectId],
          set: {
            objectName: b.objectName,
            waitingOn: b.waitingOn,
            status: b.status,
            // A failing step of our own counts its failures; a provider wait shows the machine's own retries.
            attempts: b.waitingOn === 'meridian' ? sql`${projectDeletionBlockers.attempts} + 1` : b.attempts,
            nextAttemptAt: b.nextAttemptAt,
            lastError: b.lastError,
            updatedAt: sql`now()`,
          },
        });
    }
  });
}

/**
 * The last step: under the project's row lock — which waits for any insert still holding a
 * foreign-key lock on it, so nothing can appear behind the check — verify nothing is left, then
 * delete the row (cascading memberships, revoked tokens, empty buckets, the claim log, released
 * machines, blockers) and record `project.deleted`. False when something is still there.
 */
async function deleteIfEmpty(db: Db, projectId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [p] = await tx
      .select({ id: projects.id, slug: projects.slug, requestedBy: projects.deletionRequestedBy, requestedAt: projects.deletionRequestedAt })
      .from(projects)
      .where(eq(projects.id, projectId))
      .for('update');
    if (!p) return true;
    const left = await remaining(tx, projectId);
    if (!nothingLeft(left)) return false;
    await tx.delete(projects).where(eq(projects.id, projectId));
    await recordEvent(tx, {
      actor,
      projectId,
      action: 'project.deleted',
      objectType: 'project',
      objectId: projectId,
      objectName: p.slug,
      reason: `deletion requested by ${p.requestedBy ?? 'unknown'} at ${p.requestedAt?.toISOString() ?? '?'} is complete`,
      before: { phase: 'Deleting' },
    });
    return true;
  });
}

/**
 * After a pass that had to wait: schedules the next one with the pass backoff — not before the
 * earliest blocker's own next attempt (nothing can change before it; clamped to the cap) — and
 * counts the retry. A wake-up already pending (a machine released meanwhile) keeps its earlier time.
 */
export async function scheduleNextPass(db: Db, projectId: string, blockers: DeletionBlocker[]) {
  const schedule = deletionBackoffSchedule();
  await db.transaction(async (tx) => {
    const [p] = await tx
      .update(projects)
      .set({ deletionAttempts: sql`${projects.deletionAttempts} + 1` })
      .where(and(eq(projects.id, projectId), eq(projects.phase, 'Deleting')))
      .returning({ attempts: projects.deletionAttempts });
    if (!p) return;
    const now = Date.now();
    let runAt = now + deletionBackoffMs(p.attempts, schedule);
    const dependencyDue = Math.min(...blockers.map((b) => b.nextAttemptAt?.getTime() ?? Infinity));
    if (Number.isFinite(dependencyDue)) runAt = Math.max(runAt, Math.min(dependencyDue + 250, now + schedule.capMs));
    await tx
      .update(projects)
      .set({ deletionNextPassAt: new Date(runAt) })
      .where(eq(projects.id, projectId));
    await enqueueDeletionPass(tx, projectId, { runAt: new Date(runAt), hurry: false });
    const waitingOn = (['provider', 'meridian', 'fleet'] as const).find((d) => blockers.some((b) => b.waitingOn === d)) ?? 'meridian';
    await incrementCounter(tx, 'meridian_project_deletion_retries_total', { waiting_on: waitingOn });
  });
}

// ---- Status ------------------------------------------------------------------------------------

export interface DeletionStatus {
  phase: ProjectPhase;
  requestedAt: Date | null;
  requestedBy: string | null;
  /** Passes that had to wait so far (the exponent of the pass backoff). */
  passes: number;
  nextPassAt: Date | null;
  remaining: Remaining;
  blockers: (DeletionBlocker & { since: Date; updatedAt: Date })[];
}

/** Where a project's deletion stands: what is left and what waits on which dependency. */
export async function getDeletionStatus(db: DbOrTx, projectId: string): Promise<DeletionStatus> {
  const [p] = await db
    .select({
      phase: projects.phase,
      requestedAt: projects.deletionRequestedAt,
      requestedBy: projects.deletionRequestedBy,
      passes: projects.deletionAttempts,
      nextPassAt: projects.deletionNextPassAt,
    })
    .from(projects)
    .where(eq(projects.id, projectId));
  if (!p) throw new DomainError('NotFound', `project ${projectId} not found`);
  const blockers = await db
    .select({
      objectKind: projectDeletionBlockers.objectKind,
      objectId: projectDeletionBlockers.objectId,
      objectName: projectDeletionBlockers.objectName,
      waitingOn: projectDeletionBlockers.waitingOn,
      status: projectDeletionBlockers.status,
      attempts: projectDeletionBlockers.attempts,
      nextAttemptAt: projectDeletionBlockers.nextAttemptAt,
      lastError: projectDeletionBlockers.lastError,
      since: projectDeletionBlockers.since,
      updatedAt: projectDeletionBlockers.updatedAt,
    })
    .from(projectDeletionBlockers)
    .where(eq(projectDeletionBlockers.projectId, projectId))
    .orderBy(projectDeletionBlockers.objectKind, projectDeletionBlockers.objectName);
  return {
    phase: p.phase as ProjectPhase,
    requestedAt: p.requestedAt,
    requestedBy: p.requestedBy,
    passes: p.passes,
    nextPassAt: p.nextPassAt,
    remaining: await remaining(db, projectId),
    blockers: blockers.map((b) => ({ ...b, waitingOn: b.waitingOn as DeletionDependency })),
  };
}
