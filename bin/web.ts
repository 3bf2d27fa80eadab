/**
 * One web process: a thin Node HTTP server (server/http/front-door.ts: request latency, security
 * headers, the client address) that serves REST v1 itself (server/http/api-server.ts) and hands
 * everything else (pages, tRPC, auth, health) to Next.js; and, on HTTPS_PORT, the Kubernetes API
 * (server/kube/server.ts) with the configured certificate or the local CA's (server/kube/tls.ts).
 * Needs DATABASE_URL; several may run against one database. An invalid environment stops it at
 * once with the variable named (server/env.ts).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import next from 'next';
import { configureDbPool, getDbHandle } from '../db/client';
import { resolveAuthSecret } from '../server/auth/secret';
import { dbPoolSettings, envOrExit } from '../server/env';
import { closeChangeHub } from '../server/live/hub';
import { log, logError } from '../server/observability/log';
import { apiTable } from '../server/api/routes';
import { createApiServer } from '../server/http/api-server';
import { parseTrustedProxies } from '../lib/trusted-proxies';
import { createFrontDoor } from '../server/http/front-door';
import { limiter } from '../server/http/rate-limit';
import { kubeKinds } from '../server/api/kinds';
import { createKubeHttpsServer } from '../server/kube/https';
import { resolveTls } from '../server/kube/tls';
import { publishKubeApi } from '../server/kube/endpoint';
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
  const api = createApiServer(apiTable);
  const server = http.createServer(
    createFrontDoor({
      api,
      next: handle,
      trustedProxies: parseTrustedProxies(e.TRUSTED_PROXIES),
      signInLimiter: limiter('signIn'),
      requestBudgetMs: e.DB_REQUEST_TIMEOUT_MS,
    }),
  );
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(e.PORT, e.HOSTNAME, resolve));
  log('info', `web listening on http://${e.HOSTNAME === '0.0.0.0' ? 'localhost' : e.HOSTNAME}:${e.PORT}`);
  const tls = e.HTTPS_PORT === 0 ? undefined : await resolveTls(e);
  const kube = tls && createKubeHttpsServer(kubeKinds, tls);
  if (kube && tls) {
    await new Promise<void>((resolve) => kube.server.listen(e.HTTPS_PORT, e.HOSTNAME, resolve));
    publishKubeApi({ httpsPort: e.HTTPS_PORT, caPem: readFileSync(tls.ca, 'utf8') });
    log('info', `Kubernetes API listening on https://${e.HOSTNAME === '0.0.0.0' ? 'localhost' : e.HOSTNAME}:${e.HTTPS_PORT}`);
  }
  process.send?.({ type: 'ready', role: 'web' });

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log('info', 'web stopping');
    // Live-update streams would hold their connections open for minutes: end them first, and cut
    // whatever is still open (e.g. the QA log relay) after a grace period.
    await closeChangeHub().catch(() => {});
    kube?.stopWatching();
    server.closeIdleConnections?.();
    kube?.server.closeIdleConnections?.();
    const grace = setTimeout(() => {
      server.closeAllConnections?.();
      kube?.server.closeAllConnections?.();
    }, 5_000);
    await Promise.all([
      new Promise<void>((resolve) => server.close(() => resolve())),
      new Promise<void>((resolve) => (kube ? kube.server.close(() => resolve()) : resolve())),
    ]);
    clearTimeout(grace);
    server.closeAllConnections?.();
    kube?.server.closeAllConnections?.();
    await getDbHandle()
      .close()
      .catch(() => {});
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
