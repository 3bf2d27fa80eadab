import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, DbOrTx } from '@/db/client';
import { query } from '@/db/query';
import { invitations, memberRole, users } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, invalid } from '@/server/errors';
import type { Mailer } from '@/server/mail/smtp';
import { logError } from '@/server/observability/log';
import { checkRoleForScope, grantRole, setMemberRoleByEmail, type MemberScope } from './members';
import type { MemberRole, SessionUser } from './roles';
import { createUser, emailPattern, findUserByEmail, markEmailVerified } from './users';

/**
 * Who may accept an invitation. The inviter is shown a link (`inv_…`) to hand over as they like,
 * so holding it proves nothing about the invited address: it is accepted only by a signed-in user
 * whose e-mail is the invited one and already verified (by an administrator, the seed, the OIDC
 * provider, or an earlier mailed link). When mail is configured, a second link (`inm_…`) goes to
 * the invited address only; whoever follows it controls the mailbox, so it may also create a
 * password account (its address recorded as verified by `invitation-mail`) or verify an existing
 * account's address. The two links are two secrets of one invitation: either uses it up.
 */

/** How long an invitation link works. */
export const INVITATION_TTL_HOURS = 7 * 24;
const LINK_PREFIX = 'inv_';
const MAIL_LINK_PREFIX = 'inm_';

/** Mail of invitations: the mailer and the console's public URL, which the mailed link starts with. */
export interface InvitationMail {
  mailer: Mailer;
  consoleUrl: string;
}

/** Whether the invitation went out by mail: `sent`, `failed` (the SMTP server did not take it), `off` (mail is not configured). */
export type MailOutcome = 'sent' | 'failed' | 'off';

const hashOf = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** The console path that accepts an invitation (the secret is its last segment). */
export const invitationPath = (secret: string) => `/invite/${secret}`;

/**
 * Invites an e-mail address to an organization or project with a role. Returns the inviter's
 * link's secret exactly once (only its hash is stored); with `mail`, a second link is mailed to
 * the address after the invitation commits (`mail` in the answer says whether the SMTP server took
 * it). Someone who is already a member is not invited again (Conflict); an earlier pending
 * invitation of the same address to the same place is revoked, so one invitation at a time works.
 */
export async function createInvitation(
  db: Db,
  input: { scope: MemberScope; email: string; role: MemberRole; invitedBy: string | null },
  actor: Actor,
  mail: InvitationMail | null = null,
) {
  const email = input.email.trim().toLowerCase();
  if (!emailPattern.test(email) || email.length > 254) throw invalid('email', 'must be an e-mail address');
  checkRoleForScope(input.scope, input.role);
  const secret = LINK_PREFIX + randomBytes(32).toString('base64url');
  const mailSecret = mail ? MAIL_LINK_PREFIX + randomBytes(32).toString('base64url') : null;
  const { scope } = input;
  const created = await db.transaction(async (tx) => {
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
        mailTokenHash: mailSecret ? hashOf(mailSecret) : null,
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
      after: { email, role: input.role, ...scope, expiresAt: row.expiresAt, mailed: Boolean(mailSecret) },
    });
    const [target] = await query(
      tx,
      sql`
      select coalesce(p.name, o.name) as name, inviter.email as inviter
        from (select 1) one
        left join organizations o on o.id = ${'organizationId' in scope ? scope.organizationId : null}::uuid
        left join projects p on p.id = ${'projectId' in scope ? scope.projectId : null}::uuid
        left join users inviter on inviter.id = ${input.invitedBy}::uuid`,
      mailTarget,
    );
    return { ...row, target };
  });
  const { target, ...row } = created;
  const mailed: MailOutcome = mail && mailSecret ? await mailInvitation(db, mail, { ...row, mailSecret, ...target, scope }) : 'off';
  return { ...row, secret, path: invitationPath(secret), mail: mailed };
}

const mailTarget = z.object({ name: z.string().nullable(), inviter: z.string().nullable() });

/**
 * Mails the invitation's second link to the invited address, after the invitation is committed
 * (a mail cannot be taken back, so it never goes out for an invitation that did not come to be).
 * A failure is logged and reported as `failed`: the invitation stays, inviting again sends anew.
 */
async function mailInvitation(
  db: Db,
  mail: InvitationMail,
  inv: { id: string; email: string; role: MemberRole; expiresAt: Date; mailSecret: string; name: string | null; inviter: string | null; scope: MemberScope },
): Promise<MailOutcome> {
  const link = `${mail.consoleUrl}${invitationPath(inv.mailSecret)}`;
  const where = `${'projectId' in inv.scope ? 'project' : 'organization'} ${inv.name ?? ''}`.trim();
  try {
    await mail.mailer.send({
      to: inv.email,
      subject: `Invitation to ${where} on Meridian`,
      text: [
        `${inv.inviter ?? 'Someone'} invited ${inv.email} to ${where} on Meridian as ${inv.role}.`,
        '',
        `To accept, open this link (it works once, until ${inv.expiresAt.toISOString()}):`,
        '',
        link,
        '',
        'If you did not expect this invitation, ignore this mail.',
      ].join('\n'),
    });
  } catch (e) {
    logError('mail', e);
    return 'failed';
  }
  await db
    .update(invitations)
    .set({ mailedAt: sql`now()` })
    .where(eq(invitations.id, inv.id));
  return 'sent';
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

const invitationRow = z.object({
  id: z.string(),
  email: z.string(),
  role: z.enum(memberRole.enumValues),
  organizationId: z.string().nullable(),
  projectId: z.string().nullable(),
  acceptedAt: z.coerce.date().nullable(),
  revokedAt: z.coerce.date().nullable(),
  expired: z.boolean(),
  organizationSlug: z.string().nullable(),
  projectSlug: z.string().nullable(),
  targetName: z.string(),
});
/** An invitation as its link finds it; `viaMail`: the link is the mailed one (it proves the mailbox). */
type InvitationRow = z.infer<typeof invitationRow> & { viaMail: boolean };

async function invitationBySecret(db: DbOrTx, secret: string): Promise<InvitationRow | undefined> {
  const viaMail = secret.startsWith(MAIL_LINK_PREFIX);
  if ((!viaMail && !secret.startsWith(LINK_PREFIX)) || secret.length > 100) return undefined;
  const [row] = await query(
    db,
    sql`
    select i.id, i.email, i.role, i.organization_id as "organizationId", i.project_id as "projectId",
           i.accepted_at as "acceptedAt", i.revoked_at as "revokedAt", i.expires_at <= now() as expired,
           coalesce(o.slug, po.slug) as "organizationSlug", p.slug as "projectSlug", coalesce(p.name, o.name) as "targetName"
      from invitations i
      left join organizations o on o.id = i.organization_id
      left join projects p on p.id = i.project_id
      left join organizations po on po.id = p.organization_id
     where ${viaMail ? sql`i.mail_token_hash` : sql`i.token_hash`} = ${hashOf(secret)}`,
    invitationRow,
  );
  return row && { ...row, viaMail };
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
 * it): where to, with which role, for which e-mail, whether that e-mail already has an account
 * (then they sign in to accept), and whether this link may create one (`viaMail`: the mailed
 * link; the inviter's link never does). LinkUnusable when it was used, revoked or has expired.
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
    viaMail: row.viaMail,
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
 * they get its role (or keep a higher one they hold) at once. Through the inviter's link, the
 * user's address must already be verified (Forbidden otherwise: an account made from such a link
 * may belong to whoever chose its password); through the mailed link, following it verifies the
 * address (`invitation-mail`).
 */
export async function acceptInvitation(db: Db, secret: string, user: SessionUser) {
  return db.transaction(async (tx) => {
    const row = await consume(tx, secret, user.id);
    if (row.email !== user.email.toLowerCase()) {
      throw new DomainError('Forbidden', `this invitation is for ${row.email}; sign in as that user to accept it`, 'token');
    }
    const actor: Actor = { type: 'user', id: user.id, label: user.email };
    const [account] = await tx.select({ verifiedBy: users.emailVerifiedBy }).from(users).where(eq(users.id, user.id));
    if (!account?.verifiedBy) {
      if (!row.viaMail) throw new DomainError('Forbidden', unverifiedMessage(row.email), 'token');
      await markEmailVerified(tx, user.id, 'invitation-mail', actor);
    }
    return join(tx, row, user.id, actor);
  });
}

const unverifiedMessage = (email: string) =>
  `the address ${email} of this account is not verified: accept through the link mailed to it, sign in with single sign-on as ${email}, or ask an administrator to verify it`;

/**
 * Someone without an account accepts an invitation through the link mailed to the invited address
 * (Forbidden through the inviter's link: that one proves nothing about the address): the user is
 * created with the invitation's e-mail, recorded as verified by `invitation-mail`, and the chosen
 * password, and gets its role, all in one transaction (nothing is created when any step fails).
 * Conflict when the e-mail has an account meanwhile: sign in and accept.
 */
export async function acceptInvitationAsNewUser(db: Db, secret: string, input: { name: string; password: string }) {
  if (input.password.length < 8) throw invalid('password', 'must be at least 8 characters');
  if (input.password.length > 1024) throw invalid('password', 'must be at most 1024 characters');
  const name = input.name.trim();
  if (!name || name.length > 100) throw invalid('name', 'must be 1-100 characters');
  return db.transaction(async (tx) => {
    const row = await consume(tx, secret, null);
    if (!row.viaMail) {
      throw new DomainError(
        'Forbidden',
        `this link does not create accounts: use the link mailed to ${row.email}, or sign in as ${row.email} (single sign-on, or an account an administrator made) and accept`,
        'token',
      );
    }
    if (await findUserByEmail(tx, row.email)) {
      throw new DomainError('Conflict', `${row.email} already has an account: sign in to accept the invitation`, 'token');
    }
    const actor: Actor = { type: 'system', label: `invitation:${row.email}` };
    const user = await createUser(
      tx,
      { email: row.email, name, password: input.password, createdVia: 'invitation', emailVerifiedBy: 'invitation-mail' },
      actor,
    );
    await tx.update(invitations).set({ acceptedBy: user.id }).where(eq(invitations.id, row.id));
    const joined = await join(tx, row, user.id, { type: 'user', id: user.id, label: user.email });
    return { ...joined, email: user.email, userId: user.id };
  });
}

/**
 * "Add this e-mail as a member" (REST PUT members/{email}, tRPC `members.add`, the CLI's `member
 * add`): a current member gets the role (`exact`, or the higher of theirs and it); anyone else,
 * with an account or without, is invited (`createInvitation`, mailed with `mail`) and joins only by
 * accepting — an owner naming an address never gives its account access by itself, since the
 * account may not belong to the address's holder.
 */
export async function addMemberByEmail(
  db: Db,
  scope: MemberScope,
  email: string,
  role: MemberRole,
  actor: Actor,
  options: { exact?: boolean; invitedBy: string | null; mail: InvitationMail | null },
) {
  try {
    const member = await setMemberRoleByEmail(db, scope, email, role, actor, { exact: options.exact });
    return { outcome: 'member' as const, ...member };
  } catch (e) {
    if (!(e instanceof DomainError && e.code === 'NotFound' && e.field === 'email')) throw e;
  }
  const invitation = await createInvitation(db, { scope, email, role, invitedBy: options.invitedBy }, actor, options.mail);
  return { outcome: 'invited' as const, invitation };
}
