import { NextRequest } from 'next/server';
import { env } from '@/server/env';
import { payloadTooLargeResponse, readWebBody } from '@/server/http/body-limit';
import { atOrigin, publicOrigin } from '@/server/http/public-origin';
import { handlers } from './config';

/**
 * next-auth's route handlers (app/api/auth), given a request whose URL is the console's public one
 * (server/http/public-origin.ts: AUTH_URL, else the request's Host — never the bound 0.0.0.0), so
 * the URLs sign-in and sign-out redirect to are ones the browser can reach. Posts (sign-in,
 * sign-out) carry at most MAX_BODY_BYTES, like REST and tRPC: more is 413, read no further.
 */
function atPublicUrl(req: NextRequest, body?: Buffer): NextRequest {
  const url = atOrigin(req.url, publicOrigin(req.url, req.headers.get('host'), env().AUTH_URL));
  return new NextRequest(url, { method: req.method, headers: req.headers, body: body ? new Uint8Array(body) : undefined, signal: req.signal });
}

export function GET(req: NextRequest): Promise<Response> {
  return handlers.GET(atPublicUrl(req));
}

export async function POST(req: NextRequest): Promise<Response> {
  const body = await readWebBody(req);
  if (body === 'tooLarge') return payloadTooLargeResponse();
  return handlers.POST(atPublicUrl(req, body));
}
