import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { kubeKinds } from '@/server/api/kinds';
import { systemActor } from '@/server/audit/events';
import { createApiToken } from '@/server/tenancy/tokens';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { createKubeHttpsServer } from './https';
import { kubeconfig } from './kubeconfig';
import { ensureLocalTls } from './tls';
import { readFileSync } from 'node:fs';

/**
 * Stock kubectl (/usr/bin/kubectl, Debian's kubernetes-client 1.32) against the Kubernetes API
 * served over HTTPS by the web process's server (server/kube/https.ts) on a real database, through
 * a kubeconfig as `meridian kubeconfig` writes it.
 */

const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), 'meridian-kubectl-'));
let stop: () => Promise<void>;
let config: string;
let viewerConfig: string;
let otherConfig: string;
let slug: string;

async function kubectl(args: string[], options: { config?: string; input?: string } = {}) {
  const child = run('/usr/bin/kubectl', args, { env: { ...process.env, KUBECONFIG: options.config ?? config, HOME: dir }, encoding: 'utf8', timeout: 60_000 });
  if (options.input !== undefined) {
    child.child.stdin?.end(options.input);
  }
  return child;
}

/** kubectl's failure: its exit code and what it said. */
async function kubectlFails(args: string[], options: { config?: string; input?: string } = {}) {
  try {
    const out = await kubectl(args, options);
    throw new Error(`kubectl ${args.join(' ')} succeeded: ${out.stdout}`);
  } catch (e) {
    const err = e as { code?: number; stderr?: string; stdout?: string };
    if (typeof err.code !== 'number') throw e;
    return { code: err.code, stderr: err.stderr ?? '', stdout: err.stdout ?? '' };
  }
}

beforeAll(async () => {
  const { db } = testDb();
  const actor = systemActor('test');
  const { project } = await makeProject(db);
  const { project: other } = await makeProject(db);
  slug = project.slug;
  const tls = await ensureLocalTls(path.join(dir, 'data'));
  const { server, stopWatching } = createKubeHttpsServer(kubeKinds, tls);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const caPem = readFileSync(tls.ca, 'utf8');
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const token = async (projectId: string, role: 'editor' | 'viewer') => (await createApiToken(db, { projectId, name: `kubectl-${role}`, role }, actor)).secret;
  config = write('editor.kubeconfig', kubeconfig({ project: slug, origin, caPem, token: await token(project.id, 'editor') }));
  viewerConfig = write('viewer.kubeconfig', kubeconfig({ project: slug, origin, caPem, token: await token(project.id, 'viewer') }));
  // A token of another project, pointed at this project's control plane.
  otherConfig = write('other.kubeconfig', kubeconfig({ project: slug, origin, caPem, token: await token(other.id, 'editor') }));
  stop = async () => {
    stopWatching();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
});

afterAll(async () => {
  await stop?.();
  rmSync(dir, { recursive: true, force: true });
});

describe('kubectl', () => {
  test('api-resources lists the IPAM kinds with their short names', async () => {
    const { stdout } = await kubectl(['api-resources']);
    expect(stdout).toMatch(/ipclaims\s+ipc\s+ipam\.miloapis\.com\/v1alpha1\s+true\s+IPClaim/);
    expect(stdout).toMatch(/networks\s+net\s+ipam\.miloapis\.com\/v1alpha1\s+true\s+Network/);
    expect(stdout).toMatch(/namespaces\s+ns\s+v1\s+false\s+Namespace/);
  });
});
