/**
 * The OIDC provider definition and the sign-in callback (server/auth/oidc-provider.ts) under the real
 * Auth.js core, against a real OpenID provider (oidc-provider, test/oidc-provider.ts): the
 * authorization-code flow a browser makes — sign-in post, the provider's sign-in and consent pages,
 * the callback — driven here with fetch and a cookie jar per site. The provider follows OIDC Core
 * for claims: `email` and `email_verified` come from its UserInfo endpoint, not the ID token.
 */
import { Auth, type AuthConfig } from '@auth/core';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createUser } from '@/server/tenancy/users';
import { testDb, uniq } from '@/test/db';
import { startOpenIdProvider, type TestOpenIdProvider } from '@/test/oidc-provider';
import { admitOidcSignIn, oidcProvider } from './oidc-provider';

const db = () => testDb().db;
/** Where Meridian is, as far as Auth.js and the provider know: its requests are handed to Auth() in-process. */
const MERIDIAN = 'http://meridian.test';

const verified = `${uniq('sso-ok')}@example.com`;
const unverified = `${uniq('sso-unverified')}@example.com`;
/** An address someone else made a password account for from an invitation link they held (never verified). */
const squatted = `${uniq('sso-squatted')}@example.com`;
/** An address whose password account an administrator made (verified by `admin`). */
const adminMade = `${uniq('sso-admin')}@example.com`;
const accounts = {
  verified: { email: verified, emailVerified: true, name: 'Verified Person' },
  unverified: { email: unverified, emailVerified: false, name: 'Unverified Person' },
  squatted: { email: squatted, emailVerified: true, name: 'Real Holder' },
  adminMade: { email: adminMade, emailVerified: true, name: 'Admin Made' },
};

let op: TestOpenIdProvider;
let config: AuthConfig;

beforeAll(async () => {
  op = await startOpenIdProvider({ redirectUri: `${MERIDIAN}/api/auth/callback/oidc`, accounts });
  config = {
    basePath: '/api/auth',
    trustHost: true,
    secret: 'a-test-secret-that-is-long-enough-for-jwe',
    session: { strategy: 'jwt' },
    pages: { signIn: '/sign-in', error: '/sign-in' },
    providers: [
      oidcProvider({ AUTH_OIDC_NAME: 'Example ID', AUTH_OIDC_ISSUER: op.issuer, AUTH_OIDC_CLIENT_ID: op.clientId, AUTH_OIDC_CLIENT_SECRET: op.clientSecret }),
    ],
    callbacks: { signIn: ({ user, profile }) => admitOidcSignIn(db(), { user, profile }) },
    logger: { error: () => {}, warn: () => {}, debug: () => {} },
  };
});

afterAll(async () => {
  await op?.close();
});

/** Cookies of one site, as a browser keeps them (names and values; attributes do not matter here). */
class Jar {
  private cookies = new Map<string, string>();
  take(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * Signs in with the provider as `username` from Meridian's sign-in (callbackUrl `/projects`), as a
 * browser would; returns where Meridian's callback sends the browser, and the session it then has.
 */
async function signInThroughProvider(username: string): Promise<{ location: string; session: unknown }> {
  const meridian = new Jar();
  const provider = new Jar();
  const toMeridian = async (path: string, init: RequestInit = {}) => {
    const res = await Auth(new Request(`${MERIDIAN}${path}`, { ...init, headers: { ...init.headers, cookie: meridian.header() } }), config);
    meridian.take(res);
    return res;
  };
  const { csrfToken } = (await (await toMeridian('/api/auth/csrf')).json()) as { csrfToken: string };
  const started = await toMeridian('/api/auth/signin/oidc', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrfToken, callbackUrl: '/projects' }),
  });
  expect(started.status).toBe(302);
  let url = started.headers.get('location')!;
  expect(url.startsWith(`${op.issuer}/auth?`)).toBe(true);

  // At the provider: follow its redirects, sign in on its login page, allow on its consent page.
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 20 && !url.startsWith(MERIDIAN); step++) {
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      headers: { cookie: provider.header(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: form,
      redirect: 'manual',
    });
    provider.take(res);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).toString();
      form = undefined;
      continue;
    }
    const html = await res.text();
    expect(res.status, html).toBe(200);
    form = html.includes('name="username"') ? new URLSearchParams({ username }) : new URLSearchParams();
  }
  expect(url.startsWith(`${MERIDIAN}/api/auth/callback/oidc?`)).toBe(true);

  const back = await toMeridian(url.slice(MERIDIAN.length));
  expect(back.status).toBe(302);
  const session = await (await toMeridian('/api/auth/session')).json();
  return { location: back.headers.get('location')!, session };
}

describe('OIDC sign-in through a real OpenID provider', () => {
  test('a verified e-mail, given by the UserInfo endpoint, signs in and creates its user', async () => {
    const { location, session } = await signInThroughProvider('verified');
    expect(location).toBe(`${MERIDIAN}/projects`);
    expect(session).toMatchObject({ user: { email: verified, name: 'Verified Person' } });
    const rows = await db().execute(sql`select name, password_hash from users where email = ${verified}`);
    expect([...rows]).toEqual([{ name: 'Verified Person', password_hash: null }]);
  });

  test('a verified e-mail never lands in an existing password account whose e-mail nobody verified (pre-account takeover); a verified account it joins', async () => {
    const squatter = await createUser(
      db(),
      { email: squatted, name: 'Squatter', password: 'the squatter knows this', createdVia: 'invitation', emailVerifiedBy: null },
      systemActor('test'),
    );
    const { location, session } = await signInThroughProvider('squatted');
    expect(location).toBe(`${MERIDIAN}/sign-in?error=OidcAccountUnverified`);
    expect(session).toBeNull();
    // The squatter's account is untouched and still unverified; no second user was made.
    const rows = await db().execute(sql`select id, name, email_verified_by from users where email = ${squatted}`);
    expect([...rows]).toEqual([{ id: squatter.id, name: 'Squatter', email_verified_by: null }]);

    await createUser(
      db(),
      { email: adminMade, name: 'Admin Made', password: 'a long password', createdVia: 'admin', emailVerifiedBy: 'admin' },
      systemActor('test'),
    );
    const admitted = await signInThroughProvider('adminMade');
    expect(admitted.location).toBe(`${MERIDIAN}/projects`);
    expect(admitted.session).toMatchObject({ user: { email: adminMade } });
  });

  test('`email_verified: false` is sent to the sign-in page naming the reason; no session, no user', async () => {
    const { location, session } = await signInThroughProvider('unverified');
    expect(location).toBe(`${MERIDIAN}/sign-in?error=OidcUnverified`);
    expect(session).toBeNull();
    expect([...(await db().execute(sql`select 1 from users where email = ${unverified}`))]).toEqual([]);
  });
});
