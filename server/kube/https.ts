import https from 'node:https';
import { logError } from '@/server/observability/log';
import type { KindDeclaration } from './declare';
import { createKubeServer } from './server';
import { readPair, watchTls, type TlsFiles } from './tls';

/**
 * The HTTPS server of the Kubernetes API (the web process's second listener, on HTTPS_PORT):
 * every project's control plane; any other path answers a `kind: Status` 404. The certificate is
 * swapped in place when its files change (no restart, no dropped connection).
 */
export function createKubeHttpsServer(kinds: readonly KindDeclaration[], tls: TlsFiles): { server: https.Server; stopWatching: () => void } {
  const kube = createKubeServer(kinds);
  const server = https.createServer({ ...readPair(tls), minVersion: 'TLSv1.2' }, (req, res) => {
    kube.handle(req, res).catch((err) => {
      logError('kube', err);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'InternalError', code: 500, message: 'internal error' }),
      );
    });
  });
  server.keepAliveTimeout = 65_000;
  const stopWatching = watchTls(tls, (pair) => server.setSecureContext({ ...pair, minVersion: 'TLSv1.2' }));
  return { server, stopWatching };
}
