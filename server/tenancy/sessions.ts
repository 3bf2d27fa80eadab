import { and, desc, eq, gt, isNull, ne, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query } from '@/db/query';
import { sessions, users } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError } from '@/server/errors';
import { platformRoles, type SessionUser } from './roles';

/** A console session ends after this long without a request (the session JWT's lifetime too). */
export const SESSION_MAX_AGE_SECONDS = 8 * 60 * 60;
const maxAge = sql.raw(`interval '${SESSION_MAX_AGE_SECONDS} seconds'`);

/**
 * Starts a session for a user who just signed in, pruning that user's sessions that are over
 * (revoked, or idle past the lifetime), so the table holds about the live sessions only.
 */
export async function createSession(db: DbOrTx, input: { userId: string; userAgent: string; address: string }): Promise<string> {
  await db
    .delete(sessions)
    .where(and(eq(sessions.userId, input.userId), or(sql`${sessions.revokedAt} is not null`, sql`${sessions.lastSeenAt} < now() - ${maxAge}`)));
  const [row] = await db
    .insert(sessions)
    .values({ userId: input.userId, userAgent: input.userAgent.slice(0, 512), address: input.address.slice(0, 100) })
    .returning({ id: sessions.id });
  return row.id;
}

/** Session ids are uuids; anything else (a forged or stale cookie) is no session, without a query. */
const isSessionId = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);

/**
 * The user of a live session, or undefined when the session is unknown, revoked, idle past the
 * lifetime, or its user is disabled. One statement on the primary keys of `sessions` and `users`
 * (it runs on every console request); it also advances `last_seen_at`, at most once a minute.
 */
export async function resolveSession(db: DbOrTx, sessionId: string): Promise<SessionUser | undefined> {
  if (!isSessionId(sessionId)) return undefined;
  const rows = await query(
    db,
    sql`
    with live as (
      select s.id, s.user_id, s.last_seen_at from sessions s
       where s.id = ${sessionId} and s.revoked_at is null and s.last_seen_at > now() - ${maxAge}),
    touched as (
      update sessions set last_seen_at = now()
       where id = (select id from live) and last_seen_at < now() - interval '60 seconds')
    select u.id, u.email, u.name, u.platform_roles::text[] as platform_roles
      from live join users u on u.id = live.user_id
     where u.disabled_at is null`,
    z.object({ id: z.string(), email: z.string(), name: z.string(), platform_roles: z.array(z.enum(platformRoles)) }),
  );
  const [u] = rows;
  return u && { id: u.id, email: u.email, name: u.name, platformRoles: u.platform_roles };
}

export interface SessionRow {
  id: string;
  createdAt: Date;
  lastSeenAt: Date;
  userAgent: string;
  address: string;
}

/** A user's live sessions, most recently seen first. */
export async function listSessions(db: DbOrTx, userId: string): Promise<SessionRow[]> {
  return db
    .select({ id: sessions.id, createdAt: sessions.createdAt, lastSeenAt: sessions.lastSeenAt, userAgent: sessions.userAgent, address: sessions.address })
    .from(sessions)
    .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.lastSeenAt, sql`now() - ${maxAge}`)))
    .orderBy(desc(sessions.lastSeenAt));
}

/**
 * Ends one session of `userId` at once (its next request is signed out). NotFound when the user
 * has no such live session; ending an already-ended session of one's own (a second sign-out) is
 * not an error for `quiet` callers.
 */
export async function revokeSession(db: DbOrTx, userId: string, sessionId: string, actor: Actor, options: { quiet?: boolean } = {}): Promise<void> {
  const revoked = isSessionId(sessionId)
    ? await db
        .update(sessions)
        .set({ revokedAt: sql`now()` })
        .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId), isNull(sessions.revokedAt)))
        .returning({ id: sessions.id })
    : [];
  if (revoked.length === 0) {
    if (options.quiet) return;
    throw new DomainError('NotFound', `session "${sessionId}" not found`, 'id');
  }
  await recordEvent(db, {
    actor,
    action: 'session.revoke',
    objectType: 'user',
    objectId: userId,
    objectName: await userEmail(db, userId),
    reason: `session ${sessionId}`,
  });
}

/**
 * Ends every session of a user (sign out everywhere, a password change, disabling), except
 * `keep` when given (the session that changed its own password stays signed in). Returns how many.
 */
export async function revokeUserSessions(db: DbOrTx, userId: string, actor: Actor, options: { keep?: string; reason: string }): Promise<number> {
  const revoked = await db
    .update(sessions)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), options.keep ? ne(sessions.id, options.keep) : undefined))
    .returning({ id: sessions.id });
  await recordEvent(db, {
    actor,
    action: 'session.revokeAll',
    objectType: 'user',
    objectId: userId,
    objectName: await userEmail(db, userId),
    reason: `${options.reason}: ${revoked.length} session(s) ended`,
  });
  return revoked.length;
}

async function userEmail(db: DbOrTx, userId: string): Promise<string> {
  const [u] = await db.select({ email: users.email }).from(users).where(eq(users.id, userId));
  return u?.email ?? userId;
}
