import 'server-only';
import { withDeadline } from '@/db/deadline';
import { env } from '@/server/env';
import { notingDatabaseFailure, observingDatabase } from '@/server/http/database-watch';
import type { SessionUser } from '@/server/tenancy/roles';
import { auth } from './config';

/**
 * The signed-in user and session id for this request, or null. `auth()` looks the session up in
 * the database (server/auth/config.ts): a revoked or idle session, or a disabled user, is null at
 * once; roles are as the database holds them now.
 *
 * Within the request deadline (DB_REQUEST_TIMEOUT_MS, or the request's own when it is earlier):
 * a database that does not answer in time, or cannot serve, rejects with DeadlineExceeded or
 * DatabaseUnavailable (`asDomainError` maps both to DatabaseUnavailable) — never "signed out",
 * which next-auth would make of a failed lookup.
 */
export async function currentSession(): Promise<{ user: SessionUser; sessionId: string } | null> {
  const session = (await notingDatabaseFailure(() => withDeadline(env().DB_REQUEST_TIMEOUT_MS, () => observingDatabase(() => auth())))) as {
    user?: SessionUser;
    sessionId?: unknown;
  } | null;
  if (!session?.user?.id || typeof session.sessionId !== 'string') return null;
  const { id, email, name, platformRoles } = session.user;
  return { user: { id, email, name, platformRoles }, sessionId: session.sessionId };
}

/** The signed-in user for this request, or null (see `currentSession`). */
export async function currentUser(): Promise<SessionUser | null> {
  return (await currentSession())?.user ?? null;
}
