/**
 * The BUILT `meridian-ipam` against the REAL lease API: the route
 * `/api/v1/projects/{project}/clusters/{cluster}/cni/{command}` (server/cni/rest.ts) on this run's
 * test database, served in-process by the web process's REST server (no Next build needed). Every command and the
 * server-side error paths (token rejected or read-only, unknown cluster, CHECK mismatch and no
 * lease, GC, STATUS and ADD on an exhausted network), then the Debian bridge suite through the
 * same server (root only; skipped otherwise).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createCluster, deleteCluster } from '@/server/cni/clusters';
import { createNetwork } from '@/server/ipam/networks';
import { createApiToken } from '@/server/tenancy/tokens';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { bridgeSuite } from './test-support/bridge-suite';
import { pluginExecutable } from './test-support/plugin-executable';
import { type PluginRun, runPlugin } from './test-support/run-plugin';
import { serveLeaseApi } from './test-support/serve-lease-api';
import { overrideEnv } from '@/server/env';

const actor = systemActor('test');
let api: Awaited<ReturnType<typeof serveLeaseApi>> | undefined;
let serverUrl = '';
let dir = '';
let plugin = '';
let projectSlug = '';
let projectId = '';
const tokens: Record<'cluster' | 'tiny' | 'viewer', string> = { cluster: '', tiny: '', viewer: '' };
const tokenFiles: Record<string, string> = {};

beforeAll(async () => {
  const { db } = testDb();
  const { project } = await makeProject(db);
  projectSlug = project.slug;
  projectId = project.id;
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '10.88.0.0/22' }] }, actor);
  await createNetwork(db, project.id, { name: 'tiny', cidrs: [{ cidr: '10.89.0.0/28' }] }, actor);
  tokens.cluster = (await createCluster(db, project.id, { name: 'k1', network: 'vpc', issueToken: true }, actor)).token!.secret;
  tokens.tiny = (await createCluster(db, project.id, { name: 'tiny', network: 'tiny', nodeBlockPrefixV4: 28, issueToken: true }, actor)).token!.secret;
  tokens.viewer = (await createApiToken(db, { projectId: project.id, name: 'ro', clusterName: 'k1', role: 'viewer' }, actor)).secret;
  api = await serveLeaseApi();
  serverUrl = api.url;
  dir = await mkdtemp(path.join(os.tmpdir(), 'meridian-ipam-real-'));
  plugin = await pluginExecutable(path.join(dir, 'bin'));
  for (const [k, v] of Object.entries(tokens)) {
    tokenFiles[k] = path.join(dir, `token-${k}`);
    await writeFile(tokenFiles[k], `${v}\n`, { mode: 0o600 });
  }
  tokenFiles.wrong = path.join(dir, 'token-wrong');
  await writeFile(tokenFiles.wrong, 'mrd_not_a_real_token_000000000000');
}, 120_000);

afterAll(async () => {
  await api?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function conf(o: { cniVersion?: string; name?: string; cluster?: string; token?: string; project?: string | null; extra?: Record<string, unknown> } = {}) {
  const project = o.project === undefined ? projectSlug : o.project;
  return {
    cniVersion: o.cniVersion ?? '1.1.0',
    name: o.name ?? 'podnet',
    type: 'bridge',
    ipam: {
      type: 'meridian-ipam',
      serverUrl,
      tokenFile: tokenFiles[o.token ?? 'cluster'],
      network: 'vpc',
      cluster: o.cluster ?? 'k1',
      ...(project === null ? {} : { project }),
      timeoutMs: 5000,
    },
    ...o.extra,
  };
}

function cni(command: string, containerId: string, c: object): Promise<PluginRun> {
  return runPlugin(plugin, {
    env: {
      CNI_COMMAND: command,
      CNI_CONTAINERID: containerId,
      CNI_NETNS: '/var/run/netns/x',
      CNI_IFNAME: 'eth0',
      CNI_ARGS: 'K8S_POD_NAMESPACE=shop;K8S_POD_NAME=web-1',
      MERIDIAN_NODE_NAME: 'node-1',
    },
    stdin: JSON.stringify(c),
  });
}

const code = (r: PluginRun) => (r.status === 0 ? 0 : (r.json?.code as number | undefined));

describe('meridian-ipam against the real lease API', () => {
  it('ADD: the node block prefix and gateway, the request version echoed, idempotent', async () => {
    const a = await cni('ADD', 'real1', conf({ cniVersion: '1.0.0' }));
    expect(a.status, a.stdout + a.stderr).toBe(0);
    expect(a.json).toMatchObject({ cniVersion: '1.0.0', routes: [], dns: {} });
    const ips = a.json!.ips as { address: string; gateway: string }[];
    expect(ips).toHaveLength(1);
    expect(ips[0].address).toMatch(/^10\.88\.\d+\.\d+\/26$/);
    expect(ips[0].gateway).toMatch(/^10\.88\.\d+\.\d+$/);
    const b = await cni('ADD', 'real1', conf({ cniVersion: '1.1.0' }));
    expect(b.json!.cniVersion).toBe('1.1.0');
    expect(b.json!.ips).toEqual(ips);
  });

  it('CHECK: ok with the ADD result; 103 on a mismatch; 104 without a lease', async () => {
    const a = await cni('ADD', 'real2', conf());
    const ok = await cni('CHECK', 'real2', conf({ extra: { prevResult: a.json } }));
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toBe('');
    expect(code(await cni('CHECK', 'real2', conf({ extra: { prevResult: { cniVersion: '1.1.0', ips: [{ address: '10.88.3.250/26' }] } } })))).toBe(103);
    expect(code(await cni('CHECK', 'real-none', conf({ extra: { prevResult: a.json } })))).toBe(104);
  });

  it('ipam.project: optional (the token names the project); given and not the token’s → 7', async () => {
    const a = await cni('ADD', 'real-noproject', conf({ project: null }));
    expect(a.status, a.stdout + a.stderr).toBe(0);
    expect(code(await cni('CHECK', 'real-noproject', conf({ project: null, extra: { prevResult: a.json } })))).toBe(0);
    const wrong = await cni('ADD', 'real-wrongproject', conf({ project: 'not-this-one' }));
    expect(code(wrong)).toBe(7);
    expect(wrong.json!.msg).toContain('ipam.project');
    expect(code(await cni('DEL', 'real-noproject', conf({ project: null })))).toBe(0);
  });

  it('after the cluster is deleted: DEL of its pods succeeds (with or without ipam.project), ADD/CHECK/STATUS are refused (101, 50)', async () => {
    const { db } = testDb();
    const created = await createCluster(db, projectId, { name: 'doomed', network: 'vpc', issueToken: true }, actor);
    tokenFiles.doomed = path.join(dir, 'token-doomed');
    await writeFile(tokenFiles.doomed, `${created.token!.secret}\n`, { mode: 0o600 });
    const doomed = (o: { project?: string | null; extra?: Record<string, unknown> } = {}) => conf({ cluster: 'doomed', token: 'doomed', ...o });
    const a = await cni('ADD', 'real-doomed', doomed());
    expect(a.status, a.stdout + a.stderr).toBe(0);
    await deleteCluster(db, projectId, 'doomed', actor);
    for (const c of [doomed(), doomed({ project: null })]) {
      const d = await cni('DEL', 'real-doomed', c);
      expect(d.status, d.stdout + d.stderr).toBe(0);
      expect(d.stdout).toBe('');
    }
    expect(code(await cni('ADD', 'real-doomed2', doomed()))).toBe(101);
    expect(code(await cni('CHECK', 'real-doomed', doomed({ extra: { prevResult: a.json } })))).toBe(101);
    expect(code(await cni('STATUS', 'real-doomed', doomed()))).toBe(50);
  });

  it('DEL twice succeeds and releases the lease', async () => {
    const a = await cni('ADD', 'real3', conf());
    expect(a.status).toBe(0);
    for (let i = 0; i < 2; i++) {
      const d = await cni('DEL', 'real3', conf());
      expect(d.status, d.stdout + d.stderr).toBe(0);
      expect(d.stdout).toBe('');
    }
    expect(code(await cni('CHECK', 'real3', conf({ extra: { prevResult: a.json } })))).toBe(104);
  });

  it('GC releases the leases missing from cni.dev/valid-attachments (grace period 0)', async () => {
    const restore = overrideEnv({ CNI_GC_GRACE_SECONDS: '0' }); // read by the in-process server at each GC
    try {
      const net = 'gcnet';
      for (const id of ['gc-keep', 'gc-drop']) expect((await cni('ADD', id, conf({ name: net }))).status).toBe(0);
      const gc = await cni('GC', 'unused', conf({ name: net, extra: { 'cni.dev/valid-attachments': [{ containerID: 'gc-keep', ifname: 'eth0' }] } }));
      expect(gc.status, gc.stdout + gc.stderr).toBe(0);
      expect(gc.stderr).toContain('released=1');
      expect(code(await cni('CHECK', 'gc-drop', conf({ name: net, extra: { prevResult: { ips: [{ address: '10.88.0.9/26' }] } } })))).toBe(104);
      const keep = await cni('ADD', 'gc-keep', conf({ name: net }));
      expect(code(await cni('CHECK', 'gc-keep', conf({ name: net, extra: { prevResult: keep.json } })))).toBe(0);
    } finally {
      restore();
    }
  });

  it('STATUS ready; on an exhausted network ADD fails with 11 and STATUS with 50', async () => {
    expect(code(await cni('STATUS', 'x', conf()))).toBe(0);
    // tiny: a /28 network, one /28 node block: 13 pod addresses.
    const fills = await Promise.all(Array.from({ length: 13 }, (_, i) => cni('ADD', `tiny${i}`, conf({ cluster: 'tiny', token: 'tiny' }))));
    for (const f of fills) expect(f.status, f.stdout + f.stderr).toBe(0);
    expect(new Set(fills.map((f) => JSON.stringify(f.json!.ips))).size).toBe(13);
    const over = await cni('ADD', 'tiny-over', conf({ cluster: 'tiny', token: 'tiny' }));
    expect(code(over), over.stdout).toBe(11);
    expect(over.json!.msg).toContain('exhausted');
    const st = await cni('STATUS', 'x', conf({ cluster: 'tiny', token: 'tiny' }));
    expect(code(st), st.stdout).toBe(50);
  });

  it('token rejected → 101; read-only token → 102; unknown cluster → 7', async () => {
    expect(code(await cni('ADD', 'real4', conf({ token: 'wrong' })))).toBe(101);
    expect(code(await cni('ADD', 'real4', conf({ token: 'viewer' })))).toBe(102);
    const r = await cni('ADD', 'real4', conf({ cluster: 'nope' }));
    expect(code(r)).toBe(7);
    expect(r.json!.msg).toContain('ipam.cluster');
  });
});

bridgeSuite('meridian-ipam through the Debian bridge plugin (real lease API in-process)', () => ({
  serverUrl,
  token: tokens.cluster,
  project: projectSlug,
  cluster: 'k1',
}));
