import { and, asc, count, eq, inArray } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { memberships, organizations, projects } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, pgCode } from '@/server/errors';
import { hasPlatformRole, type OrganizationRole, type SessionUser } from './roles';
import { checkDisplayName, slugPattern } from './slugs';

export interface OrganizationRef {
  id: string;
  slug: string;
  name: string;
}

export interface OrganizationAccess {
  organization: OrganizationRef;
  /** The user's role on the organization; platform admins act as owners. Null for an operator who only reads it. */
  role: OrganizationRole | null;
}

/**
 * What `user` may do in the organization `slug`: their organization role (admins: owner). Platform
 * operators may read every organization (role null). Anyone else gets NotFound, so other tenants'
 * organizations are not revealed.
 */
export async function resolveOrganizationAccess(db: DbOrTx, user: SessionUser, slug: string): Promise<OrganizationAccess> {
  // A path parameter that cannot be a slug names nothing (and is never sent to the database).
  if (!slugPattern.test(slug)) throw new DomainError('NotFound', `organization "${slug.slice(0, 63)}" not found`, 'organization');
  const [row] = await db
    .select({ id: organizations.id, slug: organizations.slug, name: organizations.name, role: memberships.role })
    .from(organizations)
    .leftJoin(memberships, and(eq(memberships.organizationId, organizations.id), eq(memberships.userId, user.id)))
    .where(eq(organizations.slug, slug));
  const notFound = new DomainError('NotFound', `organization "${slug}" not found`, 'organization');
  if (!row) throw notFound;
  const organization = { id: row.id, slug: row.slug, name: row.name };
  if (hasPlatformRole(user, 'admin')) return { organization, role: 'owner' };
  if (row.role) return { organization, role: row.role as OrganizationRole };
  if (hasPlatformRole(user, 'operator')) return { organization, role: null };
  throw notFound;
}

/**
 * The organizations `user` belongs to (platform operators: all of them), with their role and how
 * many projects each holds, by slug.
 */
export async function listOrganizationsForUser(db: DbOrTx, user: SessionUser) {
  const staff = hasPlatformRole(user, 'operator');
  const mine = await db
    .select({ organizationId: memberships.organizationId, role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.userId, user.id)));
  const roleOf = new Map(mine.filter((m) => m.organizationId).map((m) => [m.organizationId!, m.role as OrganizationRole]));
  if (!staff && roleOf.size === 0) return [];
  const rows = await organizationRows(db, staff ? undefined : [...roleOf.keys()]);
  const admin = hasPlatformRole(user, 'admin');
  return rows.map((o) => ({ ...o, role: admin ? ('owner' as OrganizationRole) : (roleOf.get(o.id) ?? null) }));
}

/** Organizations (those of `ids`, or every one) with how many projects each holds, by slug. */
function organizationRows(db: DbOrTx, ids?: string[]) {
  return db
    .select({ id: organizations.id, slug: organizations.slug, name: organizations.name, createdAt: organizations.createdAt, projects: count(projects.id) })
    .from(organizations)
    .leftJoin(projects, eq(projects.organizationId, organizations.id))
    .where(ids ? inArray(organizations.id, ids) : undefined)
    .groupBy(organizations.id)
    .orderBy(asc(organizations.slug));
}

/** Every organization of the platform with its project count, by slug (the platform control plane's operators). */
export function listAllOrganizations(db: DbOrTx) {
  return organizationRows(db);
}

/** The projects of an organization, by slug. */
export async function listOrganizationProjects(db: DbOrTx, organizationId: string) {
  return db
    .select({
      id: projects.id,
      slug: projects.slug,
      name: projects.name,
      description: projects.description,
      phase: projects.phase,
      createdAt: projects.createdAt,
    })
    .from(projects)
    .where(eq(projects.organizationId, organizationId))
    .orderBy(asc(projects.slug));
}

/** Renames an organization (its display name; the slug is its identity and never changes). */
export async function renameOrganization(db: DbOrTx, organizationId: string, rawName: string, actor: Actor): Promise<OrganizationRef> {
  const name = checkDisplayName('name', rawName);
  const [before] = await db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, organizationId));
  if (!before) throw new DomainError('NotFound', 'organization not found', 'organization');
  const [org] = await db
    .update(organizations)
    .set({ name })
    .where(eq(organizations.id, organizationId))
    .returning({ id: organizations.id, slug: organizations.slug, name: organizations.name });
  await recordEvent(db, {
    actor,
    action: 'organization.rename',
    objectType: 'organization',
    objectId: org.id,
    objectName: org.slug,
    before: { name: before.name },
    after: { name },
  });
  return org;
}

/**
 * Deletes an organization that holds no projects (not even one being deleted): Conflict otherwise.
 * The foreign key from projects is the guard; the count before it only words the refusal.
 */
export async function deleteOrganization(db: Db, organizationId: string, actor: Actor): Promise<OrganizationRef> {
  try {
    return await db.transaction(async (tx) => {
      const [org] = await tx
        .select({ id: organizations.id, slug: organizations.slug, name: organizations.name })
        .from(organizations)
        .where(eq(organizations.id, organizationId))
        .for('update');
      if (!org) throw new DomainError('NotFound', 'organization not found', 'organization');
      const [held] = await tx.select({ n: count() }).from(projects).where(eq(projects.organizationId, organizationId));
      if (held.n > 0) throw new DomainError('Conflict', `organization "${org.slug}" still holds ${held.n} project(s); delete them first`, 'organization');
      await tx.delete(organizations).where(eq(organizations.id, organizationId));
      await recordEvent(tx, { actor, action: 'organization.delete', objectType: 'organization', objectId: org.id, objectName: org.slug, before: org });
      return org;
    });
  } catch (e) {
    if (pgCode(e) === '23503') throw new DomainError('Conflict', 'the organization still holds projects; delete them first', 'organization');
    throw e;
  }
}
