/**
 * The chain a node really runs: `meridian-ipam install` writes the plugin, the token and the
 * conflist into a temporary CNI root; then the INSTALLED conflist is run as libcni runs it — ADD
 * through each plugin in order (Debian's `bridge` delegating IPAM to the installed meridian-ipam,
 * then Debian's `portmap`, each given the previous result), CHECK in order with the final result,
 * DEL in reverse order — in network namespaces this test creates, against the real lease API
 * (served in-process on the test database), on a dual-stack network. The pods reach each other and
 * their gateway over both families.
 *
 * Needs root, `ip netns`, iptables, ping and the plugins in /usr/lib/cni (or
 * MERIDIAN_CNI_PLUGIN_DIR); skipped with the reason otherwise.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createCluster } from '@/server/cni/clusters';
import { createNetwork } from '@/server/ipam/networks';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { bridgeSkipReason } from './test-support/bridge-suite';
import { pluginExecutable } from './test-support/plugin-executable';
import { type PluginRun, runPlugin } from './test-support/run-plugin';
import { serveLeaseApi } from './test-support/serve-lease-api';

const exec = promisify(execFile);
const pluginDir = process.env.MERIDIAN_CNI_PLUGIN_DIR ?? '/usr/lib/cni';

function skipReason(): string | undefined {
  const bridge = bridgeSkipReason();
  if (bridge) return bridge;
  if (!existsSync(path.join(pluginDir, 'portmap'))) return `no portmap plugin in ${pluginDir} (apt-get install containernetworking-plugins)`;
  for (const [tool, pkg] of [
    ['ping', 'iputils-ping'],
    ['iptables', 'iptables'],
  ]) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `no ${tool} (apt-get install ${pkg})`;
    }
  }
  return undefined;
}
const skip = skipReason();
if (skip) process.stderr.write(`[cni-chain.test] skipped: ${skip}\n`);

const actor = systemActor('test');
const tag = `${process.pid % 100000}`;
const bridgeName = `mrd-chain${tag}`.slice(0, 15);
const namespaces = [`mrd-chain-${tag}-0`, `mrd-chain-${tag}-1`];
const containerIds = namespaces.map((_, i) => `mrdchain${tag}c${i}`);
const hostPort = 31000 + (process.pid % 2000);

interface Conflist {
  cniVersion: string;
  name: string;
  plugins: (Record<string, unknown> & { type: string; capabilities?: Record<string, boolean> })[];
}

let api: Awaited<ReturnType<typeof serveLeaseApi>> | undefined;
let dir = '';
let binDir = '';
let conflist: Conflist;
let projectId = '';
const createdNs: string[] = [];
let bridgeCreated = false;
/** The final ADD result per pod (libcni caches it for CHECK and DEL). */
const results: Record<string, unknown>[] = [];

/** Runs one plugin of the list as libcni does: the list's cniVersion and name, the previous result, runtimeConfig for its capabilities. */
function invoke(command: 'ADD' | 'CHECK' | 'DEL', i: number, plugin: Conflist['plugins'][number], prevResult?: Record<string, unknown>): Promise<PluginRun> {
  const config: Record<string, unknown> = { ...plugin, cniVersion: conflist.cniVersion, name: conflist.name };
  if (prevResult) config.prevResult = prevResult;
  if (plugin.capabilities?.portMappings && i === 0) config.runtimeConfig = { portMappings: [{ hostPort, containerPort: 8080, protocol: 'tcp' }] };
  return runPlugin(path.join(binDir, plugin.type), {
    env: {
      CNI_COMMAND: command,
      CNI_CONTAINERID: containerIds[i],
      CNI_NETNS: `/var/run/netns/${namespaces[i]}`,
      CNI_IFNAME: 'eth0',
      CNI_PATH: binDir,
      CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=chain;K8S_POD_NAME=pod-${i}`,
    },
    stdin: JSON.stringify(config),
    killAfterMs: 60_000,
  });
}

/** libcni's AddNetworkList: each plugin in order, each given the previous one's result; the last result is the list's. */
async function addList(i: number): Promise<Record<string, unknown>> {
  let prev: Record<string, unknown> | undefined;
  for (const plugin of conflist.plugins) {
    const r = await invoke('ADD', i, plugin, prev);
    expect(r.status, `${plugin.type} ADD: ${r.stdout}\n${r.stderr}`).toBe(0);
    prev = r.json!;
  }
  return prev!;
}

/** libcni's CheckNetworkList: each plugin in order with the cached result. */
async function checkList(i: number): Promise<PluginRun[]> {
  const runs: PluginRun[] = [];
  for (const plugin of conflist.plugins) runs.push(await invoke('CHECK', i, plugin, results[i]));
  return runs;
}

/** libcni's DelNetworkList: each plugin in reverse order with the cached result. */
async function delList(i: number): Promise<PluginRun[]> {
  const runs: PluginRun[] = [];
  for (const plugin of [...conflist.plugins].reverse()) runs.push(await invoke('DEL', i, plugin, results[i]));
  return runs;
}

async function eth0Addresses(ns: string): Promise<string[]> {
  const { stdout } = await exec('ip', ['-n', ns, '-j', 'addr', 'show', 'dev', 'eth0']).catch(() => ({ stdout: '[]' }));
  const links = JSON.parse(stdout || '[]') as { addr_info?: { local: string; prefixlen: number; scope: string }[] }[];
  return links.flatMap((l) => (l.addr_info ?? []).filter((a) => a.scope === 'global').map((a) => `${a.local}/${a.prefixlen}`)).sort();
}

const ping = (ns: string, address: string) =>
  exec('ip', ['netns', 'exec', ns, 'ping', '-c', '1', '-W', '3', ...(address.includes(':') ? ['-6'] : []), address]).then(
    () => true,
    () => false,
  );

/** The installed containernetworking-plugins version (Debian's package), or '' where dpkg does not know it. */
function portmapVersion(): string {
  try {
    return execFileSync('dpkg-query', ['-W', '-f', '${Version}', 'containernetworking-plugins'], { encoding: 'utf8' });
  } catch {
    return '';
  }
}

/**
 * portmap's shared chains (CNI-HOSTPORT-*) stay after its last DEL, by design. Once no mapping is
 * left in them (none of this test's, nor anyone else's), they and their hooks are removed, so the
 * test leaves the host's nat tables as it found them.
 */
async function removeIdlePortmapChains() {
  for (const tool of ['iptables', 'ip6tables']) {
    const rules = (await exec(tool, ['-t', 'nat', '-S']).catch(() => ({ stdout: '' }))).stdout.split('\n');
    if (rules.some((r) => r.startsWith('-A CNI-HOSTPORT-DNAT '))) continue;
    for (const hook of rules.filter((r) => /^-A (PREROUTING|OUTPUT|POSTROUTING) .*-j CNI-HOSTPORT-(DNAT|MASQ)$/.test(r))) {
      await exec(tool, [
        '-t',
        'nat',
        '-D',
        ...hook
          .slice(3)
          .match(/"[^"]*"|\S+/g)!
          .map((w) => w.replace(/^"|"$/g, '')),
      ]).catch(() => undefined);
    }
    for (const chain of ['CNI-HOSTPORT-DNAT', 'CNI-HOSTPORT-MASQ', 'CNI-HOSTPORT-SETMARK']) {
      await exec(tool, ['-t', 'nat', '-F', chain]).catch(() => undefined);
      await exec(tool, ['-t', 'nat', '-X', chain]).catch(() => undefined);
    }
  }
}

const natRules = async () => (await exec('iptables', ['-t', 'nat', '-S'])).stdout;

describe.skipIf(skip !== undefined)(
  `the installed conflist run in libcni's order (bridge + meridian-ipam, portmap)${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    beforeAll(async () => {
      const { db } = testDb();
      const { project } = await makeProject(db);
      projectId = project.id;
      // Dual stack: both families through the whole chain.
      await createNetwork(db, project.id, { name: 'pods', cidrs: [{ cidr: '203.0.113.0/24' }, { cidr: '2001:db8:113::/64' }] }, actor);
      const token = (await createCluster(db, project.id, { name: 'k1', network: 'pods', issueToken: true }, actor)).token!.secret;
      api = await serveLeaseApi();
      dir = await mkdtemp(path.join(os.tmpdir(), 'meridian-cni-chain-'));
      const plugin = await pluginExecutable(path.join(dir, 'build'));
      const tokenFile = path.join(dir, 'cluster-token');
      await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
      binDir = path.join(dir, 'opt/cni/bin');
      const confDir = path.join(dir, 'etc/cni/net.d');
      const installed = await exec(plugin, [
        'install',
        '--server-url',
        api.url,
        '--project',
        project.slug,
        '--cluster',
        'k1',
        '--network',
        'pods',
        '--token-file',
        tokenFile,
        '--node-name',
        `chain-node-${tag}`,
        '--cni-bin-dir',
        binDir,
        '--cni-conf-dir',
        confDir,
        '--main-plugin-config',
        JSON.stringify({ bridge: bridgeName }),
      ]);
      expect(installed.stdout).toContain('10-meridian.conflist');
      // The node's own plugins, as a distribution installs them.
      for (const p of ['bridge', 'portmap']) await symlink(path.join(pluginDir, p), path.join(binDir, p));
      conflist = JSON.parse(await readFile(path.join(confDir, '10-meridian.conflist'), 'utf8')) as Conflist;
      // The bridge made beforehand with a pinned MAC: the kernel otherwise re-derives it from its ports
      // as veths come and go, and bridge CHECK compares it with the cached result.
      await exec('ip', ['link', 'add', bridgeName, 'type', 'bridge']);
      bridgeCreated = true;
      await exec('ip', ['link', 'set', bridgeName, 'address', '02:6d:72:64:00:02']);
      await exec('ip', ['link', 'set', bridgeName, 'up']);
      for (const ns of namespaces) {
        await exec('ip', ['netns', 'add', ns]);
        createdNs.push(ns);
      }
    }, 180_000);

    afterAll(async () => {
      // Best effort, also after failures: the chain's DEL (iptables rules, veths, leases), namespaces, bridge, files.
      if (conflist) for (let i = 0; i < namespaces.length; i++) await delList(i).catch(() => undefined);
      for (const ns of createdNs) await exec('ip', ['netns', 'del', ns]).catch(() => undefined);
      if (bridgeCreated) await exec('ip', ['link', 'del', bridgeName]).catch(() => undefined);
      if (conflist) await removeIdlePortmapChains();
      await api?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    }, 120_000);

    it('the installed list chains bridge (IPAM: meridian-ipam) and portmap', () => {
      expect(conflist.plugins.map((p) => p.type)).toEqual(['bridge', 'portmap']);
      expect((conflist.plugins[0].ipam as { type: string }).type).toBe('meridian-ipam');
    });

    it('ADD: each pod gets its Meridian addresses on eth0; the pods reach each other and their gateways; portmap maps the host port', async () => {
      for (let i = 0; i < namespaces.length; i++) results.push(await addList(i));
      const ips = results.map((r) => r.ips as { address: string; gateway?: string }[]);
      const v4 = ips.map((list) => list.find((ip) => !ip.address.includes(':'))!);
      const v6 = ips.map((list) => list.find((ip) => ip.address.includes(':'))!);
      for (let i = 0; i < namespaces.length; i++) {
        expect(v4[i].address).toMatch(/^203\.0\.113\.\d+\/26$/);
        expect(v6[i].address).toMatch(/^2001:db8:113:/);
        expect(await eth0Addresses(namespaces[i])).toEqual(ips[i].map((ip) => ip.address).sort());
      }
      expect(v4[0].address).not.toBe(v4[1].address);
      const bridgeAddresses = (await exec('ip', ['-j', 'addr', 'show', 'dev', bridgeName])).stdout;
      for (const gw of [v4[0].gateway!, v6[0].gateway!]) expect(bridgeAddresses).toContain(`"${gw}"`);
      const bare = (list: { address: string }[]) => list.map((ip) => ip.address.split('/')[0]);
      for (const [other, self] of [
        [1, 0],
        [0, 1],
      ]) {
        for (const family of [v4, v6]) {
          const target = bare(family)[other];
          expect(await ping(namespaces[self], target), `${namespaces[self]} → ${target}`).toBe(true);
        }
      }
      for (const ns of namespaces) {
        for (const gw of [v4[0].gateway!, v6[0].gateway!]) expect(await ping(ns, gw), `${ns} → gateway ${gw}`).toBe(true);
      }
      // portmap: the host port forwarded to pod 0.
      expect(await natRules()).toMatch(new RegExp(`--dport ${hostPort} .*-j DNAT --to-destination ${bare(v4)[0].replace(/\./g, '\\.')}:8080`));
      // The leases Meridian recorded: the node and pod the runtime named.
      const leases = (await testDb().db.execute(
        sql`select host(address) as address, node, pod_name from pod_leases where project_id = ${projectId} and family = 4 order by pod_name`,
      )) as unknown as { address: string; node: string; pod_name: string }[];
      expect(leases.map((l) => [l.address, l.node, l.pod_name])).toEqual([
        [bare(v4)[0], `chain-node-${tag}`, 'pod-0'],
        [bare(v4)[1], `chain-node-${tag}`, 'pod-1'],
      ]);
    });

    it('CHECK in list order with the cached result: bridge with meridian-ipam passes; so does portmap where its CHECK works', async () => {
      for (let i = 0; i < namespaces.length; i++) {
        const [bridge, portmap] = await checkList(i);
        expect(bridge.status, `${bridge.stdout}\n${bridge.stderr}`).toBe(0);
        if (portmap.status !== 0) {
          // containernetworking-plugins before 1.2 look for every address's rules in both the iptables
          // and the ip6tables table, so portmap's CHECK fails on any host with ip6tables, whatever the
          // pod's families. Only that failure, and only from such a version, is accepted.
          expect(portmapVersion(), `portmap CHECK failed: ${portmap.stdout}`).toMatch(/^1\.[01]\./);
          expect(portmap.json).toMatchObject({ code: 999, msg: expect.stringContaining('could not check ipv6 dnat') });
        }
      }
    });

    it('DEL in reverse order: addresses, port mapping and leases gone; DEL again succeeds', async () => {
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < namespaces.length; i++) {
          for (const r of await delList(i)) expect(r.status, `round ${round}: ${r.stdout}\n${r.stderr}`).toBe(0);
        }
      }
      for (const ns of namespaces) expect(await eth0Addresses(ns)).toEqual([]);
      expect(await natRules()).not.toContain(`--dport ${hostPort} `);
      const [{ n }] = (await testDb().db.execute(sql`select count(*)::int as n from pod_leases where project_id = ${projectId}`)) as unknown as { n: number }[];
      expect(n).toBe(0);
    });
  },
);
