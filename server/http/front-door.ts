import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BlockList } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { logError } from '@/server/observability/log';
import { methodLabel, metrics, routeLabel } from '@/server/observability/metrics';
import type { ApiServer } from './api-server';
import { arrivedOverHttps, CLIENT_ADDRESS_HEADER, clientAddress } from './client-address';
import type { RateLimiter } from './rate-limit';
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
 * - closes a connection whose request body was left half-read once the answer is out;
 * - puts a Content-Security-Policy with a fresh script nonce on the request and its response for
 *   everything Next serves: Next reads the nonce from the request's policy and puts it on its
 *   scripts (a policy a client sent is overwritten);
 * - renders pages within the request deadline: a page the database cannot serve in time is a 503
 *   page with Retry-After, never a hang (page-deadline.ts).
 */
/** How long a connection whose request was left half-read stays open, unread, after the answer. */
const LINGER_MS = 5_000;

/**
 * Ends a connection whose request body a handler stopped reading (a body over the limit, refused
 * with 413): the rest is never read, and the connection cannot carry another request. Half-closing
 * first lets the client read the answer; closing at once with unread data would reset the
 * connection, and the client could lose the answer to the reset.
 */
function lingeringClose(req: IncomingMessage) {
  const socket = req.socket;
  socket.end();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
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
      if (!req.complete && req.readableDidRead) lingeringClose(req);
    });
    if (arrivedOverHttps((req.socket as TLSSocket).encrypted === true, req.socket.remoteAddress, req.headers['x-forwarded-proto'], trustedProxies)) {
      res.setHeader('strict-transport-security', HSTS);
    }
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
