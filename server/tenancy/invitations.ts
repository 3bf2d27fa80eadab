import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { invitations, organizations, projects, users } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, invalid } from '@/server/errors';
import { checkRoleForScope, grantRole, type MemberScope } from './members';
import type { MemberRole, SessionUser } from './roles';
import { createUser, emailPattern, findUserByEmail } from './users';

/** How long an invitation link works. */
export const INVITATION_TTL_HOURS = 7 * 24;
const LINK_PREFIX = 'inv_';

const hashOf = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** The console path that accepts an invitation (the secret is its last segment). */
export const invitationPath = (secret: string) => `/invite/${secret}`;

/**
 * Invites an e-mail address to an organization or project with a role. Returns the link's secret
 * exactly once (only its hash is stored). Someone who is already a member is not invited again
 * (Conflict); an earlier pending invitation of the same address to the same place is revoked, so
 * one link at a time works.
 */
export async function createInvitation(db: Db, input: { scope: MemberScope; email: string; role: MemberRole; invitedBy: string | null }, actor: Actor) {
  const email = input.email.trim().toLowerCase();
  if (!emailPattern.test(email) || email.length > 254) throw invalid('email', 'must be an e-mail address');
  checkRoleForScope(input.scope, input.role);
  const secret = LINK_PREFIX + randomBytes(32).toString('base64url');
  const { scope } = input;
  return db.transaction(async (tx) => {
    const member = (await tx.execute(sql`
      select 1 from memberships m join users u on u.id = m.user_id
       where u.email = ${email} and ${'organizationId' in scope ? sql`m.organization_id = ${scope.organizationId}` : sql`m.project_id = ${scope.projectId}`}`)) as unknown[];
    if (member.length > 0) throw new DomainError('Conflict', `${email} is already a member`, 'email');
    await tx
      .update(invitations)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(invitations.email, email), pendingIn(scope)));
    const [row] = await tx
      .insert(invitations)
      .values({
        ...scope,
        email,
        role: input.role,
        tokenHash: hashOf(secret),
        prefix: secret.slice(0, 10),
        invitedBy: input.invitedBy,
        expiresAt: sql`now() + ${sql.raw(`interval '${INVITATION_TTL_HOURS} hours'`)}`,
      })
      .returning({ id: invitations.id, email: invitations.email, role: invitations.role, expiresAt: invitations.expiresAt });
    await recordEvent(tx, {
      actor,
      projectId: 'projectId' in scope ? scope.projectId : null,
      action: 'invitation.create',
      objectType: 'invitation',
      objectId: row.id,
      objectName: email,
      after: { email, role: input.role, ...scope, expiresAt: row.expiresAt },
    });
    return { ...row, secret, path: invitationPath(secret) };
  });
}

const pendingIn = (scope: MemberScope) =>
  and(
    'organizationId' in scope ? eq(invitations.organizationId, scope.organizationId) : eq(invitations.projectId, scope.projectId),
    isNull(invitations.acceptedAt),
    isNull(invitations.revokedAt),
    sql`${invitations.expiresAt} > now()`,
  );

/** The invitations of a scope that can still be accepted, newest first (never their secrets). */
export async function listInvitations(db: DbOrTx, scope: MemberScope) {
  return db
    .select({
      id: invitations.id,
      email: invitations.email,
      role: invitations.role,
      prefix: invitations.prefix,
      createdAt: invitations.createdAt,
      expiresAt: invitations.expiresAt,
      invitedBy: users.email,
    })
    .from(invitations)
    .leftJoin(users, eq(users.id, invitations.invitedBy))
    .where(pendingIn(scope))
    .orderBy(desc(invitations.createdAt));
}

/** Revokes a pending invitation of the scope; NotFound for any other (another scope's, accepted, expired). */
export async function revokeInvitation(db: DbOrTx, scope: MemberScope, id: string, actor: Actor) {
  const [row] = await db
    .update(invitations)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(invitations.id, id), pendingIn(scope)))
    .returning({ id: invitations.id, email: invitations.email });
  if (!row) throw new DomainError('NotFound', 'no pending invitation with this id', 'id');
  await recordEvent(db, {
    actor,
    projectId: 'projectId' in scope ? scope.projectId : null,
    action: 'invitation.revoke',
    objectType: 'invitation',
    objectId: row.id,
    objectName: row.email,
  });
  return row;
}

interface InvitationRow {
  id: string;
  email: string;
  role: MemberRole;
  organizationId: string | null;
  projectId: string | null;
  acceptedAt: Date | null;
  revokedAt: Date | null;
  expired: boolean;
  organizationSlug: string | null;
  projectSlug: string | null;
  targetName: string;
}

async function invitationBySecret(db: DbOrTx, secret: string): Promise<InvitationRow | undefined> {
  if (!secret.startsWith(LINK_PREFIX) || secret.length > 100) return undefined;
  const [row] = (await db.execute(sql`
    select i.id, i.email, i.role, i.organization_id as "organizationId", i.project_id as "projectId",
           i.accepted_at as "acceptedAt", i.revoked_at as "revokedAt", i.expires_at <= now() as expired,
           coalesce(o.slug, po.slug) as "organizationSlug", p.slug as "projectSlug", coalesce(p.name, o.name) as "targetName"
      from invitations i
      left join organizations o on o.id = i.organization_id
      left join projects p on p.id = i.project_id
      left join organizations po on po.id = p.organization_id
     where i.token_hash = ${hashOf(secret)}`)) as unknown as InvitationRow[];
  return row;
}

const unusable = (row: InvitationRow | undefined): string | null =>
  !row
    ? 'this invitation link is not valid'
    : row.acceptedAt
      ? 'this invitation was already used'
      : row.revokedAt
        ? 'this invitation was revoked'
        : row.expired
          ? 'this invitation has expired; ask for a new one'
          : null;

/**
 * What an invitation link offers, for the page that accepts it (anyone holding the link may read
 * it): where to, with which role, for which e-mail, and whether that e-mail already has an account
 * (then they sign in to accept; otherwise they choose a password). LinkUnusable when it was used,
 * revoked or has expired.
 */
export async function previewInvitation(db: DbOrTx, secret: string) {
  const row = await invitationBySecret(db, secret);
  const why = unusable(row);
  if (why || !row) throw new DomainError('LinkUnusable', why!, 'token');
  const existing = await findUserByEmail(db, row.email);
  return {
    email: row.email,
    role: row.role,
    kind: row.projectId ? ('project' as const) : ('organization' as const),
    organization: row.organizationSlug,
    project: row.projectSlug,
    name: row.targetName,
    userExists: Boolean(existing),
  };
}

/**
 * Uses the invitation, once: a conditional update, so of two acceptances of one link exactly one
 * succeeds; the other (and a later one) gets LinkUnusable, as does a revoked or expired link.
 */
async function consume(tx: DbOrTx, secret: string, acceptedBy: string | null): Promise<InvitationRow> {
  const row = await invitationBySecret(tx, secret);
  const why = unusable(row);
  if (why || !row) throw new DomainError('LinkUnusable', why!, 'token');
  const used = await tx
    .update(invitations)
    .set({ acceptedAt: sql`now()`, acceptedBy })
    .where(and(eq(invitations.id, row.id), isNull(invitations.acceptedAt), isNull(invitations.revokedAt), sql`${invitations.expiresAt} > now()`))
    .returning({ id: invitations.id });
  if (used.length === 0) throw new DomainError('LinkUnusable', 'this invitation was already used', 'token');
  return row;
}

async function join(tx: DbOrTx, row: InvitationRow, userId: string, actor: Actor) {
  const scope: MemberScope = row.projectId ? { projectId: row.projectId } : { organizationId: row.organizationId! };
  await grantRole(tx, scope, userId, row.role, actor);
  await recordEvent(tx, {
    actor,
    projectId: row.projectId,
    action: 'invitation.accept',
    objectType: 'invitation',
    objectId: row.id,
    objectName: row.email,
    after: { role: row.role },
  });
  return { organization: row.organizationSlug, project: row.projectSlug, role: row.role };
}

/**
 * A signed-in user accepts an invitation addressed to their e-mail (Forbidden for anyone else's):
 * they get its role (or keep a higher one they hold) at once.
 */
export async function acceptInvitation(db: Db, secret: string, user: SessionUser) {
  return db.transaction(async (tx) => {
    const row = await consume(tx, secret, user.id);
    if (row.email !== user.email.toLowerCase()) {
      throw new DomainError('Forbidden', `this invitation is for ${row.email}; sign in as that user to accept it`, 'token');
    }
    return join(tx, row, user.id, { type: 'user', id: user.id, label: user.email });
  });
}

/**
 * Someone without an account accepts an invitation: the user is created with the invitation's
 * e-mail and the chosen password, and gets its role, all in one transaction (nothing is created
 * when any step fails). Conflict when the e-mail has an account meanwhile: sign in and accept.
 */
export async function acceptInvitationAsNewUser(db: Db, secret: string, input: { name: string; password: string }) {
  if (input.password.length < 8) throw invalid('password', 'must be at least 8 characters');
  if (input.password.length > 1024) throw invalid('password', 'must be at most 1024 characters');
  const name = input.name.trim();
  if (!name || name.length > 100) throw invalid('name', 'must be 1-100 characters');
  return db.transaction(async (tx) => {
    const row = await consume(tx, secret, null);
    if (await findUserByEmail(tx, row.email)) {
      throw new DomainError('Conflict', `${row.email} already has an account: sign in to accept the invitation`, 'token');
    }
    const actor: Actor = { type: 'system', label: `invitation:${row.email}` };
    const user = await createUser(tx, { email: row.email, name, password: input.password }, actor);
    await tx.update(invitations).set({ acceptedBy: user.id }).where(eq(invitations.id, row.id));
    const joined = await join(tx, row, user.id, { type: 'user', id: user.id, label: user.email });
    return { ...joined, email: user.email, userId: user.id };
  });
}

/** Organization and project slugs for a scope, for messages and links. */
export async function scopeSlugs(db: DbOrTx, scope: MemberScope) {
  if ('organizationId' in scope) {
    const [o] = await db.select({ slug: organizations.slug }).from(organizations).where(eq(organizations.id, scope.organizationId));
    return { organization: o?.slug ?? null, project: null };
  }
  const [p] = await db.select({ slug: projects.slug }).from(projects).where(eq(projects.id, scope.projectId));
  return { organization: null, project: p?.slug ?? null };
}
