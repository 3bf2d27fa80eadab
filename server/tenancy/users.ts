import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { signInThrottle, users } from '@/db/schema';
import { recordEvent, systemActor, type Actor } from '@/server/audit/events';
import { DomainError, invalid, pgCode } from '@/server/errors';
import { dummyPasswordHash, hashPassword, verifyPassword } from '@/server/auth/password';
import type { PlatformRole, SessionUser } from './roles';

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Creates a user; e-mail is stored lower-cased and must be unique. */
export async function createUser(
  db: DbOrTx,
  input: { email: string; name: string; password?: string; platformRoles?: PlatformRole[] },
  actor: Actor,
): Promise<SessionUser> {
  const email = input.email.trim().toLowerCase();
  if (!emailPattern.test(email)) throw invalid('email', 'must be an e-mail address');
  if (input.password !== undefined && input.password.length < 8) throw invalid('password', 'must be at least 8 characters');
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  try {
    const [user] = await db
      .insert(users)
      .values({ email, name: input.name, passwordHash, platformRoles: input.platformRoles ?? [] })
      .returning({ id: users.id, email: users.email, name: users.name, platformRoles: users.platformRoles });
    await recordEvent(db, { actor, action: 'user.create', objectType: 'user', objectId: user.id, objectName: email, after: { email, platformRoles: user.platformRoles } });
    return user;
  } catch (e) {
    if (pgCode(e) === '23505') throw new DomainError('Conflict', `user "${email}" already exists`, 'email');
    throw e;
  }
}

export async function findUserByEmail(db: DbOrTx, email: string) {
  const [user] = await db
    .select({ id: users.id, email: users.email, name: users.name, platformRoles: users.platformRoles, passwordHash: users.passwordHash, disabledAt: users.disabledAt })
    .from(users)
    .where(eq(users.email, email.trim().toLowerCase()));
  return user;
}

export async function getSessionUser(db: DbOrTx, id: string): Promise<SessionUser | undefined> {
  const [user] = await db
    .select({ id: users.id, email: users.email, name: users.name, platformRoles: users.platformRoles, disabledAt: users.disabledAt })
    .from(users)
    .where(eq(users.id, id));
  if (!user || user.disabledAt) return undefined;
  return { id: user.id, email: user.email, name: user.name, platformRoles: user.platformRoles };
}

/**
 * Disables (or enables again) a user. A disabled user cannot sign in, and every token they created
 * stops working at its next use (api_token_role, migration 0031), as do their operator tokens;
 * enabling them again gives those tokens back what the user's rights then allow.
 */
export async function setUserDisabled(db: DbOrTx, userId: string, disabled: boolean, actor: Actor) {
  const [user] = await db
    .update(users)
    .set({ disabledAt: disabled ? sql`coalesce(${users.disabledAt}, now())` : null })
    .where(eq(users.id, userId))
    .returning({ id: users.id, email: users.email });
  if (!user) throw new DomainError('NotFound', `user ${userId} not found`, 'user');
  await recordEvent(db, { actor, action: disabled ? 'user.disable' : 'user.enable', objectType: 'user', objectId: user.id, objectName: user.email });
  return user;
}

/**
 * Deletes a user with their memberships and operator tokens. The project tokens they created are
 * revoked in the same statement (a trigger on users, migration 0031), so none outlives them.
 */
export async function deleteUser(db: DbOrTx, userId: string, actor: Actor) {
  const [user] = await db.delete(users).where(eq(users.id, userId)).returning({ id: users.id, email: users.email });
  if (!user) throw new DomainError('NotFound', `user ${userId} not found`, 'user');
  await recordEvent(db, { actor, action: 'user.delete', objectType: 'user', objectId: user.id, objectName: user.email });
  return user;
}

export type SignInResult =
  | { ok: true; user: SessionUser }
  | { ok: false; reason: 'invalid' | 'locked'; retryAfterSeconds?: number };

/**
 * Checks e-mail and password, throttling guesses: after `maxFailures` failures within the lock
 * window the address is locked for `lockSeconds`, whatever the password. The throttle row is
 * updated atomically, so concurrent guesses cannot slip past the limit.
 */
export async function authenticate(
  db: DbOrTx,
  email: string,
  password: string,
  limits: { maxFailures: number; lockSeconds: number },
): Promise<SignInResult> {
  const key = email.trim().toLowerCase().slice(0, 320);
  const [throttle] = await db
    .select({ lockedUntil: signInThrottle.lockedUntil })
    .from(signInThrottle)
    .where(eq(signInThrottle.key, key));
  if (throttle?.lockedUntil && throttle.lockedUntil.getTime() > Date.now()) {
    return { ok: false, reason: 'locked', retryAfterSeconds: Math.ceil((throttle.lockedUntil.getTime() - Date.now()) / 1000) };
  }
  const user = await findUserByEmail(db, key);
  const valid = user?.passwordHash && !user.disabledAt
    ? await verifyPassword(password, user.passwordHash)
    : (await verifyPassword(password, await dummyPasswordHash()), false);
  if (valid && user) {
    await db.delete(signInThrottle).where(eq(signInThrottle.key, key));
    await recordEvent(db, { actor: { type: 'user', id: user.id, label: user.email }, action: 'auth.signIn', objectType: 'user', objectId: user.id, objectName: user.email });
    return { ok: true, user: { id: user.id, email: user.email, name: user.name, platformRoles: user.platformRoles } };
  }
  const window = `${limits.lockSeconds} seconds`;
  const [row] = await db
    .insert(signInThrottle)
    .values({ key, failures: 1 })
    .onConflictDoUpdate({
      target: signInThrottle.key,
      set: {
        failures: sql`case when ${signInThrottle.windowStartedAt} < now() - ${window}::interval then 1 else ${signInThrottle.failures} + 1 end`,
        windowStartedAt: sql`case when ${signInThrottle.windowStartedAt} < now() - ${window}::interval then now() else ${signInThrottle.windowStartedAt} end`,
        lockedUntil: sql`case when ${signInThrottle.windowStartedAt} >= now() - ${window}::interval and ${signInThrottle.failures} + 1 >= ${limits.maxFailures} then now() + ${window}::interval else null end`,
      },
    })
    .returning({ failures: signInThrottle.failures, lockedUntil: signInThrottle.lockedUntil });
  await recordEvent(db, {
    actor: systemActor('sign-in'),
    action: 'auth.signIn.failed',
    objectType: 'user',
    objectId: user?.id ?? null,
    objectName: key,
    reason: row.lockedUntil ? `locked after ${row.failures} failures` : `failure ${row.failures}`,
  });
  if (row.lockedUntil) {
    return { ok: false, reason: 'locked', retryAfterSeconds: Math.ceil((row.lockedUntil.getTime() - Date.now()) / 1000) };
  }
  return { ok: false, reason: 'invalid' };
}
