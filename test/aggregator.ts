import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import type { Db } from '@/db/client';
import { parseEnv, type EnvName, type RawEnv } from '@/lib/env-schema';
import { overrideEnv } from '@/server/env';
import { kubeKinds } from '@/server/api/kinds';
import { aggregatedConfigFromEnv } from '@/server/kube/aggregated';
import { databaseProbe } from '@/server/kube/availability';
import { createKubeHttpsServer } from '@/server/kube/https';
import { ensureLocalTls } from '@/server/kube/tls';
import { makeCa, type Pem } from './pki';

/**
 * A test harness acting as an aggregator (Milo's or kube-apiserver's) in front of Meridian's HTTPS
 * listener: a requestheader CA and the front proxy's client certificate (CN `front-proxy-client`),
 * certificates that must not count (another CA's, a CN not allowed), and a webhook server run by
 * the test that answers SubjectAccessReviews and TokenReviews by rule, records every review, and
 * can go down and come back.
 */

/** The token Meridian presents to the webhook (the kubeconfig's user). */
export const WEBHOOK_CALLER_TOKEN = 'webhook-caller-token-0123456789';

export type Review = { kind: 'SubjectAccessReview' | 'TokenReview'; spec: any; authorization?: string };

/** A webhook server (HTTPS, its own CA) answering reviews with `decide`; `reviews` lists what it was asked. */
export async function startWebhookServer(decide: { authorize: (spec: any) => { allowed: boolean; reason?: string }; authenticate: (token: string) => any }) {
  const ca = await makeCa('webhook CA');
  const pair = await ca.issue('server', 'webhook', ['127.0.0.1']);
  const reviews: Review[] = [];
  let failWith: number | undefined;
  const sockets = new Set<Duplex>();
  const server = https.createServer({ cert: pair.cert, key: pair.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      reviews.push({ kind: body.kind, spec: body.spec, authorization: req.headers.authorization });
      if (failWith) {
        res.writeHead(failWith, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      const status = body.kind === 'TokenReview' ? decide.authenticate(body.spec.token) : decide.authorize(body.spec);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: body.apiVersion, kind: body.kind, status }));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  /** A kubeconfig for the webhook at `pathname`, its caller's token inline or (`tokenFile`) in a file. */
  const kubeconfig = (pathname: string, tokenFile?: string) =>
    yaml.dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'webhook', cluster: { server: `https://127.0.0.1:${port}${pathname}`, 'certificate-authority-data': Buffer.from(ca.cert).toString('base64') } },
      ],
      users: [{ name: 'meridian', user: tokenFile ? { tokenFile } : { token: WEBHOOK_CALLER_TOKEN } }],
      contexts: [{ name: 'webhook', context: { cluster: 'webhook', user: 'meridian' } }],
      'current-context': 'webhook',
    });
  return {
    reviews,
    kubeconfig,
    /** Answers every review with this HTTP status (an authorizer in trouble); undefined: answers again. */
    failWith(status: number | undefined) {
      failWith = status;
    },
    /** Stops listening and drops every connection: the webhook cannot be reached. */
    async down() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
    /** Listens again on the same port. */
    async up() {
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
    },
  };
}

export interface Identity {
  user?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The front-proxy headers of `who`, as the aggregator writes them (extra keys percent-encoded). */
export function proxyHeaders(who: Identity): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  if (who.user) headers['X-Remote-User'] = who.user;
  if (who.groups) headers['X-Remote-Group'] = who.groups;
  for (const [k, v] of Object.entries(who.extra ?? {})) headers[`X-Remote-Extra-${encodeURIComponent(k)}`] = v;
  return headers;
}

/** Milo's extras for a request made in `project`'s control plane. */
export const inProject = (project: string) => ({ 'iam.miloapis.com/parent-type': ['Project'], 'iam.miloapis.com/parent-name': [project] });

/**
 * Meridian's HTTPS listener configured as an extension server, from environment values as a
 * deployment gives them (REQUESTHEADER_*, AUTHORIZATION_*, AUTHENTICATION_*), against `db`.
 * The aggregator's client certificates come with it.
 */
export async function startAggregated(options: {
  env?: RawEnv;
  db: () => Db;
  webhook?: { kubeconfig: (p: string) => string };
  /** Configure through the process environment (overrideEnv), as bin/web.ts starts the listener, instead of handing the configuration over. */
  fromProcessEnv?: boolean;
}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'meridian-aggr-'));
  const frontProxyCa = await makeCa('front-proxy-ca');
  const otherCa = await makeCa('some other CA');
  const clients = {
    proxy: await frontProxyCa.issue('client', 'front-proxy-client'),
    otherCa: await otherCa.issue('client', 'front-proxy-client'),
    wrongName: await frontProxyCa.issue('client', 'someone-else'),
  };
  const caFile = path.join(dir, 'front-proxy-ca.crt');
  writeFileSync(caFile, frontProxyCa.cert);
  const files: RawEnv = { REQUESTHEADER_CLIENT_CA_FILE: caFile, REQUESTHEADER_ALLOWED_NAMES: 'front-proxy-client' };
  if (options.webhook) {
    writeFileSync(path.join(dir, 'authz.kubeconfig'), options.webhook.kubeconfig('/authorize'));
    writeFileSync(path.join(dir, 'authn.kubeconfig'), options.webhook.kubeconfig('/authenticate'));
    files.AUTHORIZATION_WEBHOOK_CONFIG_FILE = path.join(dir, 'authz.kubeconfig');
    files.AUTHENTICATION_WEBHOOK_CONFIG_FILE = path.join(dir, 'authn.kubeconfig');
  }
  const values = { ...files, AUTHORIZATION_WEBHOOK_TIMEOUT: '2s', ...options.env };
  const e = parseEnv(values);
  const restoreEnv = options.fromProcessEnv ? overrideEnv(values as Partial<Record<EnvName, string>>) : () => {};
  const aggregated = options.fromProcessEnv ? undefined : aggregatedConfigFromEnv(e, databaseProbe(options.db, { budgetMs: 1_000, reuseMs: 200 }));
  const tls = await ensureLocalTls(path.join(dir, 'data'));
  const { server, stopWatching } = options.fromProcessEnv
    ? createKubeHttpsServer(kubeKinds, tls, { db: options.db })
    : createKubeHttpsServer(kubeKinds, tls, { db: options.db, disabledModules: e.MERIDIAN_DISABLED_MODULES, aggregated, requestHeaderCaFile: caFile });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const serverCa = readFileSync(tls.ca, 'utf8');

  /** One request to the listener at `pathname`: with a client certificate (`cert`), front-proxy headers (`as`), a bearer token. */
  function request(
    method: string,
    pathname: string,
    o: { cert?: Pem; as?: Identity; token?: string; body?: unknown; contentType?: string; accept?: string } = {},
  ) {
    const payload = o.body === undefined ? undefined : JSON.stringify(o.body);
    return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string; body: any }>((resolve, reject) => {
      const req = https.request(
        { host: '127.0.0.1', port, path: pathname, method, ca: serverCa, agent: false, ...(o.cert ? { cert: o.cert.cert, key: o.cert.key } : {}) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown;
            try {
              body = JSON.parse(text);
            } catch {
              body = undefined;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
          });
        },
      );
      for (const [k, v] of Object.entries(o.as ? proxyHeaders(o.as) : {})) req.setHeader(k, v);
      if (o.token) req.setHeader('authorization', `Bearer ${o.token}`);
      if (o.accept) req.setHeader('accept', o.accept);
      if (payload !== undefined) {
        req.setHeader('content-type', o.contentType ?? 'application/json');
        req.setHeader('content-length', String(Buffer.byteLength(payload)));
      }
      req.on('error', reject);
      req.end(payload);
    });
  }

  return {
    clients,
    /** The requestheader CA's file, as REQUESTHEADER_CLIENT_CA_FILE names it (a test may rotate it). */
    frontProxyCaFile: caFile,
    request,
    async stop() {
      stopWatching();
      restoreEnv();
      aggregated?.authorizer?.close();
      aggregated?.tokenReviewer?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
