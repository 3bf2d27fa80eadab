import { NextRequest } from 'next/server';
import { atOrigin, publicOrigin } from '@/server/http/public-origin';

/**
 * The request next-auth's route handlers get (server/auth/handlers.ts): `req` moved to the console's
 * public origin (server/http/public-origin.ts: AUTH_URL, else the request's own Host), with `body`
 * when the post's body was read already. next-auth builds every URL it sends the browser to from this
 * request's URL: redirects after sign-in and sign-out, and an OIDC provider's redirect URI.
 *
 * A NextRequest writes a loopback host (`127.0.0.1`, any `127.x.y.z`, `[::1]`) as `localhost` in its
 * URL. A browser that reached Meridian at `http://127.0.0.1:3000` would then be sent back to
 * `localhost`, where its cookies (the PKCE verifier, the session) are not, with a redirect URI that
 * is not the one registered at the provider. So without AUTH_URL the handlers get a plain Request,
 * whose URL is the one the browser used: its URL, method, headers and body are all next-auth reads
 * of it then. With AUTH_URL, next-auth itself re-bases the request on AUTH_URL through the
 * NextRequest's `nextUrl`, so it gets a NextRequest.
 */
export function authRequest(req: Request, authUrl: string | undefined, body?: Buffer): NextRequest {
  const url = atOrigin(req.url, publicOrigin(req.url, req.headers.get('host'), authUrl));
  const init = { method: req.method, headers: req.headers, body: body ? new Uint8Array(body) : undefined, signal: req.signal };
  return authUrl ? new NextRequest(url, init) : (new Request(url, init) as NextRequest);
}
