import { and, asc, eq, ilike, or, sql, type SQL } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query } from '@/db/query';
import { grantCreationPolicies, projects, resourceGrants, type QuotaAmount } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, pgCode } from '@/server/errors';
import { lockProjectGrants, lockRegistrations, recomputeLimits, refreshGrantActivation, bucketRow, type BucketRow } from './books';
import { CelCompileError, CelEvalError, evaluateConstraint, prepareBindings, renderText, type CelBindings } from './cel';
import { quotaName } from './schemas';

export type GrantSource = 'Policy' | 'Operator' | 'IncreaseRequest' | 'Migration';

export interface GrantView {
  id: string;
  projectId: string;
  project: string;
  name: string;
  allowances: QuotaAmount[];
  active: boolean;
  activeReason: string;
  activeMessage: string;
  source: string;
  sourceRef: string | null;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

const grantColumns = {
  id: resourceGrants.id,
  projectId: resourceGrants.projectId,
  project: projects.slug,
  name: resourceGrants.name,
  allowances: resourceGrants.allowances,
  active: resourceGrants.active,
  activeReason: resourceGrants.activeReason,
  activeMessage: resourceGrants.activeMessage,
  source: resourceGrants.source,
  sourceRef: resourceGrants.sourceRef,
  createdBy: resourceGrants.createdBy,
  createdAt: resourceGrants.createdAt,
  updatedAt: resourceGrants.updatedAt,
};

async function getGrantRow(db: DbOrTx, projectId: string, name: string) {
  const [row] = await db
    .select(grantColumns)
    .from(resourceGrants)
    .innerJoin(projects, eq(projects.id, resourceGrants.projectId))
    .where(and(eq(resourceGrants.projectId, projectId), eq(resourceGrants.name, name)));
  return row as GrantView | undefined;
}

export interface GrantWriteInput {
  projectId: string;
  name: string;
  allowances: QuotaAmount[];
  source: GrantSource;
  sourceRef?: string | null;
}

/**
 * Creates a grant inside the caller's transaction and brings the project's buckets for its types
 * up to date (same transaction). Active only when every type is registered; an inactive grant is
 * stored and starts counting when the missing registration appears.
 */
export async function createGrantTx(tx: DbOrTx, input: GrantWriteInput, actor: Actor): Promise<{ grant: GrantView; buckets: BucketRow[] }> {
  await lockProjectGrants(tx, input.projectId);
  let id: string;
  try {
    // A savepoint, so a name conflict can be answered without aborting the caller's transaction.
    [{ id }] = await (tx as Db).transaction(async (sp) =>
      sp
        .insert(resourceGrants)
        .values({
          projectId: input.projectId,
          name: input.name,
          allowances: input.allowances,
          source: input.source,
          sourceRef: input.sourceRef ?? null,
          createdBy: actor.label,
        })
        .returning({ id: resourceGrants.id }),
    );
  } catch (e) {
    if (pgCode(e) === '23505') throw new DomainError('Conflict', `grant "${input.name}" already exists in this project`, 'name');
    throw e;
  }
  await lockRegistrations(
    tx,
    input.allowances.map((a) => a.resourceType),
  );
  await refreshGrantActivation(tx, sql`g2.id = ${id}`);
  const buckets = await recomputeLimits(
    tx,
    input.projectId,
    input.allowances.map((a) => a.resourceType),
  );
  const grant = (await getGrantRow(tx, input.projectId, input.name))!;
  await recordEvent(tx, {
    actor,
    projectId: input.projectId,
    action: 'quota.grant.create',
    objectType: 'resourcegrant',
    objectId: id,
    objectName: input.name,
    after: { allowances: input.allowances, active: grant.active, source: input.source, sourceRef: input.sourceRef ?? null },
    reason: grant.active ? null : grant.activeMessage,
  });
  return { grant, buckets };
}

/** Creates a grant (operator action). */
export async function createGrant(db: Db, input: GrantWriteInput, actor: Actor) {
  return db.transaction((tx) => createGrantTx(tx, input, actor));
}

/**
 * Replaces a grant's allowances. Shrinking below what is allocated is allowed: it revokes nothing,
 * the bucket shows over its limit, and new claims are denied until usage falls below it.
 */
export async function updateGrant(db: Db, projectId: string, name: string, allowances: QuotaAmount[], actor: Actor) {
  return db.transaction(async (tx) => {
    await lockProjectGrants(tx, projectId);
    const before = await getGrantRow(tx, projectId, name);
    if (!before) throw new DomainError('NotFound', `grant "${name}" not found`, 'name');
    await tx.update(resourceGrants).set({ allowances, updatedAt: new Date() }).where(eq(resourceGrants.id, before.id));
    await lockRegistrations(
      tx,
      allowances.map((a) => a.resourceType),
    );
    await refreshGrantActivation(tx, sql`g2.id = ${before.id}`);
    const buckets = await recomputeLimits(
      tx,
      projectId,
      [...before.allowances, ...allowances].map((a) => a.resourceType),
    );
    const grant = (await getGrantRow(tx, projectId, name))!;
    const over = buckets.filter((b) => b.allocated > b.limit);
    await recordEvent(tx, {
      actor,
      projectId,
      action: 'quota.grant.update',
      objectType: 'resourcegrant',
      objectId: before.id,
      objectName: name,
      before: { allowances: before.allowances },
      after: { allowances },
      reason: over.length ? `over limit now: ${over.map((b) => `${b.resourceType} allocated ${b.allocated} > limit ${b.limit}`).join('; ')}` : null,
    });
    return { grant, buckets: await bucketsOf(tx, projectId, buckets.map((b) => b.resourceType).concat(allowances.map((a) => a.resourceType))) };
  });
}

/** Deletes a grant; its types' limits drop in the same transaction (claims are not revoked). */
export async function deleteGrant(db: Db, projectId: string, name: string, actor: Actor) {
  return db.transaction(async (tx) => {
    await lockProjectGrants(tx, projectId);
    const before = await getGrantRow(tx, projectId, name);
    if (!before) throw new DomainError('NotFound', `grant "${name}" not found`, 'name');
    await tx.delete(resourceGrants).where(eq(resourceGrants.id, before.id));
    await recomputeLimits(
      tx,
      projectId,
      before.allowances.map((a) => a.resourceType),
    );
    await recordEvent(tx, {
      actor,
      projectId,
      action: 'quota.grant.delete',
      objectType: 'resourcegrant',
      objectId: before.id,
      objectName: name,
      before: { allowances: before.allowances },
    });
    return { name };
  });
}

async function bucketsOf(db: DbOrTx, projectId: string, types: string[]) {
  const unique = [...new Set(types)];
  if (!unique.length) return [];
  return query(
    db,
    sql`select project_id as "projectId", resource_type as "resourceType", "limit"::float8 as "limit", allocated::float8 as allocated,
               claim_count as "claimCount", grant_count as "grantCount"
        from allowance_buckets where project_id = ${projectId} and resource_type in ${unique} order by resource_type`,
    bucketRow,
  );
}

/** Grants of one project or of every project (operator), filtered and paginated in the database. */
export async function listGrants(db: DbOrTx, input: { projectId?: string; search?: string; limit: number; offset: number }) {
  const where: SQL[] = [];
  if (input.projectId) where.push(eq(resourceGrants.projectId, input.projectId));
  if (input.search) {
    const term = `%${input.search.trim()}%`;
    where.push(or(ilike(resourceGrants.name, term), ilike(projects.slug, term), sql`${resourceGrants.allowances}::text ilike ${term}`)!);
  }
  const items = (await db
    .select(grantColumns)
    .from(resourceGrants)
    .innerJoin(projects, eq(projects.id, resourceGrants.projectId))
    .where(where.length ? and(...where) : undefined)
    .orderBy(asc(projects.slug), asc(resourceGrants.name))
    .limit(input.limit)
    .offset(input.offset)) as GrantView[];
  const [{ total }] = await query(
    db,
    sql`select count(*)::int as total from resource_grants join projects on projects.id = resource_grants.project_id ${where.length ? sql`where ${and(...where)}` : sql``}`,
    z.object({ total: z.number() }),
  );
  return { items, total, nextOffset: input.offset + items.length < total ? input.offset + items.length : null };
}

/** Everything a GrantCreationPolicy sees about the project being created. */
export interface NewProject {
  id: string;
  slug: string;
  name: string;
  organizationId: string;
}

function policyFailed(policy: string, where: string, e: unknown): DomainError {
  const message = e instanceof CelEvalError || e instanceof CelCompileError ? e.message : String((e as Error)?.message ?? e);
  return new DomainError('PolicyFailed', `GrantCreationPolicy "${policy}" failed at ${where}: ${message}`, undefined, { policy, at: where });
}

/**
 * Runs the GrantCreationPolicies for a project being created, inside the project's transaction:
 * every enabled, Ready policy whose constraints all hold creates one grant from its template. A
 * constraint or template that fails to evaluate fails the project's creation with `PolicyFailed`
 * (a policy is never silently skipped); policies that are not Ready are not applied.
 */
export async function applyGrantPolicies(tx: DbOrTx, project: NewProject, actor: Actor): Promise<GrantView[]> {
  const policies = await tx
    .select({
      name: grantCreationPolicies.name,
      constraints: grantCreationPolicies.constraints,
      grantNameTemplate: grantCreationPolicies.grantNameTemplate,
      allowances: grantCreationPolicies.allowances,
    })
    .from(grantCreationPolicies)
    .where(and(eq(grantCreationPolicies.enabled, true), eq(grantCreationPolicies.ready, true), eq(grantCreationPolicies.triggerKind, 'Project')))
    .orderBy(asc(grantCreationPolicies.name));
  if (policies.length === 0) return [];
  const [org] = await query(tx, sql`select slug from organizations where id = ${project.organizationId}`, z.object({ slug: z.string() }));
  const bindings: CelBindings = {
    trigger: {
      apiVersion: 'resourcemanager.miloapis.com/v1alpha1',
      kind: 'Project',
      metadata: { name: project.slug, namespace: project.slug, uid: project.id, labels: {} },
      spec: { displayName: project.name, organization: org?.slug ?? '' },
    },
    requestInfo: { name: project.slug, namespace: project.slug, verb: 'create', resource: 'projects', group: 'resourcemanager.miloapis.com' },
    user: userOf(actor),
  };
  const prepared = prepareBindings(bindings);
  const created: GrantView[] = [];
  for (const policy of policies) {
    let applies = true;
    for (const [i, c] of policy.constraints.entries()) {
      try {
        if (!evaluateConstraint(c.expression, prepared)) {
          applies = false;
          break;
        }
      } catch (e) {
        throw policyFailed(policy.name, `constraints[${i}]`, e);
      }
    }
    if (!applies) continue;
    let name: string;
    try {
      name = renderText(policy.grantNameTemplate, prepared);
    } catch (e) {
      throw policyFailed(policy.name, 'grantNameTemplate', e);
    }
    const parsed = quotaName.safeParse(name);
    if (!parsed.success) throw policyFailed(policy.name, 'grantNameTemplate', new Error(`rendered "${name}", which ${parsed.error.issues[0].message}`));
    const { grant } = await createGrantTx(tx, { projectId: project.id, name, allowances: policy.allowances, source: 'Policy', sourceRef: policy.name }, actor);
    created.push(grant);
  }
  return created;
}

/** The `user` variable of policies, from whoever acts. */
export function userOf(actor: Actor): CelBindings['user'] {
  if (actor.type === 'system') return { name: actor.label, email: '', uid: '', type: 'system' };
  return { name: actor.label, email: actor.type === 'user' ? actor.label : '', uid: actor.id, type: actor.type };
}
