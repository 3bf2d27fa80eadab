import { and, asc, eq, ne, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query } from '@/db/query';
import { memberships, organizations, projects, users } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, invalid } from '@/server/errors';
import { maxRole, organizationRoles, projectRoles, type MemberRole } from './roles';
import { findUserByEmail } from './users';

/** Where a membership applies: an organization (whose owners own all its projects) or one project. */
export type MemberScope = { organizationId: string } | { projectId: string };

const scopeFilter = (scope: MemberScope) =>
  'organizationId' in scope ? eq(memberships.organizationId, scope.organizationId) : eq(memberships.projectId, scope.projectId);

/** The project id the audit log files a membership change under (none for an organization). */
const eventProject = (scope: MemberScope) => ('projectId' in scope ? scope.projectId : null);
const scopeLabel = (scope: MemberScope) => ('organizationId' in scope ? 'organization' : 'project');

/**
 * Refuses (ValidationFailed on `role`) a role the scope does not hold: organizations have owners
 * and members, projects owners, editors and viewers. The memberships_role_scope check constraint
 * says the same; this words it.
 */
export function checkRoleForScope(scope: MemberScope, role: MemberRole): void {
  if ('organizationId' in scope) {
    if (!(organizationRoles as readonly string[]).includes(role)) throw invalid('role', `an organization role is one of ${organizationRoles.join(', ')}`);
  } else if (!(projectRoles as readonly string[]).includes(role)) {
    throw invalid('role', `a project role is one of ${projectRoles.join(', ')}`);
  }
}

/**
 * Serializes membership decisions on one scope: locks its organization or project row (NO KEY
 * UPDATE, so inserts that reference the row are not held up). Every change that could leave the
 * scope without an owner takes this lock first and then reads the owners afresh, so two owners
 * demoting each other at once are decided one after the other, and the second sees the first.
 */
async function lockScope(tx: DbOrTx, scope: MemberScope): Promise<void> {
  const rows = await query(
    tx,
    'organizationId' in scope
      ? sql`select id from organizations where id = ${scope.organizationId} for no key update`
      : sql`select id from projects where id = ${scope.projectId} for no key update`,
    z.object({ id: z.string() }),
  );
  if (rows.length === 0) throw new DomainError('NotFound', `${scopeLabel(scope)} not found`, scopeLabel(scope));
}

/** The members of an organization or project, with their role, by e-mail. */
export async function listMembers(db: DbOrTx, scope: MemberScope) {
  return db
    .select({
      userId: users.id,
      email: users.email,
      name: users.name,
      role: memberships.role,
      since: memberships.createdAt,
      disabled: sql<boolean>`${users.disabledAt} is not null`,
    })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(scopeFilter(scope))
    .orderBy(asc(users.email));
}

/**
 * Who has access to a project through its organization (its owners own every project of it), with
 * the organization's slug: the project's Members page lists them beside its own members, so the
 * page never looks empty while people can act on the project.
 */
export async function listOrganizationAccess(db: DbOrTx, projectId: string) {
  return db
    .select({
      userId: users.id,
      email: users.email,
      name: users.name,
      organization: organizations.slug,
      since: memberships.createdAt,
      disabled: sql<boolean>`${users.disabledAt} is not null`,
    })
    .from(projects)
    .innerJoin(organizations, eq(organizations.id, projects.organizationId))
    .innerJoin(memberships, and(eq(memberships.organizationId, projects.organizationId), eq(memberships.role, 'owner')))
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(projects.id, projectId))
    .orderBy(asc(users.email));
}

/**
 * The role `userId` holds on the scope, locked with the scope: NotFound when none. Callers hold
 * the scope lock, so the answer stays true until they commit.
 */
async function currentRole(tx: DbOrTx, scope: MemberScope, userId: string): Promise<MemberRole> {
  const [row] = await tx
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(scopeFilter(scope), eq(memberships.userId, userId)));
  if (!row) throw new DomainError('NotFound', `the user is not a member of this ${scopeLabel(scope)}`, 'user');
  return row.role;
}

/** Refuses (LastOwner) when `userId` is an owner of the scope and no other owner would remain. */
async function keepAnOwner(tx: DbOrTx, scope: MemberScope, userId: string, what: string): Promise<void> {
  const [others] = (await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(memberships)
    .where(and(scopeFilter(scope), eq(memberships.role, 'owner'), ne(memberships.userId, userId)))) as { n: number }[];
  if (others.n === 0) {
    throw new DomainError('LastOwner', `the last owner of this ${scopeLabel(scope)} cannot be ${what}; make another member owner first`, 'user');
  }
}

/**
 * Changes a member's role. Demoting the last owner is refused (LastOwner), whoever asks and
 * however many owners ask at once: the decision runs under the scope lock (`lockScope`).
 */
export async function setMemberRole(db: DbOrTx, scope: MemberScope, userId: string, role: MemberRole, actor: Actor) {
  checkRoleForScope(scope, role);
  return db.transaction(async (tx) => {
    await lockScope(tx, scope);
    const before = await currentRole(tx, scope, userId);
    if (before === role) return { userId, role, changed: false };
    if (before === 'owner') await keepAnOwner(tx, scope, userId, 'demoted');
    await tx
      .update(memberships)
      .set({ role })
      .where(and(scopeFilter(scope), eq(memberships.userId, userId)));
    await recordEvent(tx, {
      actor,
      projectId: eventProject(scope),
      action: 'membership.role',
      objectType: 'user',
      objectId: userId,
      objectName: await emailOf(tx, userId),
      before: { role: before, ...scope },
      after: { role, ...scope },
    });
    return { userId, role, changed: true };
  });
}

/**
 * Removes a member (or, with `leaving`, a member leaving of their own accord). The last owner
 * cannot be removed nor leave (LastOwner). The member's sessions and the tokens they created lose
 * the rights this membership gave at their next request (rights are read on every request).
 */
export async function removeMember(db: DbOrTx, scope: MemberScope, userId: string, actor: Actor, options: { leaving?: boolean } = {}) {
  return db.transaction(async (tx) => {
    await lockScope(tx, scope);
    const role = await currentRole(tx, scope, userId);
    if (role === 'owner') await keepAnOwner(tx, scope, userId, options.leaving ? 'the one to leave' : 'removed');
    await tx.delete(memberships).where(and(scopeFilter(scope), eq(memberships.userId, userId)));
    await recordEvent(tx, {
      actor,
      projectId: eventProject(scope),
      action: options.leaving ? 'membership.leave' : 'membership.remove',
      objectType: 'user',
      objectId: userId,
      objectName: await emailOf(tx, userId),
      before: { role, ...scope },
    });
    return { userId, role };
  });
}

/**
 * Changes the role of the member with this e-mail on the scope: they keep the higher of their role
 * and the new one unless `exact` (REST PUT, the CLI's `member role`). Someone who is not a member
 * is NotFound on `email` — decided under the scope lock, so a member removed meanwhile is not
 * silently given the role back: people join only by accepting an invitation
 * (server/tenancy/invitations.ts `addMemberByEmail` invites them instead). Demoting the last owner
 * with `exact` is refused as by `setMemberRole`.
 */
export async function setMemberRoleByEmail(db: Db, scope: MemberScope, email: string, role: MemberRole, actor: Actor, options: { exact?: boolean } = {}) {
  checkRoleForScope(scope, role);
  const user = await findUserByEmail(db, email);
  if (!user) throw notAMember(scope, email);
  return grantRole(db, scope, user.id, role, actor, { ...options, membersOnly: email });
}

const notAMember = (scope: MemberScope, email: string) =>
  new DomainError('NotFound', `${email.trim().toLowerCase()} is not a member of this ${scopeLabel(scope)}; invite them`, 'email');

/**
 * Grants `role` to `userId` on the scope under the scope lock (see `setMemberRoleByEmail`); with
 * `membersOnly` (the e-mail, for the message), only to someone who already is a member.
 */
export async function grantRole(
  db: DbOrTx,
  scope: MemberScope,
  userId: string,
  role: MemberRole,
  actor: Actor,
  options: { exact?: boolean; membersOnly?: string } = {},
) {
  checkRoleForScope(scope, role);
  return db.transaction(async (tx) => {
    await lockScope(tx, scope);
    const [existing] = await tx
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(scopeFilter(scope), eq(memberships.userId, userId)));
    if (!existing && options.membersOnly !== undefined) throw notAMember(scope, options.membersOnly);
    const next = existing && !options.exact ? maxRole(existing.role, role)! : role;
    if (existing?.role === next) return { userId, role: next, changed: false };
    if (existing?.role === 'owner') await keepAnOwner(tx, scope, userId, 'demoted');
    if (existing) {
      await tx
        .update(memberships)
        .set({ role: next })
        .where(and(scopeFilter(scope), eq(memberships.userId, userId)));
    } else {
      await tx.insert(memberships).values({ userId, role: next, ...scope });
    }
    await recordEvent(tx, {
      actor,
      projectId: eventProject(scope),
      action: existing ? 'membership.role' : 'membership.add',
      objectType: 'user',
      objectId: userId,
      objectName: await emailOf(tx, userId),
      before: existing ? { role: existing.role, ...scope } : null,
      after: { role: next, ...scope },
    });
    return { userId, role: next, changed: true };
  });
}

async function emailOf(db: DbOrTx, userId: string): Promise<string> {
  const [u] = await db.select({ email: users.email }).from(users).where(eq(users.id, userId));
  if (!u) throw new DomainError('NotFound', `user ${userId} not found`, 'user');
  return u.email;
}
