import { and, asc, eq, inArray, or, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query, timestampColumn } from '@/db/query';
import { memberships, organizations, projects } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, invalid, pgCode } from '@/server/errors';
import { maxRole, projectRoleFromOrganization, type MemberRole, type ProjectRole, type SessionUser, hasPlatformRole } from './roles';
import { checkDescription, checkDisplayName, checkSlug } from './slugs';

export { slugPattern } from './slugs';

/**
 * Creates an organization; its slug is unique, valid and not reserved. With `owner`, that user
 * becomes its owner in the same transaction (a user creating one for themself).
 */
export async function createOrganization(db: Db, input: { slug: string; name: string; owner?: string }, actor: Actor) {
  checkSlug('slug', input.slug);
  const name = checkDisplayName('name', input.name);
  try {
    return await db.transaction(async (tx) => {
      const [org] = await tx
        .insert(organizations)
        .values({ slug: input.slug, name })
        .returning({ id: organizations.id, slug: organizations.slug, name: organizations.name });
      await recordEvent(tx, {
        actor,
        action: 'organization.create',
        objectType: 'organization',
        objectId: org.id,
        objectName: org.slug,
        after: { slug: input.slug, name },
      });
      if (input.owner) await addMembership(tx, { userId: input.owner, role: 'owner', organizationId: org.id }, actor);
      return org;
    });
  } catch (e) {
    if (pgCode(e) === '23505') throw new DomainError('Conflict', `organization "${input.slug}" already exists`, 'slug');
    throw e;
  }
}

/** A project just created, as `createProjectWith` hands it to what runs alongside. */
export interface CreatedProject {
  id: string;
  slug: string;
  name: string;
  organizationId: string;
}

/**
 * Creates a project in an organization (project slugs are globally unique) and runs `alongside`
 * in the same transaction: what other domains give a new project. Callers use `createProject`
 * (server/workflows/project-creation.ts), which gives it its quota grants there.
 */
export async function createProjectWith(
  db: Db,
  input: { organizationId: string; slug: string; name: string; description?: string },
  actor: Actor,
  alongside: (tx: DbOrTx, project: CreatedProject) => Promise<unknown>,
) {
  checkSlug('slug', input.slug);
  const name = checkDisplayName('name', input.name);
  const description = checkDescription(input.description ?? '');
  try {
    return await db.transaction(async (tx) => {
      const [project] = await tx
        .insert(projects)
        .values({ organizationId: input.organizationId, slug: input.slug, name, ...(description ? { description } : {}) })
        .returning({ id: projects.id, slug: projects.slug, organizationId: projects.organizationId });
      await recordEvent(tx, {
        actor,
        projectId: project.id,
        action: 'project.create',
        objectType: 'project',
        objectId: project.id,
        objectName: project.slug,
        after: { organizationId: input.organizationId, slug: input.slug, name, description },
      });
      await alongside(tx, { ...project, name });
      return project;
    });
  } catch (e) {
    if (pgCode(e) === '23505') throw new DomainError('Conflict', `project "${input.slug}" already exists`, 'slug');
    throw e;
  }
}

/** `Active`, or `Deleting` while its objects are being released (see server/workflows/project-deletion.ts). */
export type ProjectPhase = 'Active' | 'Deleting';

export interface ProjectRef {
  id: string;
  slug: string;
  name: string;
  description: string;
  organizationId: string;
  organizationSlug: string;
  phase: ProjectPhase;
}

export interface ProjectAccess {
  project: ProjectRef;
  role: ProjectRole;
}

/** The project id of a slug, or NotFound (operator tools address projects by slug). */
export async function projectIdBySlug(db: DbOrTx, slug: string): Promise<string> {
  const [p] = await db.select({ id: projects.id }).from(projects).where(eq(projects.slug, slug));
  if (!p) throw new DomainError('NotFound', `project "${slug}" not found`, 'project');
  return p.id;
}

/** A project by slug, whoever asks (callers have checked the caller may see any project), or NotFound. */
export async function findProject(db: DbOrTx, slug: string): Promise<ProjectRef> {
  const [row] = await db
    .select({
      id: projects.id,
      slug: projects.slug,
      name: projects.name,
      description: projects.description,
      organizationId: projects.organizationId,
      organizationSlug: organizations.slug,
      phase: projects.phase,
    })
    .from(projects)
    .innerJoin(organizations, eq(organizations.id, projects.organizationId))
    .where(eq(projects.slug, slug));
  if (!row) throw new DomainError('NotFound', `project "${slug}" not found`);
  return { ...row, phase: row.phase as ProjectPhase };
}

/**
 * Resolves what `user` may do in the project `slug`: their project role, or owner when they own its
 * organization (an organization member holds no project role from that alone); platform admins act
 * as owners everywhere. Throws NotFound (never Forbidden) when the user
 * has no role there, so the existence of other tenants' projects is not revealed.
 */
export async function resolveProjectAccess(db: DbOrTx, user: SessionUser, slug: string): Promise<ProjectAccess> {
  const rows = await db
    .select({
      id: projects.id,
      slug: projects.slug,
      name: projects.name,
      description: projects.description,
      organizationId: projects.organizationId,
      organizationSlug: organizations.slug,
      phase: projects.phase,
      role: memberships.role,
      membershipProject: memberships.projectId,
    })
    .from(projects)
    .innerJoin(organizations, eq(organizations.id, projects.organizationId))
    .leftJoin(
      memberships,
      and(eq(memberships.userId, user.id), or(eq(memberships.projectId, projects.id), eq(memberships.organizationId, projects.organizationId))),
    )
    .where(eq(projects.slug, slug));
  if (rows.length === 0) throw new DomainError('NotFound', `project "${slug}" not found`);
  let role: ProjectRole | null = null;
  for (const row of rows) role = maxRole(role, projectRoleOf(row));
  if (hasPlatformRole(user, 'admin')) role = 'owner';
  if (!role) throw new DomainError('NotFound', `project "${slug}" not found`);
  const { id, name, description, organizationId, organizationSlug, phase } = rows[0];
  return { project: { id, slug: rows[0].slug, name, description, organizationId, organizationSlug, phase: phase as ProjectPhase }, role };
}

/**
 * Changes a project's display name and/or description (the slug is its identity and never
 * changes). At least one is given; both are validated as at creation (ValidationFailed naming
 * `name` or `description`). A project being deleted is not changed (ProjectDeleting). Audited as
 * `project.update` with what was and what is.
 */
export async function updateProject(db: Db, projectId: string, input: { name?: string; description?: string }, actor: Actor) {
  if (input.name === undefined && input.description === undefined) throw invalid('name', 'give a new name or description');
  const next: { name?: string; description?: string } = {};
  if (input.name !== undefined) next.name = checkDisplayName('name', input.name);
  if (input.description !== undefined) next.description = checkDescription(input.description);
  return db.transaction(async (tx) => {
    const [before] = await tx
      .select({ slug: projects.slug, name: projects.name, description: projects.description, phase: projects.phase })
      .from(projects)
      .where(eq(projects.id, projectId))
      .for('no key update');
    if (!before) throw new DomainError('NotFound', 'project not found', 'project');
    if (before.phase !== 'Active') throw new DomainError('ProjectDeleting', `project "${before.slug}" is being deleted: it cannot be changed`, 'project');
    const [after] = await tx
      .update(projects)
      .set(next)
      .where(eq(projects.id, projectId))
      .returning({ id: projects.id, slug: projects.slug, name: projects.name, description: projects.description });
    const changed = Object.keys(next) as (keyof typeof next)[];
    await recordEvent(tx, {
      actor,
      projectId,
      action: 'project.update',
      objectType: 'project',
      objectId: projectId,
      objectName: before.slug,
      before: Object.fromEntries(changed.map((k) => [k, before[k]])),
      after: Object.fromEntries(changed.map((k) => [k, after[k]])),
    });
    return after;
  });
}

/** The project role a membership row gives on a project it applies to (see `resolveProjectAccess`). */
function projectRoleOf(m: { role: MemberRole | null; membershipProject: string | null }): ProjectRole | null {
  if (!m.role) return null;
  return m.membershipProject ? (m.role as ProjectRole) : projectRoleFromOrganization(m.role);
}

/**
 * The projects `user` holds a role in (their own project memberships, and every project of the
 * organizations they own), with that role, ordered by organization then slug.
 */
export async function listProjectsForUser(db: DbOrTx, user: SessionUser) {
  const isAdmin = hasPlatformRole(user, 'admin');
  const mine = await db
    .select({ projectId: memberships.projectId, organizationId: memberships.organizationId, role: memberships.role })
    .from(memberships)
    .where(eq(memberships.userId, user.id));
  const orgIds = mine.filter((m) => m.organizationId).map((m) => m.organizationId!);
  const ownedOrgIds = mine.filter((m) => m.organizationId && m.role === 'owner').map((m) => m.organizationId!);
  const projectIds = mine.filter((m) => m.projectId).map((m) => m.projectId!);
  if (!isAdmin && ownedOrgIds.length === 0 && projectIds.length === 0) return [];
  const rows = await db
    .select({
      id: projects.id,
      slug: projects.slug,
      name: projects.name,
      organizationId: projects.organizationId,
      organizationSlug: organizations.slug,
      organizationName: organizations.name,
      phase: projects.phase,
    })
    .from(projects)
    .innerJoin(organizations, eq(organizations.id, projects.organizationId))
    .where(
      isAdmin
        ? undefined
        : or(
            ownedOrgIds.length ? inArray(projects.organizationId, ownedOrgIds) : sql`false`,
            projectIds.length ? inArray(projects.id, projectIds) : sql`false`,
          ),
    )
    .orderBy(asc(organizations.slug), asc(projects.slug));
  return rows.map((p) => {
    let role: ProjectRole | null = isAdmin ? 'owner' : null;
    for (const m of mine) {
      if (m.projectId === p.id) role = maxRole(role, m.role as ProjectRole);
      else if (m.organizationId === p.organizationId) role = maxRole(role, projectRoleFromOrganization(m.role));
    }
    // Whether the user may open the organization's page (a member of only the project may not).
    const organizationVisible = isAdmin || hasPlatformRole(user, 'operator') || orgIds.includes(p.organizationId);
    return { ...p, phase: p.phase as ProjectPhase, role: role!, organizationVisible };
  });
}

/** Where a membership applies: an organization or a project. */
type MembershipScope = { organizationId: string } | { projectId: string };

/** A user's membership row on `input`'s scope, as a filter; the scope alone, and its project for the audit log. */
function membershipOf(input: { userId: string } & MembershipScope) {
  if ('organizationId' in input) {
    return {
      scope: { organizationId: input.organizationId },
      where: and(eq(memberships.userId, input.userId), eq(memberships.organizationId, input.organizationId)),
      projectId: null,
    };
  }
  return {
    scope: { projectId: input.projectId },
    where: and(eq(memberships.userId, input.userId), eq(memberships.projectId, input.projectId)),
    projectId: input.projectId,
  };
}

/** Grants `role` on an organization or a project (upsert). */
export async function addMembership(db: DbOrTx, input: { userId: string; role: MemberRole } & MembershipScope, actor: Actor) {
  const { scope, where, projectId } = membershipOf(input);
  const [existing] = await db.select({ id: memberships.id }).from(memberships).where(where);
  if (existing) {
    await db.update(memberships).set({ role: input.role }).where(eq(memberships.id, existing.id));
  } else {
    await db.insert(memberships).values({ userId: input.userId, role: input.role, ...scope });
  }
  await recordEvent(db, {
    actor,
    projectId,
    action: 'membership.set',
    objectType: 'user',
    objectId: input.userId,
    after: { role: input.role, ...scope },
  });
}

/**
 * Removes a user's role on an organization or a project; NotFound when they hold none there. The
 * tokens they created for the projects concerned act from then on with what rights they keep
 * (server/tenancy/sql/api_token_role.sql): none, unless another membership still grants some.
 */
export async function removeMembership(db: DbOrTx, input: { userId: string } & MembershipScope, actor: Actor) {
  const { scope, where, projectId } = membershipOf(input);
  const [removed] = await db.delete(memberships).where(where).returning({ role: memberships.role });
  if (!removed) throw new DomainError('NotFound', 'the user has no role there', 'user');
  await recordEvent(db, {
    actor,
    projectId,
    action: 'membership.remove',
    objectType: 'user',
    objectId: input.userId,
    before: { role: removed.role, ...scope },
  });
}

/**
 * Every project (operator view), with its phase and, while deleting, how many objects wait and on
 * what; filtered by slug or organization, paginated in the database.
 */
export async function listAllProjects(db: DbOrTx, input: { search?: string; phase?: ProjectPhase; limit: number; offset: number }) {
  const filters = [sql`true`];
  if (input.search) filters.push(sql`(p.slug ilike ${'%' + input.search + '%'} or o.slug ilike ${'%' + input.search + '%'})`);
  if (input.phase) filters.push(sql`p.phase = ${input.phase}`);
  const where = sql.join(filters, sql` and `);
  const items = await query(
    db,
    sql`
    select p.id, p.slug, p.name, o.slug as "organizationSlug", p.phase, p.created_at as "createdAt",
           p.deletion_requested_at as "deletionRequestedAt", p.deletion_requested_by as "deletionRequestedBy",
           coalesce((select json_object_agg(waiting_on, n) from (select waiting_on, count(*)::int as n from project_deletion_blockers b
                     where b.project_id = p.id group by 1) w), '{}'::json) as "waitingOn"
    from projects p join organizations o on o.id = p.organization_id
    where ${where}
    order by p.phase <> 'Deleting', o.slug, p.slug limit ${input.limit} offset ${input.offset}`,
    z.object({
      id: z.string(),
      slug: z.string(),
      name: z.string(),
      organizationSlug: z.string(),
      phase: z.enum(['Active', 'Deleting']) satisfies z.ZodType<ProjectPhase>,
      createdAt: timestampColumn,
      deletionRequestedAt: timestampColumn.nullable(),
      deletionRequestedBy: z.string().nullable(),
      waitingOn: z.record(z.string(), z.number()),
    }),
  );
  const [{ total }] = await query(
    db,
    sql`select count(*)::int as total from projects p join organizations o on o.id = p.organization_id where ${where}`,
    z.object({ total: z.number() }),
  );
  return { items, total };
}
