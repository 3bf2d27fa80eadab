import { asc, eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query } from '@/db/query';
import { resourceRegistrations } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, pgCode } from '@/server/errors';
import { lockProjectsGrants, recomputeLimits, refreshGrantActivation } from './books';
import type { RegistrationInput } from './schemas';

const columns = {
  id: resourceRegistrations.id,
  resourceType: resourceRegistrations.resourceType,
  consumerKind: resourceRegistrations.consumerKind,
  type: resourceRegistrations.type,
  description: resourceRegistrations.description,
  baseUnit: resourceRegistrations.baseUnit,
  displayUnit: resourceRegistrations.displayUnit,
  unitConversionFactor: resourceRegistrations.unitConversionFactor,
  claimingKinds: resourceRegistrations.claimingKinds,
  active: resourceRegistrations.active,
  activeReason: resourceRegistrations.activeReason,
  activeMessage: resourceRegistrations.activeMessage,
  createdBy: resourceRegistrations.createdBy,
  createdAt: resourceRegistrations.createdAt,
  updatedAt: resourceRegistrations.updatedAt,
};

/** Every registration, by resource type (a short list: one row per quota-managed type). */
export async function listRegistrations(db: DbOrTx) {
  return db.select(columns).from(resourceRegistrations).orderBy(asc(resourceRegistrations.resourceType));
}

export async function getRegistration(db: DbOrTx, resourceType: string) {
  const [row] = await db.select(columns).from(resourceRegistrations).where(eq(resourceRegistrations.resourceType, resourceType));
  if (!row) throw new DomainError('NotFound', `resource type "${resourceType}" is not registered`, 'resourceType');
  return row;
}

/**
 * Grants that mention `resourceType` change their Active condition when it is registered or
 * unregistered; this re-evaluates them and their projects' buckets in the caller's transaction.
 */
async function reactivateGrantsFor(tx: DbOrTx, resourceType: string) {
  const affected = await query(
    tx,
    sql`select distinct project_id as "projectId" from resource_grants where allowances @> ${JSON.stringify([{ resourceType }])}::jsonb`,
    z.object({ projectId: z.string() }),
  );
  if (!affected.length) return 0;
  await lockProjectsGrants(
    tx,
    affected.map((a) => a.projectId),
  );
  const changed = await refreshGrantActivation(tx, sql`g2.allowances @> ${JSON.stringify([{ resourceType }])}::jsonb`);
  const byProject = new Map<string, Set<string>>();
  for (const g of changed) {
    const set = byProject.get(g.projectId) ?? new Set<string>();
    for (const a of g.allowances) set.add(a.resourceType);
    byProject.set(g.projectId, set);
  }
  for (const [projectId, types] of byProject) await recomputeLimits(tx, projectId, [...types]);
  return changed.length;
}

/**
 * Registers a resource type: from now on objects whose ClaimCreationPolicy requests it are
 * admitted only against their project's bucket. Grants that were waiting for this type become
 * Active in the same transaction, and their buckets' limits are recomputed.
 */
export async function createRegistration(db: Db, input: RegistrationInput, actor: Actor) {
  try {
    return await db.transaction(async (tx) => {
      const [row] = await tx
        .insert(resourceRegistrations)
        .values({ ...input, createdBy: actor.label })
        .returning(columns);
      const activated = await reactivateGrantsFor(tx, input.resourceType);
      await recordEvent(tx, {
        actor,
        action: 'quota.registration.create',
        objectType: 'resourceregistration',
        objectId: row.id,
        objectName: input.resourceType,
        after: input,
        reason: activated ? `${activated} grant(s) became active` : null,
      });
      return row;
    });
  } catch (e) {
    if (pgCode(e) === '23505') throw new DomainError('Conflict', `resource type "${input.resourceType}" is already registered`, 'resourceType');
    throw e;
  }
}

/** Changes a registration's description, units, type or claiming kinds (the type name is immutable). */
export async function updateRegistration(db: Db, resourceType: string, input: Partial<Omit<RegistrationInput, 'resourceType' | 'consumerKind'>>, actor: Actor) {
  return db.transaction(async (tx) => {
    const before = await getRegistration(tx, resourceType);
    const [row] = await tx
      .update(resourceRegistrations)
      .set({ ...input, updatedAt: new Date() })
      .where(eq(resourceRegistrations.resourceType, resourceType))
      .returning(columns);
    await recordEvent(tx, {
      actor,
      action: 'quota.registration.update',
      objectType: 'resourceregistration',
      objectId: row.id,
      objectName: resourceType,
      before: {
        type: before.type,
        description: before.description,
        baseUnit: before.baseUnit,
        displayUnit: before.displayUnit,
        claimingKinds: before.claimingKinds,
      },
      after: input,
    });
    return row;
  });
}

/**
 * Unregisters a type. Refused (409) while any grant allows it or any live claim holds it: removing
 * it would silently switch quota off for those objects and deactivate whole grants.
 */
export async function deleteRegistration(db: Db, resourceType: string, actor: Actor) {
  return db.transaction(async (tx) => {
    const before = await getRegistration(tx, resourceType);
    // Exclusive: waits for grant writes that share-locked it, and blocks new ones until we finish.
    await tx.execute(sql`select 1 from resource_registrations where resource_type = ${resourceType} for update`);
    const [usage] = await query(
      tx,
      sql`select
        (select count(*)::int from resource_grants where allowances @> ${JSON.stringify([{ resourceType }])}::jsonb) as grants,
        (select string_agg(p.slug || '/' || g.name, ', ') from (select * from resource_grants where allowances @> ${JSON.stringify([{ resourceType }])}::jsonb order by created_at limit 5) g join projects p on p.id = g.project_id) as names,
        (select count(*)::int from resource_claims where status = 'Granted' and released_at is null and requests @> ${JSON.stringify([{ resourceType }])}::jsonb) as claims`,
      z.object({ grants: z.number(), names: z.string().nullable(), claims: z.number() }),
    );
    if (usage.grants > 0 || usage.claims > 0) {
      throw new DomainError(
        'Conflict',
        `resource type "${resourceType}" is still in use: ${usage.grants} grant(s)${usage.names ? ` (${usage.names}${usage.grants > 5 ? ', …' : ''})` : ''} and ${usage.claims} live claim(s); remove them first`,
        'resourceType',
        { grants: usage.grants, claims: usage.claims },
      );
    }
    await tx.delete(resourceRegistrations).where(eq(resourceRegistrations.resourceType, resourceType));
    await tx.execute(sql`delete from allowance_buckets where resource_type = ${resourceType} and allocated = 0`);
    await recordEvent(tx, {
      actor,
      action: 'quota.registration.delete',
      objectType: 'resourceregistration',
      objectId: before.id,
      objectName: resourceType,
      before,
    });
    return { resourceType };
  });
}
