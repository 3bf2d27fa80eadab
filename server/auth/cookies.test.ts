import { Auth } from '@auth/core';
import Credentials from '@auth/core/providers/credentials';
import { describe, expect, test } from 'vitest';
import { secureCookies } from './cookies';

/** One Set-Cookie header, split into its name, value and lower-cased attributes. */
function parseSetCookie(header: string) {
  const [pair, ...attrs] = header.split(';').map((s) => s.trim());
  const eq = pair.indexOf('=');
  const attributes: Record<string, string | true> = {};
  for (const a of attrs) {
    const i = a.indexOf('=');
    if (i < 0) attributes[a.toLowerCase()] = true;
    else attributes[a.slice(0, i).toLowerCase()] = a.slice(i + 1).toLowerCase();
  }
  return { name: pair.slice(0, eq), value: pair.slice(eq + 1), attributes };
}

/**
 * Sign-in through @auth/core itself (what next-auth's route handler runs), with our cookie rule:
 * GET the CSRF token, POST the credentials, and return the cookies each response set.
 */
async function signIn(origin: string, authUrl: string | undefined) {
  const config = {
    basePath: '/api/auth',
    secret: 'a-test-secret-that-is-at-least-32-characters',
    trustHost: true,
    session: { strategy: 'jwt' as const },
    useSecureCookies: secureCookies(authUrl),
    providers: [Credentials({ credentials: { email: {}, password: {} }, authorize: (c) => ({ id: 'u1', email: String(c.email) }) })],
  };
  const csrf = await Auth(new Request(`${origin}/api/auth/csrf`), config);
  const csrfCookies = csrf.headers.getSetCookie().map(parseSetCookie);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const callback = await Auth(
    new Request(`${origin}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookies.map((c) => `${c.name}=${c.value}`).join('; ') },
      body: new URLSearchParams({ email: 'tenant@example.com', password: 'x', csrfToken }),
    }),
    config,
  );
  return [...csrfCookies, ...callback.headers.getSetCookie().map(parseSetCookie)];
}

describe('auth cookies', () => {
  const cases = [
    { served: 'plain http, no AUTH_URL', origin: 'http://localhost:3000', authUrl: undefined, secure: false },
    {
      served: 'https (TLS, or a proxy sending X-Forwarded-Proto: https), no AUTH_URL',
      origin: 'https://meridian.example.com',
      authUrl: undefined,
      secure: true,
    },
    { served: 'an https AUTH_URL, the request reaching Node over http', origin: 'http://10.0.0.5:3000', authUrl: 'https://meridian.example.com', secure: true },
    { served: 'an http AUTH_URL', origin: 'http://localhost:3000', authUrl: 'http://localhost:3000', secure: false },
  ];
  test.each(cases)('$served: session and CSRF cookies are HttpOnly, SameSite=Lax, Secure=$secure', async ({ origin, authUrl, secure }) => {
    const cookies = await signIn(origin, authUrl);
    const session = cookies.find((c) => c.name.endsWith('authjs.session-token'));
    const csrf = cookies.find((c) => c.name.endsWith('authjs.csrf-token'));
    expect(session, 'a session cookie was set (sign-in succeeded)').toBeDefined();
    expect(csrf).toBeDefined();
    expect(session!.name).toBe(secure ? '__Secure-authjs.session-token' : 'authjs.session-token');
    expect(csrf!.name).toBe(secure ? '__Host-authjs.csrf-token' : 'authjs.csrf-token');
    for (const cookie of cookies.filter((c) => c.value !== '')) {
      expect(cookie.attributes, cookie.name).toMatchObject({ httponly: true, samesite: 'lax', path: '/' });
      expect(cookie.attributes.secure ?? false, cookie.name).toBe(secure);
    }
  });

  test('the rule itself', () => {
    expect(secureCookies(undefined)).toBeUndefined();
    expect(secureCookies('https://meridian.example.com/')).toBe(true);
    expect(secureCookies('HTTPS://meridian.example.com')).toBe(true);
    expect(secureCookies('http://localhost:3000')).toBe(false);
  });
});
