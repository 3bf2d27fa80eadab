import type { NextRequest } from 'next/server';
import { withDeadline } from '@/db/deadline';
import { env } from '@/server/env';
import { asDomainError, DATABASE_RETRY_AFTER_SECONDS } from '@/server/errors';
import { payloadTooLargeResponse, readWebBody } from '@/server/http/body-limit';
import { observingDatabase } from '@/server/http/database-watch';
import { atOrigin, publicOrigin } from '@/server/http/public-origin';
import { handlers } from './config';
import { authRequest } from './public-request';

/**
 * next-auth's route handlers (app/api/auth), given a request whose URL is the console's public one
 * (server/auth/public-request.ts: AUTH_URL, else the request's Host — never the bound 0.0.0.0, and
 * a loopback address as the browser wrote it), so the URLs sign-in and sign-out redirect to are ones
 * the browser can reach. Posts (sign-in, sign-out) carry at most MAX_BODY_BYTES, like REST and tRPC:
 * more is 413, read no further.
 *
 * Every auth route answers within the request deadline (DB_REQUEST_TIMEOUT_MS): when the database
 * does not answer by then, or cannot serve (a failure its callbacks noted, server/auth/config.ts),
 * the answer is 503 `DatabaseUnavailable` with Retry-After — not next-auth's, which would report
 * the session as gone and clear its cookie, or send a sign-in back as a configuration error.
 */
export function GET(req: NextRequest): Promise<Response> {
  return withinDeadline(req, () => handlers.GET(authRequest(req, env().AUTH_URL)));
}

export async function POST(req: NextRequest): Promise<Response> {
  const body = await readWebBody(req);
  if (body === 'tooLarge') return payloadTooLargeResponse();
  return withinDeadline(req, () => handlers.POST(authRequest(req, env().AUTH_URL, body)));
}

async function withinDeadline(req: NextRequest, handle: () => Promise<Response>): Promise<Response> {
  try {
    return await withDeadline(env().DB_REQUEST_TIMEOUT_MS, () => observingDatabase(handle));
  } catch (e) {
    const unavailable = asDomainError(e);
    if (unavailable?.code !== 'DatabaseUnavailable') throw e;
    return databaseUnavailableResponse(req, unavailable.message);
  }
}

/**
 * 503 with Retry-After. `url` is where next-auth's client (the sign-in form's `signIn`, the shell's
 * `signOut`) goes or reads the error from: the sign-in page with `error=DatabaseUnavailable`.
 */
function databaseUnavailableResponse(req: NextRequest, message: string): Response {
  const url = new URL('/sign-in', atOrigin(req.url, publicOrigin(req.url, req.headers.get('host'), env().AUTH_URL)));
  url.searchParams.set('error', 'DatabaseUnavailable');
  url.searchParams.set('code', 'unavailable');
  return Response.json(
    { url: url.toString(), error: { code: 'DatabaseUnavailable', message } },
    { status: 503, headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS), 'cache-control': 'no-store' } },
  );
}
