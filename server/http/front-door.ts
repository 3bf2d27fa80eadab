import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BlockList } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { logError } from '@/server/observability/log';
import { methodLabel, metrics, routeLabel } from '@/server/observability/metrics';
import type { ApiServer } from './api-server';
import { arrivedOverHttps, CLIENT_ADDRESS_HEADER, clientAddress } from './client-address';
import type { RateLimiter } from './rate-limit';
import { MAX_BODY_BYTES, payloadTooLargeBody } from './body-limit';
import { isPageRender, serveWithinDeadline } from './page-deadline';
import { markArrival } from './server-timing';
import { contentSecurityPolicy, HSTS, scriptNonce } from './security-headers';

export interface FrontDoorOptions {
  /** REST v1, served without Next (server/http/api-server.ts). */
  api: ApiServer;
  /** Next's request handler: pages, tRPC, auth, live updates, probes, `/metrics`. */
  next: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** TRUSTED_PROXIES: the peers whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed. */
  trustedProxies: BlockList;
  /** Sign-in posts per client, cut before any password hashing. */
  signInLimiter: RateLimiter;
  /** DB_REQUEST_TIMEOUT_MS: the deadline of a page render (server/http/page-deadline.ts). */
  requestBudgetMs: number;
}

/**
 * What the web process does with every request before REST v1 or Next sees it (bin/web.ts):
 * - notes when it arrived (REST answers carry the web process's time: server-timing.ts) and records
 *   its latency under bounded labels (routeLabel: the REST route table's patterns and a
 *   fixed set, so unknown paths cannot grow the histogram);
 * - adds HSTS when the request arrived over https (TLS, or a trusted proxy saying so);
 * - gives auth requests the client address (the socket's peer, or X-Forwarded-For through
 *   TRUSTED_PROXIES only; a value the client sent in the header is overwritten) and cuts a flood of
 *   sign-in posts from one client before any password hashing (the real throttling is per
 *   (client, account) and per client in server/tenancy/sign-in.ts);
 * - bounds every request body, whatever route it is for (bounded below: REST, tRPC, auth, pages);
 * - puts a Content-Security-Policy with a fresh script nonce on the request and its response for
 *   everything Next serves: Next reads the nonce from the request's policy and puts it on its
 *   scripts (a policy a client sent is overwritten);
 * - renders pages within the request deadline: a page the database cannot serve in time is a 503
 *   page with Retry-After, never a hang (page-deadline.ts).
 */
/** How long a connection whose request was left half-read stays open, unread, after the answer. */
const LINGER_MS = 5_000;

/**
 * Ends a connection whose request body was not read to its end (a body over the limit, refused
 * with 413, or one a page never read): the rest is never read, and the connection cannot carry
 * another request. Half-closing first lets the client read the answer; closing at once with unread
 * data would reset the connection, and the client could lose the answer to the reset.
 */
function lingeringClose(req: IncomingMessage) {
  const socket = req.socket;
  socket.end();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/** Whether a request carries a body: a declared length above 0, or a transfer coding (chunked). */
function carriesBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** Routes whose own bounded reader answers a body over the limit in its own shape (tRPC's error). */
const ownsTooLargeAnswer = (pathname: string) => pathname === '/api/trpc' || pathname.startsWith('/api/trpc/');

/**
 * The one bound on request bodies, for every route the web process serves (REST v1, tRPC, auth,
 * pages, anything else Next answers), applied before any handler sees the request:
 * - a body declared longer than `limit` is answered 413 `PayloadTooLarge` at once, none of it read
 *   (tRPC's handler answers it in its own error shape, equally before reading);
 * - a body streamed without a length is handed to the route only up to `limit` + 1 byte (so a
 *   bounded reader sees that it is over and answers 413); nothing beyond is taken off the socket;
 * - an answer that ends while the body is still unread (refused, or a page that never reads it)
 *   closes the connection after it, and Node does not read the rest to reuse the connection.
 * Returns true when the request was answered here.
 */
function boundBody(req: IncomingMessage, res: ServerResponse, pathname: string, limit: number): boolean {
  if (!carriesBody(req)) return false;
  // After an answer, Node reads whatever is left of the request body, to the end, so the connection
  // can carry the next request (IncomingMessage's `_dump`). A body still unread when the answer
  // ends is marked as dumped instead, so nothing more is read, and the connection is closed after
  // the answer (lingeringClose, on 'finish'). Closing through Node (`Connection: close`) would
  // close the socket with the body's bytes unread in it: a reset, which can cost the client the answer.
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.end = ((...args: unknown[]) => {
    if (!req.complete) {
      (req as IncomingMessage & { _dumped: boolean })._dumped = true;
      req.socket.pause();
    }
    return end(...args);
  }) as ServerResponse['end'];
  if (Number(req.headers['content-length'] ?? 0) > limit && !ownsTooLargeAnswer(pathname)) {
    res.writeHead(413, { 'content-type': 'application/json' });
    res.end(JSON.stringify(payloadTooLargeBody(limit)));
    return true;
  }
  // Node's HTTP parser hands each body chunk to `req.push`: past the limit, nothing more is handed
  // on, and answering false stops the socket's reading (the parser's own back-pressure).
  const push = req.push.bind(req);
  let seen = 0;
  req.push = (chunk: Buffer | null, encoding?: BufferEncoding) => {
    if (chunk === null) return seen > limit ? false : push(null);
    if (seen > limit) return false;
    seen += chunk.length;
    if (seen <= limit) return push(chunk, encoding);
    push(chunk.subarray(0, chunk.length - (seen - limit) + 1), encoding);
    return false;
  };
  return false;
}

export function createFrontDoor({
  api,
  next,
  trustedProxies,
  signInLimiter,
  requestBudgetMs,
}: FrontDoorOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { httpDuration } = metrics();
  return (req, res) => {
    const started = process.hrtime.bigint();
    markArrival(req, started);
    const pathname = (req.url ?? '/').split('?')[0];
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      httpDuration.observe({ method: methodLabel(req.method), route: routeLabel(pathname, api.routeOf), status: String(res.statusCode) }, seconds);
      if (!req.complete && carriesBody(req)) lingeringClose(req);
    });
    if (arrivedOverHttps((req.socket as TLSSocket).encrypted === true, req.socket.remoteAddress, req.headers['x-forwarded-proto'], trustedProxies)) {
      res.setHeader('strict-transport-security', HSTS);
    }
    if (boundBody(req, res, pathname, MAX_BODY_BYTES)) return;
    if (pathname.startsWith('/api/auth/')) {
      const client = clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trustedProxies);
      req.headers[CLIENT_ADDRESS_HEADER] = client;
      if (req.method === 'POST' && pathname === '/api/auth/callback/credentials') {
        const verdict = signInLimiter.take(client);
        if (!verdict.ok) {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(verdict.retryAfterSeconds) });
          res.end(JSON.stringify({ error: { code: 'RateLimited', message: `too many sign-in attempts; retry in ${verdict.retryAfterSeconds} s` } }));
          return;
        }
      }
    }
    if (api.serves(pathname)) {
      void api.handle(req, res);
      return;
    }
    const policy = contentSecurityPolicy(scriptNonce());
    req.headers['content-security-policy'] = policy;
    delete req.headers['content-security-policy-report-only'];
    res.setHeader('content-security-policy', policy);
    const served = isPageRender(pathname) ? serveWithinDeadline(res, requestBudgetMs, () => next(req, res)) : next(req, res);
    served.catch((err) => {
      logError('request', err);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'Internal', message: 'internal error' } }));
    });
  };
}
