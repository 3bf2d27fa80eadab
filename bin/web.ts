/**
 * One web process: a thin Node HTTP server that records request latency, serves REST v1 itself
 * (server/http/api-server.ts) and hands everything else (pages, tRPC, auth, health) to Next.js.
 * Needs DATABASE_URL; several may run against one database. An invalid environment stops it at
 * once with the variable named (server/env.ts).
 */
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import next from 'next';
import { configureDbPool, getDbHandle } from '../db/client';
import { resolveAuthSecret } from '../server/auth/secret';
import { dbPoolSettings, envOrExit } from '../server/env';
import { closeChangeHub } from '../server/live/hub';
import { log, logError } from '../server/observability/log';
import { metrics, routeLabel } from '../server/observability/metrics';
import { createApiServer } from '../server/http/api-server';
import { CLIENT_ADDRESS_HEADER, clientAddress, parseTrustedProxies } from '../server/http/client-address';
import { limiter } from '../server/http/rate-limit';
import { sendHeartbeats } from './lib/supervisor';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

async function main() {
  const e = envOrExit('web');
  sendHeartbeats();
  configureDbPool(dbPoolSettings('web'));
  await resolveAuthSecret(getDbHandle().db);
  const app = next({ dev: false, dir: root, hostname: e.HOSTNAME, port: e.PORT });
  await app.prepare();
  const handle = app.getRequestHandler();
  const api = await createApiServer(root);
  const { httpDuration } = metrics();
  const signInLimiter = limiter('signIn');
  const trustedProxies = parseTrustedProxies(e.TRUSTED_PROXIES);
  const server = http.createServer((req, res) => {
    const started = process.hrtime.bigint();
    // Auth requests learn the client address from here alone (sign-in throttling, the session's
    // recorded address): the socket's peer, or X-Forwarded-For through TRUSTED_PROXIES only. A value
    // the client sent in the header is overwritten. A flood of sign-in posts from one client is cut
    // here before any password hashing; the real throttling is per (client, account) and per client
    // in server/tenancy/sign-in.ts.
    if (req.url?.startsWith('/api/auth/')) {
      const client = clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trustedProxies);
      req.headers[CLIENT_ADDRESS_HEADER] = client;
      if (req.method === 'POST' && req.url.startsWith('/api/auth/callback/credentials')) {
        const verdict = signInLimiter.take(client);
        if (!verdict.ok) {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(verdict.retryAfterSeconds) });
          res.end(JSON.stringify({ error: { code: 'RateLimited', message: `too many sign-in attempts; retry in ${verdict.retryAfterSeconds} s` } }));
          return;
        }
      }
    }
    const pathname = (req.url ?? '/').split('?')[0];
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      httpDuration.observe({ method: req.method ?? 'GET', route: routeLabel(pathname), status: String(res.statusCode) }, seconds);
    });
    // REST v1 (machine clients: the CNI plugin, automation) skips Next's pipeline (server/http/api-server.ts).
    if (api.serves(pathname)) {
      void api.handle(req, res);
      return;
    }
    handle(req, res).catch((err) => {
      logError('request', err);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'Internal', message: 'internal error' } }));
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(e.PORT, e.HOSTNAME, resolve));
  log('info', `web listening on http://${e.HOSTNAME === '0.0.0.0' ? 'localhost' : e.HOSTNAME}:${e.PORT}`);
  process.send?.({ type: 'ready', role: 'web' });

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log('info', 'web stopping');
    // Live-update streams would hold their connections open for minutes: end them first, and cut
    // whatever is still open (e.g. the QA log relay) after a grace period.
    await closeChangeHub().catch(() => {});
    server.closeIdleConnections?.();
    const grace = setTimeout(() => server.closeAllConnections?.(), 5_000);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearTimeout(grace);
    server.closeAllConnections?.();
    await getDbHandle().close().catch(() => {});
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // Under a supervisor: when it goes away, so do we (no orphans).
  process.on('disconnect', stop);
  setTimeout(() => {}, 0);
}

main().catch((err) => {
  logError('web failed to start', err);
  process.exit(1);
});
