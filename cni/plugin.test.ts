/**
 * Protocol tests of the BUILT `meridian-ipam` executable: each test runs it as a child process
 * with CNI_* variables and the network config on stdin, exactly as a runtime (or the bridge
 * plugin) does, and checks stdout / exit status / stderr.
 *
 * The server here is a TEST DOUBLE (cni/test-support/fake-lease-server.ts): a real HTTP server
 * implementing the lease REST contract in memory, so these tests pin the plugin's side of the
 * protocol. The real server and the real Debian bridge plugin are exercised in
 * cni/cni-bridge.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@/test/global-setup';
import { FakeLeaseServer } from './test-support/fake-lease-server';
import { pluginExecutable } from './test-support/plugin-executable';
import { type PluginRun, runPlugin } from './test-support/run-plugin';

const TOKEN = 'mrd_tok_SECRET_7f3a9c2e51d84b06';
const PROJECT = 'acme';
const CLUSTER = 'k8s-prod';

let dir: string;
let plugin: string;
let tokenFile: string;
let server: FakeLeaseServer;
/** Every run, to check globally that stdout held only JSON and the token never leaked. */
const runs: PluginRun[] = [];

interface ConfOptions {
  cniVersion?: string;
  name?: string;
  ipam?: Record<string, unknown>;
  extra?: Record<string, unknown>;
}

function netconf(o: ConfOptions = {}): Record<string, unknown> {
  return {
    cniVersion: o.cniVersion ?? '1.0.0',
    name: o.name ?? 'pod-net',
    type: 'bridge',
    ipam: {
      type: 'meridian-ipam',
      serverUrl: server.url,
      tokenFile,
      network: 'vpc-main',
      cluster: CLUSTER,
      project: PROJECT,
      timeoutMs: 3000,
      ...o.ipam,
    },
    ...o.extra,
  };
}

let seq = 0;
const cid = () => `c${Date.now().toString(36)}${(seq++).toString(36)}abcdef0123`;

async function cni(command: string | undefined, conf: Record<string, unknown> | string | undefined, env: Record<string, string | undefined> = {}) {
  const r = await runPlugin(plugin, {
    env: {
      CNI_COMMAND: command,
      CNI_CONTAINERID: 'c0ffee0000000000000000000000000000000000000000000000000000000001',
      CNI_NETNS: '/var/run/netns/test',
      CNI_IFNAME: 'eth0',
      CNI_PATH: '/opt/cni/bin',
      CNI_ARGS: 'IgnoreUnknown=1;K8S_POD_NAMESPACE=shop;K8S_POD_NAME=web-7d4f;K8S_POD_INFRA_CONTAINER_ID=abc',
      MERIDIAN_NODE_NAME: 'node-a1',
      ...env,
    },
    stdin: conf === undefined ? '' : typeof conf === 'string' ? conf : JSON.stringify(conf),
  });
  runs.push(r);
  return r;
}

function expectError(r: PluginRun, code: number) {
  expect(r.status, r.stdout + r.stderr).not.toBe(0);
  expect(r.json, 'an error JSON on stdout').toBeDefined();
  expect(r.json!.code, JSON.stringify(r.json)).toBe(code);
  expect(typeof r.json!.msg).toBe('string');
  expect(typeof r.json!.cniVersion).toBe('string');
}

function expectSuccessNoOutput(r: PluginRun) {
  expect(r.status, r.stdout + r.stderr).toBe(0);
  expect(r.stdout).toBe('');
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'meridian-ipam-test-'));
  plugin = await pluginExecutable(path.join(dir, 'bin'));
  tokenFile = path.join(dir, 'token');
  await writeFile(tokenFile, `  ${TOKEN}\n`, { mode: 0o600 });
  server = new FakeLeaseServer({ token: TOKEN, project: PROJECT, cluster: CLUSTER });
  await server.start();
});

afterEach(() => {
  server.fault = 'none';
  server.exhausted = false;
});

afterAll(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('VERSION', () => {
  it('prints the supported versions and exits 0', async () => {
    const r = await cni('VERSION', undefined, { CNI_CONTAINERID: undefined, CNI_NETNS: undefined, CNI_IFNAME: undefined });
    expect(r.status).toBe(0);
    expect(r.json).toEqual({ cniVersion: '1.1.0', supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] });
  });

  it.each([
    [{ cniVersion: '1.0.0' }, '1.0.0'],
    [{ cniVersion: '0.3.1' }, '0.3.1'],
    [{ cniVersion: '1.1.0', name: 'x' }, '1.1.0'],
    // Spec: the version given on input, supported or not (the runtime compares it with supportedVersions).
    [{ cniVersion: '0.2.0' }, '0.2.0'],
    [{}, '1.1.0'],
    ['not json', '1.1.0'],
  ])('answers the cniVersion it was given (%j → %s)', async (stdin, version) => {
    const r = await cni('VERSION', stdin);
    expect(r.status).toBe(0);
    expect(r.json).toEqual({ cniVersion: version, supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] });
  });
});

describe('ipam.project', () => {
  it('may be left out: the path names the token’s project as "-"', async () => {
    const conf = netconf();
    delete (conf.ipam as Record<string, unknown>).project;
    const r = await cni('ADD', conf, { CNI_CONTAINERID: cid() });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(server.requests.at(-1)!.path).toBe(`/api/v1/projects/-/clusters/${CLUSTER}/cni/add`);
  });

  it('given and not the token’s → 7 naming ipam.project', async () => {
    const r = await cni('ADD', netconf({ ipam: { project: 'other' } }), { CNI_CONTAINERID: cid() });
    expectError(r, 7);
    expect(r.json!.msg).toContain('ipam.project');
  });
});

describe('ADD', () => {
  it('1.0.0: returns {cniVersion, ips, routes, dns} echoing the request version, from the server', async () => {
    const id = cid();
    const r = await cni(
      'ADD',
      netconf({
        ipam: {
          routes: [{ dst: '0.0.0.0/0' }, { dst: '192.168.0.0/16', gw: '10.77.0.254' }],
          dns: { nameservers: ['10.96.0.10'], search: ['svc.cluster.local'] },
        },
      }),
      { CNI_CONTAINERID: id },
    );
    expect(r.status, r.stderr).toBe(0);
    const lease = server.leases.get(`pod-net|${id}|eth0`)!;
    expect(lease).toBeDefined();
    expect(r.json).toEqual({
      cniVersion: '1.0.0',
      ips: [{ address: lease.ips[0].address, gateway: '10.77.0.1' }],
      routes: [{ dst: '0.0.0.0/0' }, { dst: '192.168.0.0/16', gw: '10.77.0.254' }],
      dns: { nameservers: ['10.96.0.10'], search: ['svc.cluster.local'] },
    });
    // What the server was asked, and how.
    const req = server.requestsFor('add').at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(`/api/v1/projects/${PROJECT}/clusters/${CLUSTER}/cni/add`);
    expect(req.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.body).toEqual({ cniNetwork: 'pod-net', containerId: id, ifname: 'eth0', node: 'node-a1', podNamespace: 'shop', podName: 'web-7d4f' });
  });

  it('1.1.0: echoes 1.1.0 and passes 1.1 route attributes through; empty routes/dns when none configured', async () => {
    const r = await cni('ADD', netconf({ cniVersion: '1.1.0', ipam: { routes: [{ dst: '10.0.0.0/8', gw: '10.77.0.1', mtu: 1400, priority: 10 }] } }), {
      CNI_CONTAINERID: cid(),
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.json!.cniVersion).toBe('1.1.0');
    expect(r.json!.routes).toEqual([{ dst: '10.0.0.0/8', gw: '10.77.0.1', mtu: 1400, priority: 10 }]);
    const r2 = await cni('ADD', netconf({ cniVersion: '1.1.0' }), { CNI_CONTAINERID: cid() });
    expect(r2.json!.routes).toEqual([]);
    expect(r2.json!.dns).toEqual({});
    expect(Object.keys(r2.json!)).toEqual(['cniVersion', 'ips', 'routes', 'dns']);
  });

  it('1.0.0 drops 1.1-only route attributes', async () => {
    const r = await cni('ADD', netconf({ cniVersion: '1.0.0', ipam: { routes: [{ dst: '10.0.0.0/8', gw: '10.77.0.1', mtu: 1400 }] } }), {
      CNI_CONTAINERID: cid(),
    });
    expect(r.json!.routes).toEqual([{ dst: '10.0.0.0/8', gw: '10.77.0.1' }]);
  });

  it.each(['0.3.0', '0.3.1', '0.4.0'])('%s: ips carry the pre-1.0 "version" field', async (v) => {
    const r = await cni('ADD', netconf({ cniVersion: v }), { CNI_CONTAINERID: cid() });
    expect(r.status, r.stderr).toBe(0);
    expect(r.json!.cniVersion).toBe(v);
    const ips = r.json!.ips as { version: string; address: string }[];
    expect(ips[0].version).toBe('4');
    expect(ips[0].address).toMatch(/^10\.77\.0\.\d+\/24$/);
  });

  it('is idempotent: the same key gets the same address; another container another one', async () => {
    const id = cid();
    const a = await cni('ADD', netconf(), { CNI_CONTAINERID: id });
    const b = await cni('ADD', netconf(), { CNI_CONTAINERID: id });
    const c = await cni('ADD', netconf(), { CNI_CONTAINERID: cid() });
    expect(a.json!.ips).toEqual(b.json!.ips);
    expect(c.json!.ips).not.toEqual(a.json!.ips);
    const other = await cni('ADD', netconf(), { CNI_CONTAINERID: id, CNI_IFNAME: 'net1' });
    expect(other.json!.ips).not.toEqual(a.json!.ips);
  });

  it('returns every family the server offers (dual stack), with per-family version before 1.0', async () => {
    const dual = new FakeLeaseServer({ token: TOKEN, project: PROJECT, cluster: CLUSTER, dualStack: true });
    const url = await dual.start();
    try {
      const r = await cni('ADD', netconf({ ipam: { serverUrl: url } }), { CNI_CONTAINERID: cid() });
      expect(r.json!.ips).toEqual([
        { address: '10.77.0.2/24', gateway: '10.77.0.1' },
        { address: 'fd77::2/64', gateway: 'fd77::1' },
      ]);
      const old = await cni('ADD', netconf({ cniVersion: '0.4.0', ipam: { serverUrl: url } }), { CNI_CONTAINERID: cid() });
      expect((old.json!.ips as { version: string }[]).map((i) => i.version)).toEqual(['4', '6']);
    } finally {
      await dual.stop();
    }
  });

  it('node name: MERIDIAN_NODE_NAME, else ipam.node, else the host name', async () => {
    await cni('ADD', netconf({ ipam: { node: 'cfg-node' } }), { CNI_CONTAINERID: cid() });
    expect((server.requestsFor('add').at(-1)!.body as { node: string }).node).toBe('node-a1');
    await cni('ADD', netconf({ ipam: { node: 'cfg-node' } }), { CNI_CONTAINERID: cid(), MERIDIAN_NODE_NAME: undefined });
    expect((server.requestsFor('add').at(-1)!.body as { node: string }).node).toBe('cfg-node');
    await cni('ADD', netconf(), { CNI_CONTAINERID: cid(), MERIDIAN_NODE_NAME: undefined });
    expect((server.requestsFor('add').at(-1)!.body as { node: string }).node).toBe(os.hostname());
  });

  it('omits pod namespace/name when CNI_ARGS has none', async () => {
    const id = cid();
    await cni('ADD', netconf(), { CNI_CONTAINERID: id, CNI_ARGS: undefined });
    expect(server.requestsFor('add').at(-1)!.body).toEqual({ cniNetwork: 'pod-net', containerId: id, ifname: 'eth0', node: 'node-a1' });
  });

  it('keeps a path prefix of serverUrl in front of /api/v1', async () => {
    // The double only answers /api/v1/…: a prefix must reach it as /prefix/api/v1/… (404 → 7 here).
    const r = await cni('ADD', netconf({ ipam: { serverUrl: `${server.url}/meridian/` } }), { CNI_CONTAINERID: cid() });
    expectError(r, 7);
    expect(server.requests.at(-1)!.path).toBe(`/meridian/api/v1/projects/${PROJECT}/clusters/${CLUSTER}/cni/add`);
  });
});

describe('DEL', () => {
  it('releases the lease; a second DEL succeeds too (exit 0, no output); CNI_NETNS is optional', async () => {
    const id = cid();
    expect((await cni('ADD', netconf(), { CNI_CONTAINERID: id })).status).toBe(0);
    expect(server.leases.has(`pod-net|${id}|eth0`)).toBe(true);
    const d1 = await cni('DEL', netconf(), { CNI_CONTAINERID: id });
    expectSuccessNoOutput(d1);
    expect(server.leases.has(`pod-net|${id}|eth0`)).toBe(false);
    const d2 = await cni('DEL', netconf(), { CNI_CONTAINERID: id, CNI_NETNS: undefined });
    expectSuccessNoOutput(d2);
    expect(server.requestsFor('del').at(-1)!.body).toEqual({ cniNetwork: 'pod-net', containerId: id, ifname: 'eth0' });
  });

  it('accepts a prevResult (0.4.0+) and a DEL of a never-added container', async () => {
    const r = await cni('DEL', netconf({ extra: { prevResult: { cniVersion: '1.0.0', ips: [{ address: '10.77.0.200/24' }] } } }), { CNI_CONTAINERID: cid() });
    expectSuccessNoOutput(r);
  });

  it('fails with 11 (never a fake success) when the server is unreachable', async () => {
    const port = await freePort();
    const r = await cni('DEL', netconf({ ipam: { serverUrl: `http://127.0.0.1:${port}` } }), { CNI_CONTAINERID: cid() });
    expectError(r, 11);
  });

  it('fails with 11 on 5xx', async () => {
    server.fault = 'error500';
    expectError(await cni('DEL', netconf(), { CNI_CONTAINERID: cid() }), 11);
  });
});

describe('CHECK', () => {
  it('passes when prevResult matches the lease (exit 0, no output)', async () => {
    const id = cid();
    const add = await cni('ADD', netconf(), { CNI_CONTAINERID: id });
    // The runtime passes the whole chain's result, with interfaces and interface indexes.
    const prevResult = {
      ...add.json,
      interfaces: [{ name: 'eth0', sandbox: '/var/run/netns/test' }],
      ips: (add.json!.ips as object[]).map((i) => ({ ...i, interface: 0 })),
    };
    const r = await cni('CHECK', netconf({ extra: { prevResult } }), { CNI_CONTAINERID: id });
    expectSuccessNoOutput(r);
    expect((server.requestsFor('check').at(-1)!.body as { prevResult: unknown }).prevResult).toEqual(prevResult);
  });

  it('fails (103) on a mismatch', async () => {
    const id = cid();
    await cni('ADD', netconf(), { CNI_CONTAINERID: id });
    const r = await cni('CHECK', netconf({ extra: { prevResult: { cniVersion: '1.0.0', ips: [{ address: '10.77.0.250/24' }] } } }), { CNI_CONTAINERID: id });
    expectError(r, 103);
    expect(String(r.json!.details)).toContain('10.77.0.250/24');
  });

  it('fails (104) when there is no lease', async () => {
    const r = await cni('CHECK', netconf({ extra: { prevResult: { cniVersion: '1.0.0', ips: [{ address: '10.77.0.9/24' }] } } }), { CNI_CONTAINERID: cid() });
    expectError(r, 104);
  });

  it('requires prevResult (7) and a version with CHECK (1 for 0.3.1)', async () => {
    expectError(await cni('CHECK', netconf(), { CNI_CONTAINERID: cid() }), 7);
    const r = await cni('CHECK', netconf({ cniVersion: '0.3.1', extra: { prevResult: { ips: [] } } }), { CNI_CONTAINERID: cid() });
    expectError(r, 1);
    expect(r.json!.cniVersion).toBe('0.3.1');
  });
});

describe('GC', () => {
  it('sends cni.dev/valid-attachments; the server releases the others (exit 0, no output)', async () => {
    const net = `gc-net-${seq++}`;
    const [keep, drop1, drop2] = [cid(), cid(), cid()];
    for (const id of [keep, drop1, drop2]) expect((await cni('ADD', netconf({ name: net }), { CNI_CONTAINERID: id })).status).toBe(0);
    const valid = [
      { containerID: keep, ifname: 'eth0' },
      { containerID: 'gone-elsewhere', ifname: 'net1' },
    ];
    const r = await cni('GC', netconf({ cniVersion: '1.1.0', name: net, extra: { 'cni.dev/valid-attachments': valid } }), {
      CNI_CONTAINERID: undefined,
      CNI_NETNS: undefined,
      CNI_IFNAME: undefined,
      CNI_ARGS: undefined,
    });
    expectSuccessNoOutput(r);
    // The node GC names is the one ADD recorded: the server considers that node's leases only.
    expect(server.requestsFor('gc').at(-1)!.body).toEqual({
      cniNetwork: net,
      node: (server.requestsFor('add').at(-1)!.body as { node: string }).node,
      validAttachments: valid,
    });
    expect(server.leases.has(`${net}|${keep}|eth0`)).toBe(true);
    expect(server.leases.has(`${net}|${drop1}|eth0`)).toBe(false);
    expect(server.leases.has(`${net}|${drop2}|eth0`)).toBe(false);
    expect(r.stderr).toContain('released=2');
  });

  it('also reads the earlier spelling cni.dev/attachments', async () => {
    const valid = [{ containerID: 'abc', ifname: 'eth0' }];
    const r = await cni('GC', netconf({ cniVersion: '1.1.0', name: 'gc-other', extra: { 'cni.dev/attachments': valid } }));
    expectSuccessNoOutput(r);
    expect(server.requestsFor('gc').at(-1)!.body).toEqual({ cniNetwork: 'gc-other', node: expect.any(String), validAttachments: valid });
  });

  it('refuses without a valid-attachment list (7) rather than releasing everything', async () => {
    const before = server.requestsFor('gc').length;
    expectError(await cni('GC', netconf({ cniVersion: '1.1.0' })), 7);
    expect(server.requestsFor('gc').length).toBe(before);
  });

  it('is a 1.1.0 verb (1 for a 1.0.0 config)', async () => {
    expectError(await cni('GC', netconf({ cniVersion: '1.0.0', extra: { 'cni.dev/valid-attachments': [] } })), 1);
  });

  it('fails with 11 when the server is down', async () => {
    const port = await freePort();
    expectError(
      await cni('GC', netconf({ cniVersion: '1.1.0', ipam: { serverUrl: `http://127.0.0.1:${port}` }, extra: { 'cni.dev/valid-attachments': [] } })),
      11,
    );
  });
});

describe('STATUS', () => {
  it('ready → exit 0, no output', async () => {
    const r = await cni('STATUS', netconf({ cniVersion: '1.1.0' }), { CNI_CONTAINERID: undefined, CNI_NETNS: undefined, CNI_IFNAME: undefined });
    expectSuccessNoOutput(r);
    expect(server.requestsFor('status').at(-1)!.path).toBe(`/api/v1/projects/${PROJECT}/clusters/${CLUSTER}/cni/status?cniNetwork=pod-net`);
    expect(server.requestsFor('status').at(-1)!.method).toBe('GET');
  });

  it('exhausted → 50 with the server reason', async () => {
    server.exhausted = true;
    const r = await cni('STATUS', netconf({ cniVersion: '1.1.0' }));
    expectError(r, 50);
    expect(r.json!.msg).toContain('Exhausted');
  });

  it('server unreachable or failing → 50 (cannot service ADD)', async () => {
    const port = await freePort();
    expectError(await cni('STATUS', netconf({ cniVersion: '1.1.0', ipam: { serverUrl: `http://127.0.0.1:${port}` } })), 50);
    server.fault = 'unavailable503';
    expectError(await cni('STATUS', netconf({ cniVersion: '1.1.0' })), 50);
  });

  it('is a 1.1.0 verb (1 for a 1.0.0 config)', async () => {
    expectError(await cni('STATUS', netconf({ cniVersion: '1.0.0' })), 1);
  });
});

describe('invalid invocations', () => {
  it('missing ipam.serverUrl → 7 naming the field', async () => {
    const conf = netconf();
    delete (conf.ipam as Record<string, unknown>).serverUrl;
    const r = await cni('ADD', conf);
    expectError(r, 7);
    expect(r.json!.msg).toContain('ipam.serverUrl');
    expect(r.json!.details).toContain('ipam.serverUrl');
    expect(r.json!.cniVersion).toBe('1.0.0');
  });

  it.each([
    ['ipam', { ipam: undefined }, 'ipam'],
    ['ipam.cluster', { ipam: { cluster: undefined } }, 'ipam.cluster'],
    ['ipam.project', { ipam: { project: 42 } }, 'ipam.project'],
    ['ipam.tokenFile', { ipam: { tokenFile: '' } }, 'ipam.tokenFile'],
    ['ipam.serverUrl protocol', { ipam: { serverUrl: 'ftp://meridian.example' } }, 'ipam.serverUrl'],
    ['ipam.serverUrl garbage', { ipam: { serverUrl: 'not a url' } }, 'ipam.serverUrl'],
    ['ipam.timeoutMs', { ipam: { timeoutMs: -5 } }, 'ipam.timeoutMs'],
    ['ipam.routes', { ipam: { routes: [{ dst: '10.0.0.0' }] } }, 'ipam.routes[0].dst'],
    ['ipam.dns', { ipam: { dns: { nameservers: ['dns.example'] } } }, 'ipam.dns.nameservers'],
    ['name', { name: '-bad name' }, 'name'],
  ])('%s invalid → 7', async (_label, patch, field) => {
    const base = netconf();
    const p = patch as { ipam?: Record<string, unknown>; name?: string };
    const conf: Record<string, unknown> = { ...base, ...(p.name ? { name: p.name } : {}) };
    if ('ipam' in p) conf.ipam = p.ipam === undefined ? undefined : { ...(base.ipam as object), ...p.ipam };
    const r = await cni('ADD', conf, { CNI_CONTAINERID: cid() });
    expectError(r, 7);
    expect(`${r.json!.msg} ${r.json!.details}`).toContain(field);
  });

  it('stdin that is not JSON → 6 (failed to decode content)', async () => {
    expectError(await cni('ADD', '{"cniVersion": "1.0.0", '), 6);
    expectError(await cni('ADD', ''), 6);
  });

  it('unknown or missing CNI_COMMAND → 4 (invalid environment variables)', async () => {
    const r = await cni('FROB', netconf());
    expectError(r, 4);
    expect(r.json!.msg).toContain('FROB');
    expectError(await cni(undefined, netconf()), 4);
  });

  it('unsupported cniVersion → 1 (incompatible CNI version)', async () => {
    const r = await cni('ADD', netconf({ cniVersion: '0.2.0' }));
    expectError(r, 1);
    expect(r.json!.details).toContain('0.2.0');
    expectError(await cni('ADD', netconf({ cniVersion: '2.0.0' })), 1);
  });

  it('missing or invalid CNI_* variables → 4 naming them', async () => {
    const a = await cni('ADD', netconf(), { CNI_CONTAINERID: undefined, CNI_NETNS: undefined });
    expectError(a, 4);
    expect(a.json!.msg).toContain('CNI_CONTAINERID');
    expect(a.json!.msg).toContain('CNI_NETNS');
    expectError(await cni('ADD', netconf(), { CNI_IFNAME: 'this-name-is-too-long' }), 4);
    expectError(await cni('ADD', netconf(), { CNI_IFNAME: 'eth/0' }), 4);
    expectError(await cni('ADD', netconf(), { CNI_CONTAINERID: '-leading-dash' }), 4);
    expectError(await cni('ADD', netconf(), { CNI_ARGS: 'K8S_POD_NAME' }), 4);
    expectError(await cni('DEL', netconf(), { CNI_IFNAME: undefined }), 4);
  });
});

describe('credentials', () => {
  it('token file missing → 101, and no request is made', async () => {
    const before = server.requests.length;
    const r = await cni('ADD', netconf({ ipam: { tokenFile: path.join(dir, 'nope') } }), { CNI_CONTAINERID: cid() });
    expectError(r, 101);
    expect(r.json!.msg).toContain('does not exist');
    expect(server.requests.length).toBe(before);
  });

  it('empty token file → 101', async () => {
    const empty = path.join(dir, 'empty-token');
    await writeFile(empty, '\n');
    expectError(await cni('ADD', netconf({ ipam: { tokenFile: empty } }), { CNI_CONTAINERID: cid() }), 101);
  });

  it('token rejected (401) → 101; the token itself never appears', async () => {
    const wrong = path.join(dir, 'wrong-token');
    await writeFile(wrong, 'mrd_tok_WRONG_0000000000000000');
    const r = await cni('ADD', netconf({ ipam: { tokenFile: wrong } }), { CNI_CONTAINERID: cid() });
    expectError(r, 101);
    expect(r.stdout + r.stderr).not.toContain('mrd_tok_WRONG_0000000000000000');
  });

  it('a server message echoing the Authorization header is redacted', async () => {
    server.fault = 'echoAuth400';
    const r = await cni('ADD', netconf(), { CNI_CONTAINERID: cid() });
    expectError(r, 100);
    expect(r.stdout).toContain('[redacted]');
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });

  it('a token file with more than one token-like line → 101 (not a crash in the HTTP layer)', async () => {
    const multi = path.join(dir, 'multi-token');
    await writeFile(multi, 'mrd_tok_A_00000000000\nmrd_tok_B_00000000000\n');
    const r = await cni('ADD', netconf({ ipam: { tokenFile: multi } }), { CNI_CONTAINERID: cid() });
    expectError(r, 101);
    expect(r.stdout + r.stderr).not.toContain('mrd_tok_A_00000000000');
  });

  it('unknown cluster (404) → 7 naming ipam.cluster', async () => {
    const r = await cni('ADD', netconf({ ipam: { cluster: 'other' } }), { CNI_CONTAINERID: cid() });
    expectError(r, 7);
    expect(r.json!.msg).toContain('ipam.cluster');
  });
});

describe('https', () => {
  let tlsServer: FakeLeaseServer;
  let caFile: string;

  beforeAll(async () => {
    const key = path.join(dir, 'tls.key');
    caFile = path.join(dir, 'tls.crt');
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=meridian-test',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      caFile,
    ]);
    tlsServer = new FakeLeaseServer({
      token: TOKEN,
      project: PROJECT,
      cluster: CLUSTER,
      tls: { key: await readFile(key, 'utf8'), cert: await readFile(caFile, 'utf8') },
    });
    await tlsServer.start();
  });

  afterAll(async () => {
    await tlsServer?.stop();
  });

  it('works with ipam.caFile trusting the server certificate', async () => {
    const r = await cni('ADD', netconf({ ipam: { serverUrl: tlsServer.url, caFile } }), { CNI_CONTAINERID: cid() });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect((r.json!.ips as { address: string }[])[0].address).toMatch(/^10\.77\.0\.\d+\/24$/);
  });

  it('an untrusted certificate → 105, not a retry loop', async () => {
    const r = await cni('ADD', netconf({ ipam: { serverUrl: tlsServer.url } }), { CNI_CONTAINERID: cid(), NODE_EXTRA_CA_CERTS: undefined });
    expectError(r, 105);
    expect(r.json!.details).toContain('ipam.caFile');
  });
});

describe('bounded failure', () => {
  it('server down (closed port) → 11, well within the deadline', async () => {
    const port = await freePort();
    const r = await cni('ADD', netconf({ ipam: { serverUrl: `http://127.0.0.1:${port}`, timeoutMs: 10_000 } }), { CNI_CONTAINERID: cid() });
    expectError(r, 11);
    expect(r.json!.msg).toContain('ECONNREFUSED');
    expect(r.ms).toBeLessThan(5_000);
    expect(JSON.stringify(r.json)).not.toMatch(/"ips"/);
  });

  it('server hanging → 11 after timeoutMs', async () => {
    server.fault = 'hang';
    const r = await cni('ADD', netconf({ ipam: { timeoutMs: 400 } }), { CNI_CONTAINERID: cid() });
    expectError(r, 11);
    expect(r.json!.details).toContain('timed out');
    expect(r.ms).toBeGreaterThanOrEqual(400);
    expect(r.ms).toBeLessThan(400 + 4_000); // process start-up on a loaded 2-core machine
  });

  it('a listener that accepts but never speaks HTTP → 11 after timeoutMs', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const silent = createNetServer((s) => {
      sockets.add(s);
      s.on('error', () => {}); // the plugin's exit resets the connection
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    try {
      const port = (silent.address() as { port: number }).port;
      const r = await cni('ADD', netconf({ ipam: { serverUrl: `http://127.0.0.1:${port}`, timeoutMs: 300 } }), { CNI_CONTAINERID: cid() });
      expectError(r, 11);
      expect(r.ms).toBeGreaterThanOrEqual(300);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('a response that stalls mid-body → 11 after timeoutMs', async () => {
    const stall: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"ips":[');
    });
    await new Promise<void>((resolve) => stall.listen(0, '127.0.0.1', () => resolve()));
    try {
      const port = (stall.address() as { port: number }).port;
      const r = await cni('ADD', netconf({ ipam: { serverUrl: `http://127.0.0.1:${port}`, timeoutMs: 300 } }), { CNI_CONTAINERID: cid() });
      expectError(r, 11);
    } finally {
      stall.closeAllConnections();
      await new Promise<void>((resolve) => stall.close(() => resolve()));
    }
  });

  it.each([
    ['error500', 11],
    ['unavailable503', 11],
    ['rateLimited429', 11],
  ] as const)('%s → %d', async (fault, code) => {
    server.fault = fault;
    const r = await cni('ADD', netconf(), { CNI_CONTAINERID: cid() });
    expectError(r, code);
    if (fault === 'rateLimited429') expect(r.json!.details).toContain('Retry-After: 2');
  });

  it('exhausted network on ADD (507 Exhausted) → 11 with the reason; an existing lease is still returned', async () => {
    const id = cid();
    const first = await cni('ADD', netconf(), { CNI_CONTAINERID: id });
    server.exhausted = true;
    const r = await cni('ADD', netconf(), { CNI_CONTAINERID: cid() });
    expectError(r, 11);
    expect(r.json!.msg).toContain('exhausted');
    const again = await cni('ADD', netconf(), { CNI_CONTAINERID: id });
    expect(again.json!.ips).toEqual(first.json!.ips);
  });

  it('a malformed answer is an error (100), never a made-up address', async () => {
    server.fault = 'garbage';
    expectError(await cni('ADD', netconf(), { CNI_CONTAINERID: cid() }), 100);
    server.fault = 'noIps';
    const r = await cni('ADD', netconf(), { CNI_CONTAINERID: cid() });
    expectError(r, 100);
    expect(JSON.stringify(r.json)).not.toMatch(/"ips"/);
  });
});

describe('output discipline (over every run above)', () => {
  it('stdout only ever held one JSON document or nothing; the token never appeared anywhere', () => {
    expect(runs.length).toBeGreaterThan(50);
    for (const r of runs) {
      // runPlugin already rejects a stdout that is not exactly one JSON document.
      if (r.status === 0) expect(r.json === undefined || 'cniVersion' in r.json).toBe(true);
      else expect(r.json && typeof r.json.code === 'number').toBe(true);
      expect(r.stdout).not.toContain(TOKEN);
      expect(r.stderr).not.toContain(TOKEN);
      expect(r.signal).toBeNull();
    }
  });
});
