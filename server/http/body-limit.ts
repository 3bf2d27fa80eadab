import type { IncomingMessage } from 'node:http';

/**
 * The one bound on request bodies the web process accepts: REST v1 (server/http/api-server.ts),
 * the console's tRPC calls (server/trpc/http.ts) and the sign-in and sign-out
 * posts (server/auth/handlers.ts). A body declared larger is refused before a byte of it is read;
 * one streamed larger is refused as soon as it passes the limit, so at most the limit and one chunk
 * are ever held in memory.
 */
export const MAX_BODY_BYTES = 64 * 1024;

/** What a body over the limit is answered with (status 413), REST's error shape. */
export function payloadTooLargeBody(limit = MAX_BODY_BYTES) {
  return { error: { code: 'PayloadTooLarge', message: `body exceeds ${limit} bytes`, field: 'body' } };
}

function declaredTooLarge(contentLength: string | null | undefined, limit: number): boolean {
  return Number(contentLength ?? 0) > limit;
}

/**
 * The body of a request the Node server holds (the REST server's path), or 'tooLarge' as soon as it
 * (declared or streamed) exceeds `limit`. Past the limit the rest is drained unread, so the socket
 * stays usable for the 413 answer.
 */
export function readNodeBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer | 'tooLarge'> {
  if (declaredTooLarge(req.headers['content-length'], limit)) return Promise.resolve('tooLarge');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.resume();
        resolve('tooLarge');
      } else chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * The body of a Web `Request` (a route handler under Next: tRPC, sign-in), or 'tooLarge' as soon as it (declared or
 * streamed) exceeds `limit`; reading stops there. The stream is released, not cancelled: cancelling
 * it would destroy the Node request under it, and with it the socket before the 413 goes out. The
 * web process's front door closes a connection whose request was left half-read once the answer is
 * out (server/http/front-door.ts).
 */
export async function readWebBody(req: Request, limit = MAX_BODY_BYTES): Promise<Buffer | 'tooLarge'> {
  if (declaredTooLarge(req.headers.get('content-length'), limit)) return 'tooLarge';
  const reader = req.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      reader.releaseLock();
      return 'tooLarge';
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** A 413 answer for a route handler under Next (the rest of the body is not read; see readWebBody). */
export function payloadTooLargeResponse(limit = MAX_BODY_BYTES): Response {
  return Response.json(payloadTooLargeBody(limit), { status: 413 });
}
