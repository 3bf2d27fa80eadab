import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { SecureContextOptions } from 'node:tls';
import { env } from '@/server/env';
import { getDb } from '@/db/client';
import { logError } from '@/server/observability/log';
import { readinessCheckBudgetMs } from '@/server/observability/readiness';
import { aggregatedConfigFromEnv, createRootHandler, type AggregatedConfig } from './aggregated';
import { databaseProbe } from './availability';
import type { KindDeclaration } from './declare';
import { createKubeServer, type KubeServerOptions } from './server';
import { readPair, watchTls, type TlsFiles } from './tls';

/**
 * The HTTPS server of the Kubernetes API (the web process's second listener, on HTTPS_PORT):
 * every project's control plane, and at the root the paths an aggregator forwards, with health
 * (aggregated.ts). The certificate is swapped in place when its files change (no restart, no
 * dropped connection). With a requestheader CA (REQUESTHEADER_CLIENT_CA_FILE), clients are asked
 * for a certificate, verified against that CA only: one that chains to it is the front proxy.
 */
export interface KubeHttpsOptions extends Pick<KubeServerOptions, 'db' | 'disabledModules'> {
  /** The root's configuration (the environment's unless given). */
  aggregated?: AggregatedConfig;
  /** The requestheader CA's file (REQUESTHEADER_CLIENT_CA_FILE unless given); reloaded with the certificate. */
  requestHeaderCaFile?: string;
}

export function createKubeHttpsServer(
  kinds: readonly KindDeclaration[],
  tls: TlsFiles,
  options: KubeHttpsOptions = {},
): { server: https.Server; stopWatching: () => void } {
  const db = options.db ?? getDb;
  const aggregated = options.aggregated ?? aggregatedConfigFromEnv(env(), databaseProbe(db, { budgetMs: readinessCheckBudgetMs(env().DB_REQUEST_TIMEOUT_MS) }));
  const root = createRootHandler(aggregated);
  const kube = createKubeServer(kinds, { db, disabledModules: options.disabledModules, probe: aggregated.probe, root: root.handle });
  const caFile = aggregated.frontProxy ? (options.requestHeaderCaFile ?? env().REQUESTHEADER_CLIENT_CA_FILE) : undefined;
  const context = (pair: { cert: Buffer; key: Buffer }): SecureContextOptions => ({
    ...pair,
    minVersion: 'TLSv1.2',
    ...(caFile ? { ca: readFileSync(caFile) } : {}),
  });
  const server = https.createServer({ ...context(readPair(tls)), requestCert: Boolean(caFile), rejectUnauthorized: false }, (req, res) => {
    kube.handle(req, res).catch((err) => {
      logError('kube', err);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'InternalError', code: 500, message: 'internal error' }),
      );
    });
  });
  server.keepAliveTimeout = 65_000;
  const stopWatching = watchTls(caFile ? { ...tls, extra: [caFile] } : tls, (pair) => server.setSecureContext(context(pair)));
  return { server, stopWatching };
}
