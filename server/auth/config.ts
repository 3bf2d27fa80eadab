import NextAuth, { CredentialsSignin, type NextAuthConfig } from 'next-auth';
import Credentials from 'next-auth/providers/credentials';
import { z } from 'zod';
import { getDb } from '@/db/client';
import { env, oidcEnabled, signInPolicy } from '@/server/env';
import { CLIENT_ADDRESS_HEADER } from '@/server/http/client-address';
import { notingDatabaseFailure } from '@/server/http/database-watch';
import { log, logError } from '@/server/observability/log';
import type { SessionUser } from '@/server/tenancy/roles';
import { createSession, resolveSession, revokeSession, SESSION_MAX_AGE_SECONDS } from '@/server/tenancy/sessions';
import { authenticate } from '@/server/tenancy/sign-in';
import { findUserByEmail } from '@/server/tenancy/users';
import { secureCookies } from './cookies';
import { admitOidcSignIn, OIDC_PROVIDER_ID, oidcProvider } from './oidc-provider';
import { authSecret } from './secret';

class InvalidCredentials extends CredentialsSignin {
  code = 'invalid';
}
class Throttled extends CredentialsSignin {
  code = 'throttled';
}
class Disabled extends CredentialsSignin {
  code = 'disabled';
}

const credentialsInput = z.object({ email: z.string().trim().min(3).max(320), password: z.string().min(1).max(1024) });

/**
 * The user the jwt callback resolved for a token, handed to the session callback without being
 * written into the token (which is re-encoded into the cookie).
 */
const resolvedUsers = new WeakMap<object, SessionUser>();

/** The client address the web process resolved (bin/web.ts overwrites the header on auth requests). */
const clientOf = (req: Request | undefined) => req?.headers.get(CLIENT_ADDRESS_HEADER) ?? 'unknown';

/**
 * next-auth, configured lazily so the secret is read at request time (the web process loads it
 * from AUTH_SECRET or the database before serving), never baked in at build time. `req` is the
 * auth route's request (absent for `auth()` in server components), for the sign-in's client.
 *
 * Sessions are server-side: the JWT carries the id of a `sessions` row, and every `auth()` looks
 * it up (server/tenancy/sessions.ts), so sign-out, "sign out everywhere", a password change or
 * disabling the user ends the session on its next request, whatever the cookie says.
 *
 * next-auth catches what a callback throws (a failed session lookup becomes "signed out" and clears
 * the cookie): the callbacks, events and `authorize` note a database that could not serve
 * (server/http/database-watch.ts), so that the auth routes (handlers.ts) and `currentSession`
 * answer DatabaseUnavailable instead.
 */
function config(req: Request | undefined): NextAuthConfig {
  const e = env();
  return {
    trustHost: true,
    logger: {
      // A refused password is an expected outcome (recorded in the audit log), not a server error.
      error(error) {
        if (error.name === 'CredentialsSignin' || (error as { type?: string }).type === 'CredentialsSignin') return;
        logError('auth', error);
      },
      warn(code) {
        log('warn', `auth: ${code}`);
      },
    },
    secret: authSecret(),
    session: { strategy: 'jwt', maxAge: SESSION_MAX_AGE_SECONDS },
    // Errors (a refused or failed provider sign-in) land on the sign-in page, which words them.
    pages: { signIn: '/sign-in', error: '/sign-in' },
    useSecureCookies: secureCookies(e.AUTH_URL),
    providers: [
      Credentials({
        credentials: { email: { label: 'Email' }, password: { label: 'Password', type: 'password' } },
        async authorize(raw, request) {
          const parsed = credentialsInput.safeParse(raw);
          if (!parsed.success) throw new InvalidCredentials();
          const result = await notingDatabaseFailure(() => authenticate(getDb(), { ...parsed.data, client: clientOf(request) }, signInPolicy()));
          if (!result.ok) throw result.reason === 'throttled' ? new Throttled() : result.reason === 'disabled' ? new Disabled() : new InvalidCredentials();
          return { id: result.user.id, email: result.user.email, name: result.user.name };
        },
      }),
      ...(oidcEnabled() ? [oidcProvider(e)] : []),
    ],
    callbacks: notingFailures<NonNullable<NextAuthConfig['callbacks']>>({
      async signIn({ user, account, profile }) {
        if (account?.provider !== OIDC_PROVIDER_ID) return true;
        // OIDC users are matched by e-mail; a first sign-in creates a user with no roles (server/tenancy/oidc.ts).
        return admitOidcSignIn(getDb(), { user, profile });
      },
      async jwt({ token, user, account }) {
        if (user) {
          // Signing in: start a session row; its id is what the cookie carries from now on.
          const uid = account?.provider === OIDC_PROVIDER_ID && user.email ? (await findUserByEmail(getDb(), user.email))?.id : user.id;
          if (!uid) return null;
          token.uid = uid;
          token.sid = await createSession(getDb(), { userId: uid, userAgent: req?.headers.get('user-agent') ?? '', address: clientOf(req) });
          return token;
        }
        const resolved = typeof token.sid === 'string' ? await resolveSession(getDb(), token.sid) : undefined;
        if (!resolved || resolved.id !== token.uid) return null;
        resolvedUsers.set(token, resolved);
        return token;
      },
      session({ session, token }) {
        const user = resolvedUsers.get(token);
        return { ...session, user: user as unknown as typeof session.user, sessionId: token.sid };
      },
    }),
    events: notingFailures<NonNullable<NextAuthConfig['events']>>({
      async signOut(message) {
        const token = 'token' in message ? message.token : null;
        if (typeof token?.sid === 'string' && typeof token.uid === 'string') {
          await revokeSession(getDb(), token.uid, token.sid, { type: 'user', id: token.uid, label: token.email ?? token.uid }, { quiet: true });
        }
      },
    }),
  };
}

/** `handlers`, each noting a database failure it throws: next-auth catches what they throw, and would hide it. */
function notingFailures<T extends object>(handlers: T): T {
  return Object.fromEntries(
    Object.entries(handlers).map(([name, fn]) => [
      name,
      (...args: unknown[]) => notingDatabaseFailure(async () => (fn as (...a: unknown[]) => unknown)(...args)),
    ]),
  ) as T;
}

export const { handlers, auth, signOut } = NextAuth((req) => config(req));
