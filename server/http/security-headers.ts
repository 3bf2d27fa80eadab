import { randomBytes } from 'node:crypto';

/**
 * The security headers of every response. The web process's front door (server/http/front-door.ts)
 * adds the per-request ones — a Content-Security-Policy with a fresh script nonce on everything Next
 * serves, and HSTS on https — and the REST v1 server (server/http/api-server.ts) and Next
 * (next.config.ts) the fixed ones.
 */

/** `Strict-Transport-Security`, sent only on requests that arrived over https (see front-door.ts). */
export const HSTS = 'max-age=63072000; includeSubDomains';

/**
 * The Content-Security-Policy. Scripts run only from this origin and, on pages, only those carrying
 * `nonce` (Next puts the nonce it finds in the request's policy on its own scripts, inline ones
 * included; `'strict-dynamic'` lets those load the page's chunks). No inline script runs without
 * the nonce: there is no `'unsafe-inline'` for scripts. Styles keep `'unsafe-inline'` (React and
 * Next set style attributes). Without a nonce (JSON answers), no inline script runs at all.
 */
export function contentSecurityPolicy(nonce?: string): string {
  return [
    "default-src 'self'",
    nonce ? `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'` : "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "form-action 'self'",
    "base-uri 'self'",
    "object-src 'none'",
  ].join('; ');
}

/** A script nonce: 128 random bits, base64, fresh for every page response. */
export function scriptNonce(): string {
  return randomBytes(16).toString('base64');
}

/** The headers every response carries whatever served it (Next adds them through next.config.ts). */
export const securityHeaders: { key: string; value: string }[] = [
  { key: 'X-Frame-Options', value: 'DENY' },
  { key: 'X-Content-Type-Options', value: 'nosniff' },
  { key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' },
  { key: 'Permissions-Policy', value: 'camera=(), microphone=(), geolocation=()' },
  { key: 'Cross-Origin-Opener-Policy', value: 'same-origin' },
];
