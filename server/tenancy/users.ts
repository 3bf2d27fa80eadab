import { and, eq, isNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { query } from '@/db/query';
import { emailVerifications, userOrigins, users, type EmailVerification, type UserOrigin } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, invalid, pgCode } from '@/server/errors';
import { hashPassword, verifyPassword } from './password';
import { platformRoles as allPlatformRoles, type PlatformRole, type SessionUser } from './roles';
import { revokeUserSessions, SESSION_MAX_AGE_SECONDS } from './sessions';

export const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Creates a user; e-mail is stored lower-cased and must be unique. `createdVia` says how the
 * account came to be and `emailVerifiedBy` who vouches for its address (null: nobody yet); every
 * caller states both, since an account whose address nobody verified may not accept invitations
 * nor be signed into through OIDC.
 */
export async function createUser(
  db: DbOrTx,
  input: {
    email: string;
    name: string;
    password?: string;
    platformRoles?: PlatformRole[];
    createdVia: UserOrigin;
    emailVerifiedBy: EmailVerification | null;
  },
  actor: Actor,
): Promise<SessionUser> {
  const email = input.email.trim().toLowerCase();
  if (!emailPattern.test(email)) throw invalid('email', 'must be an e-mail address');
  if (input.password !== undefined && input.password.length < 8) throw invalid('password', 'must be at least 8 characters');
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  try {
    const [user] = await db
      .insert(users)
      .values({
        email,
        name: input.name,
        passwordHash,
        platformRoles: input.platformRoles ?? [],
        createdVia: input.createdVia,
        emailVerifiedBy: input.emailVerifiedBy,
        emailVerifiedAt: input.emailVerifiedBy ? sql`now()` : null,
      })
      .returning({ id: users.id, email: users.email, name: users.name, platformRoles: users.platformRoles });
    await recordEvent(db, {
      actor,
      action: 'user.create',
      objectType: 'user',
      objectId: user.id,
      objectName: email,
      after: { email, platformRoles: user.platformRoles, createdVia: input.createdVia, emailVerifiedBy: input.emailVerifiedBy },
    });
    return user;
  } catch (e) {
    if (pgCode(e) === '23505') throw new DomainError('Conflict', `user "${email}" already exists`, 'email');
    throw e;
  }
}

export async function findUserByEmail(db: DbOrTx, email: string) {
  // Input that cannot be an e-mail address names no user (and text PostgreSQL cannot store never reaches it).
  // eslint-disable-next-line no-control-regex -- NUL is text PostgreSQL cannot store
  if (email.length > 320 || !emailPattern.test(email.trim().toLowerCase()) || /[\u0000\ud800-\udfff]/.test(email)) return undefined;
  const [user] = await db
    .select({
      id: users.id,
      email: users.email,
      name: users.name,
      platformRoles: users.platformRoles,
      passwordHash: users.passwordHash,
      disabledAt: users.disabledAt,
      createdVia: users.createdVia,
      emailVerifiedBy: users.emailVerifiedBy,
    })
    .from(users)
    .where(eq(users.email, email.trim().toLowerCase()));
  return user;
}

/**
 * Records that the user's e-mail address is theirs (`by` whom), unless it already was: the first
 * verification stays. Returns whether it changed anything.
 */
export async function markEmailVerified(db: DbOrTx, userId: string, by: EmailVerification, actor: Actor): Promise<boolean> {
  const [user] = await db
    .update(users)
    .set({ emailVerifiedAt: sql`now()`, emailVerifiedBy: by })
    .where(and(eq(users.id, userId), isNull(users.emailVerifiedAt)))
    .returning({ id: users.id, email: users.email });
  if (!user) return false;
  await recordEvent(db, { actor, action: 'user.verifyEmail', objectType: 'user', objectId: user.id, objectName: user.email, after: { emailVerifiedBy: by } });
  return true;
}

/** An administrator vouches for a user's address (NotFound when there is no such user). */
export async function verifyEmailByAdmin(db: DbOrTx, userId: string, actor: Actor) {
  const [user] = await db.select({ id: users.id, email: users.email }).from(users).where(eq(users.id, userId));
  if (!user) throw new DomainError('NotFound', `user ${userId} not found`, 'user');
  const changed = await markEmailVerified(db, userId, 'admin', actor);
  return { ...user, changed };
}

const unverifiedAccountRow = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  created_at: z.coerce.date(),
  has_password: z.boolean(),
  disabled: z.boolean(),
  memberships: z.number(),
  sessions: z.number(),
  invited_by: z.string().nullable(),
});

/**
 * The accounts made from an invitation link whose address nobody verified: the link went to the
 * inviter, so whoever chose the password may not hold the address (an "e-mail squatter"). For
 * administrators, with what each can reach and who sent the invitation it was made from. Such an
 * account can accept no invitation through the inviter's link and no OIDC sign-in lands in it; an
 * administrator deletes it, disables it, or vouches for its address.
 */
export async function listUnverifiedInvitationAccounts(db: DbOrTx) {
  const rows = await query(
    db,
    sql`
    select u.id, u.email, u.name, u.created_at, u.password_hash is not null as has_password, u.disabled_at is not null as disabled,
           (select count(*)::int from memberships m where m.user_id = u.id) as memberships,
           (select count(*)::int from sessions s
             where s.user_id = u.id and s.revoked_at is null and s.last_seen_at > now() - ${sql.raw(`interval '${SESSION_MAX_AGE_SECONDS} seconds'`)}) as sessions,
           (select iu.email from invitations i left join users iu on iu.id = i.invited_by
             where i.accepted_by = u.id order by i.accepted_at limit 1) as invited_by
      from users u
     where u.created_via = 'invitation' and u.email_verified_at is null
     order by u.created_at desc`,
    unverifiedAccountRow,
  );
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    name: r.name,
    createdAt: r.created_at,
    hasPassword: r.has_password,
    disabled: r.disabled,
    memberships: r.memberships,
    sessions: r.sessions,
    invitedBy: r.invited_by,
  }));
}

/** The user with this e-mail, or NotFound naming `field`. */
async function requireUserByEmail(db: DbOrTx, email: string, field = 'email') {
  const user = await findUserByEmail(db, email);
  if (!user) throw new DomainError('NotFound', `user "${email.trim().toLowerCase()}" not found`, field);
  return user;
}

/**
 * Sets a user's password and ends the user's sessions at once, except `keepSession` (the session
 * that changed its own password stays signed in). `currentPassword`, when given, must match
 * (a user changing their own password); an administrator resetting it passes none.
 */
export async function setPassword(
  db: DbOrTx,
  input: { userId: string; newPassword: string; currentPassword?: string; keepSession?: string },
  actor: Actor,
): Promise<void> {
  if (input.newPassword.length < 8) throw invalid('newPassword', 'must be at least 8 characters');
  if (input.newPassword.length > 1024) throw invalid('newPassword', 'must be at most 1024 characters');
  const [user] = await db.select({ email: users.email, passwordHash: users.passwordHash }).from(users).where(eq(users.id, input.userId));
  if (!user) throw new DomainError('NotFound', `user "${input.userId}" not found`, 'userId');
  if (input.currentPassword !== undefined && !(user.passwordHash && (await verifyPassword(input.currentPassword, user.passwordHash)))) {
    throw invalid('currentPassword', 'is not your current password');
  }
  await db
    .update(users)
    .set({ passwordHash: await hashPassword(input.newPassword) })
    .where(eq(users.id, input.userId));
  await recordEvent(db, { actor, action: 'user.setPassword', objectType: 'user', objectId: input.userId, objectName: user.email });
  await revokeUserSessions(db, input.userId, actor, { keep: input.keepSession, reason: 'password changed' });
}

/**
 * Disables (or enables again) a user. A disabled user cannot sign in, disabling ends the user's
 * sessions at once, and every token the user created stops working at its next use
 * (server/tenancy/sql/api_token_role.sql), as do their operator tokens; enabling the user again gives
 * those tokens back what the user's rights then allow.
 */
export async function setUserDisabled(db: DbOrTx, userId: string, disabled: boolean, actor: Actor) {
  const [user] = await db
    .update(users)
    .set({ disabledAt: disabled ? sql`coalesce(${users.disabledAt}, now())` : null })
    .where(eq(users.id, userId))
    .returning({ id: users.id, email: users.email });
  if (!user) throw new DomainError('NotFound', `user ${userId} not found`, 'user');
  await recordEvent(db, { actor, action: disabled ? 'user.disable' : 'user.enable', objectType: 'user', objectId: user.id, objectName: user.email });
  if (disabled) await revokeUserSessions(db, user.id, actor, { reason: 'user disabled' });
  return user;
}

/** `setUserDisabled` for the user with this e-mail (NotFound naming `email` when there is none). */
export async function setUserDisabledByEmail(db: DbOrTx, email: string, disabled: boolean, actor: Actor): Promise<SessionUser> {
  const user = await requireUserByEmail(db, email);
  await setUserDisabled(db, user.id, disabled, actor);
  return { id: user.id, email: user.email, name: user.name, platformRoles: user.platformRoles };
}

/**
 * Deletes a user with their memberships and operator tokens. The project tokens they created are
 * revoked in the same statement (a trigger on users: server/tenancy/sql/api_tokens_revoke_with_creator.sql), so none outlives them.
 */
export async function deleteUser(db: DbOrTx, userId: string, actor: Actor) {
  const [user] = await db.delete(users).where(eq(users.id, userId)).returning({ id: users.id, email: users.email });
  if (!user) throw new DomainError('NotFound', `user ${userId} not found`, 'user');
  await recordEvent(db, { actor, action: 'user.delete', objectType: 'user', objectId: user.id, objectName: user.email });
  return user;
}

/** Every user, for administrators, with how many live sessions each has. */
export async function listUsers(db: DbOrTx) {
  const rows = await query(
    db,
    sql`
    select u.id, u.email, u.name, u.platform_roles::text[] as platform_roles, u.disabled_at is not null as disabled,
           u.email_verified_by, u.created_via,
           (select count(*)::int from sessions s
             where s.user_id = u.id and s.revoked_at is null and s.last_seen_at > now() - ${sql.raw(`interval '${SESSION_MAX_AGE_SECONDS} seconds'`)}) as sessions
      from users u order by u.email`,
    userListRow,
  );
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    name: r.name,
    platformRoles: r.platform_roles,
    disabled: r.disabled,
    sessions: r.sessions,
    emailVerifiedBy: r.email_verified_by,
    createdVia: r.created_via,
  }));
}

const userListRow = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  platform_roles: z.array(z.enum(allPlatformRoles)),
  disabled: z.boolean(),
  email_verified_by: z.enum(emailVerifications).nullable(),
  created_via: z.enum(userOrigins),
  sessions: z.number(),
});

/**
 * Sets a user's platform roles (administrators). The last enabled admin cannot give up the admin
 * role, so the platform always keeps someone who can administer it. Takes effect at the user's
 * next request (roles are read with the session) and on their operator tokens at once.
 */
export async function setPlatformRoles(db: DbOrTx, userId: string, roles: PlatformRole[], actor: Actor) {
  const wanted = [...new Set(roles)].filter((r) => allPlatformRoles.includes(r)).sort();
  return db.transaction(async (tx) => {
    // One decision at a time about who holds admin: a transaction-scoped advisory lock.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('meridian:platform-admins'))`);
    const [user] = await tx.select({ id: users.id, email: users.email, platformRoles: users.platformRoles }).from(users).where(eq(users.id, userId));
    if (!user) throw new DomainError('NotFound', `user ${userId} not found`, 'user');
    if (user.platformRoles.includes('admin') && !wanted.includes('admin')) {
      const [others] = await query(
        tx,
        sql`select count(*)::int as n from users where id <> ${userId} and 'admin' = any(platform_roles) and disabled_at is null`,
        z.object({ n: z.number() }),
      );
      if (others.n === 0) throw new DomainError('LastOwner', 'the last admin cannot give up the admin role; make another user admin first', 'roles');
    }
    await tx.update(users).set({ platformRoles: wanted }).where(eq(users.id, userId));
    await recordEvent(tx, {
      actor,
      action: 'user.platformRoles',
      objectType: 'user',
      objectId: user.id,
      objectName: user.email,
      before: { platformRoles: user.platformRoles },
      after: { platformRoles: wanted },
    });
    return { id: user.id, email: user.email, platformRoles: wanted };
  });
}
