import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { kubeKinds } from '@/server/api/kinds';
import { systemActor } from '@/server/audit/events';
import { createKubeHttpsServer } from '@/server/kube/https';
import { controlPlanePath, PLATFORM_PLANE_PATH } from '@/server/kube/server';
import { ensureLocalTls } from '@/server/kube/tls';
import { createApiToken, createOperatorToken, createUserToken } from '@/server/tenancy/tokens';
import { testDb } from './db';
import { makeProject, makeUser } from './fixtures';

/**
 * The Kubernetes API as the web process serves it (server/kube/https.ts, the local CA made under a
 * fresh DATA_DIR) on a loopback port, against this run's database, with a project and tokens.
 */
export async function startKubeServer() {
  const { db } = testDb();
  const actor = systemActor('test');
  const dir = mkdtempSync(path.join(tmpdir(), 'meridian-kube-'));
  const { project } = await makeProject(db);
  const { project: other } = await makeProject(db);
  const tls = await ensureLocalTls(path.join(dir, 'data'));
  const { server, stopWatching } = createKubeHttpsServer(kubeKinds, tls);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const token = async (projectId: string, role: 'editor' | 'viewer' | 'owner') =>
    (await createApiToken(db, { projectId, name: `kube-${role}`, role }, actor)).secret;
  const operatorUser = await makeUser(db, { platformRoles: ['operator'] });
  const ownerUser = await makeUser(db, { projectId: project.id, role: 'owner' });
  const caPem = readFileSync(tls.ca, 'utf8');
  const root = `${origin}${controlPlanePath(project.slug)}`;
  const tokens = {
    editor: await token(project.id, 'editor'),
    viewer: await token(project.id, 'viewer'),
    owner: await token(project.id, 'owner'),
    otherProject: await token(other.id, 'editor'),
    /** An operator's token: reads every project's plane, writes grants, and is the one token of the platform plane. */
    operator: (await createOperatorToken(db, { userId: operatorUser.id, name: 'kube-operator' }, actor)).secret,
    /** A project owner's user token. */
    ownerUser: (await createUserToken(db, { userId: ownerUser.id, name: 'kube-owner' }, actor)).secret,
  };
  const platformRoot = `${origin}${PLATFORM_PLANE_PATH}`;

  /** One request to the control plane (`path` under its root), answered as status, headers and parsed JSON. */
  function request(
    method: string,
    pathUnderRoot: string,
    options: { token?: string | null; body?: unknown; contentType?: string; accept?: string; platform?: boolean } = {},
  ) {
    const url = new URL((options.platform ? platformRoot : root) + pathUnderRoot);
    const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }>((resolve, reject) => {
      const req = https.request(
        url,
        {
          method,
          ca: caPem,
          headers: {
            ...(options.token === null ? {} : { authorization: `Bearer ${options.token ?? tokens.editor}` }),
            ...(payload !== undefined
              ? { 'content-type': options.contentType ?? 'application/json', 'content-length': String(Buffer.byteLength(payload)) }
              : {}),
            ...(options.accept ? { accept: options.accept } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  return {
    dir,
    tls,
    origin,
    root,
    platformRoot,
    caPem,
    other,
    project,
    tokens,
    request,
    async stop() {
      stopWatching();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
