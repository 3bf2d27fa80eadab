/**
 * next-auth's `useSecureCookies`: secure cookies (the Secure flag, `__Secure-`/`__Host-` names) exactly
 * when the console is served over https. With AUTH_URL set, its scheme decides. Without it,
 * `undefined` lets @auth/core decide per request from the request's protocol, which Next takes from
 * TLS or from a proxy's `X-Forwarded-Proto: https` — a hard-coded `false` here would send session
 * cookies without the Secure flag behind a TLS-terminating proxy. Session, CSRF and callback cookies
 * are HttpOnly and SameSite=Lax in every case (@auth/core's defaults; server/auth/cookies.test.ts and
 * e2e/sign-in.spec.ts hold them to it).
 */
export function secureCookies(authUrl: string | undefined): boolean | undefined {
  return authUrl ? new URL(authUrl).protocol === 'https:' : undefined;
}
