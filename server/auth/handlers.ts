import type { NextRequest } from 'next/server';
import { env } from '@/server/env';
import { payloadTooLargeResponse, readWebBody } from '@/server/http/body-limit';
import { handlers } from './config';
import { authRequest } from './public-request';

/**
 * next-auth's route handlers (app/api/auth), given a request whose URL is the console's public one
 * (server/auth/public-request.ts: AUTH_URL, else the request's Host — never the bound 0.0.0.0, and
 * a loopback address as the browser wrote it), so the URLs sign-in and sign-out redirect to are ones
 * the browser can reach. Posts (sign-in, sign-out) carry at most MAX_BODY_BYTES, like REST and tRPC:
 * more is 413, read no further.
 */
export function GET(req: NextRequest): Promise<Response> {
  return handlers.GET(authRequest(req, env().AUTH_URL));
}

export async function POST(req: NextRequest): Promise<Response> {
  const body = await readWebBody(req);
  if (body === 'tooLarge') return payloadTooLargeResponse();
  return handlers.POST(authRequest(req, env().AUTH_URL, body));
}
