import NextAuth, { CredentialsSignin, type NextAuthConfig } from 'next-auth';
import Credentials from 'next-auth/providers/credentials';
import { z } from 'zod';
import { getDb } from '@/db/client';
import { env, oidcEnabled } from '@/server/env';
import { log, logError } from '@/server/observability/log';
import { systemActor } from '@/server/audit/events';
import { authenticate, createUser, findUserByEmail } from '@/server/tenancy/users';
import { secureCookies } from './cookies';

class InvalidCredentials extends CredentialsSignin {
  code = 'invalid';
}
class LockedOut extends CredentialsSignin {
  code = 'locked';
}

const credentialsInput = z.object({ email: z.string().trim().min(3).max(320), password: z.string().min(1).max(1024) });

/**
 * next-auth, configured lazily so the secret is read at request time (the web process loads it
 * from AUTH_SECRET or the database before serving), never baked in at build time.
 */
function config(): NextAuthConfig {
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
    secret: process.env.AUTH_SECRET,
    session: { strategy: 'jwt', maxAge: 8 * 60 * 60 },
    pages: { signIn: '/sign-in' },
    useSecureCookies: secureCookies(process.env.AUTH_URL),
    providers: [
      Credentials({
        credentials: { email: { label: 'Email' }, password: { label: 'Password', type: 'password' } },
        async authorize(raw) {
          const parsed = credentialsInput.safeParse(raw);
          if (!parsed.success) throw new InvalidCredentials();
          const result = await authenticate(getDb(), parsed.data.email, parsed.data.password, {
            maxFailures: e.SIGN_IN_MAX_FAILURES,
            lockSeconds: e.SIGN_IN_LOCK_SECONDS,
          });
          if (!result.ok) throw result.reason === 'locked' ? new LockedOut() : new InvalidCredentials();
          return { id: result.user.id, email: result.user.email, name: result.user.name };
        },
      }),
      ...(oidcEnabled()
        ? [
            {
              id: 'oidc',
              name: e.AUTH_OIDC_NAME,
              type: 'oidc' as const,
              issuer: e.AUTH_OIDC_ISSUER,
              clientId: e.AUTH_OIDC_CLIENT_ID,
              clientSecret: e.AUTH_OIDC_CLIENT_SECRET,
            },
          ]
        : []),
    ],
    callbacks: {
      async signIn({ user, account }) {
        if (account?.provider !== 'oidc') return true;
        if (!user.email) return false;
        // OIDC users are matched by e-mail; a first sign-in creates a user with no roles.
        const existing = await findUserByEmail(getDb(), user.email);
        if (existing?.disabledAt) return false;
        if (!existing) await createUser(getDb(), { email: user.email, name: user.name ?? user.email }, systemActor('oidc'));
        return true;
      },
      async jwt({ token, user, account }) {
        if (user && account?.provider === 'oidc' && user.email) {
          token.uid = (await findUserByEmail(getDb(), user.email))?.id;
        } else if (user?.id) {
          token.uid = user.id;
        }
        return token;
      },
      session({ session, token }) {
        if (typeof token.uid === 'string') (session.user as { id?: string }).id = token.uid;
        return session;
      },
    },
  };
}

export const { handlers, auth, signOut } = NextAuth(() => config());
