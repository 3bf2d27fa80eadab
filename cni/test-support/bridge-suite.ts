/**
 * The end-to-end suite through the real Debian CNI `bridge` plugin (containernetworking-plugins,
 * spec ≤ 1.0.0) delegating IPAM to the BUILT `meridian-ipam`, inside network namespaces it creates
 * and removes. Shared by cni/cni-bridge.test.ts (a server named by environment variables) and
 * cni/plugin-real-server.test.ts (the real lease API served in-process).
 *
 * Needs root, `ip netns`, and the bridge plugin in /usr/lib/cni (or MERIDIAN_CNI_PLUGIN_DIR);
 * skipped with a message otherwise.
 *
 * "Server stopped" is produced by a TCP relay between the plugin and the server that the suite
 * shuts down: from the plugin's side that is exactly a stopped server (connection refused). For an
 * https server the relay cannot keep the certificate's host name, so that case points the plugin
 * at a closed port instead.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { type Server, type Socket, connect, createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@/test/global-setup';
import { pluginExecutable } from './plugin-executable';
import { type PluginRun, runPlugin } from './run-plugin';

const exec = promisify(execFile);

export interface BridgeTarget {
  serverUrl: string;
  token: string;
  project: string;
  cluster: string;
}

const pluginDir = process.env.MERIDIAN_CNI_PLUGIN_DIR ?? '/usr/lib/cni';

/** Why the bridge suite cannot run on this host, or undefined when it can. */
export function bridgeSkipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (ip netns, bridge)';
  if (!existsSync(path.join(pluginDir, 'bridge'))) return `no bridge plugin in ${pluginDir} (apt-get install containernetworking-plugins)`;
  return undefined;
}

/** A TCP relay 127.0.0.1:<port> → target; `stop()` closes it and cuts every connection, `start()` reopens it on the same port. */
class TcpRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;
  constructor(
    readonly targetHost: string,
    readonly targetPort: number,
  ) {}
  get running(): boolean {
    return this.server !== undefined;
  }
  async start(): Promise<number> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as { port: number }).port;
    return this.port;
  }
  async stop(): Promise<void> {
    const srv = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (srv) await new Promise<void>((resolve) => srv.close(() => resolve()));
  }
}

async function nsAddresses(ns: string): Promise<string[]> {
  const { stdout } = await exec('ip', ['-n', ns, '-j', 'addr', 'show', 'scope', 'global']);
  const links = JSON.parse(stdout || '[]') as { ifname: string; addr_info?: { local: string; prefixlen: number }[] }[];
  return links.flatMap((l) => (l.addr_info ?? []).map((a) => `${l.ifname} ${a.local}/${a.prefixlen}`));
}

let suites = 0;

/**
 * Defines the suite. `target` is called in beforeAll (the server may be started by the caller's
 * own beforeAll, which runs first). `skip` names why it cannot run (shown in the suite's title).
 */
export function bridgeSuite(title: string, target: () => BridgeTarget, options: { skip?: string; namespaces?: number } = {}) {
  const skip = options.skip ?? bridgeSkipReason();
  const N = options.namespaces ?? Number(process.env.MERIDIAN_CNI_BRIDGE_N ?? 8);
  const tag = `${process.pid % 100000}${String.fromCharCode(97 + (suites++ % 26))}`;
  const bridgeName = `mrd-test${tag}`.slice(0, 15);
  const cniNetwork = process.env.MERIDIAN_CNI_NETWORK_NAME ?? `mrd-bridge-${tag}-${Date.now().toString(36)}`;
  const nsNames = Array.from({ length: N + 1 }, (_, i) => `mrd-${tag}-${i}`);
  const containerIdOf = (i: number) => `mrdbridge${tag}c${i}`;
  const nodeName = `bridge-test-node-${tag}`;

  let t: BridgeTarget;
  let dir = '';
  let cniBin = '';
  let tokenFile = '';
  let relay: TcpRelay | undefined;
  let pluginUrl = '';
  const createdNs: string[] = [];
  let bridgeCreated = false;
  const results: Record<string, unknown>[] = [];

  const bridgeConf = (serverUrl: string, extra: Record<string, unknown> = {}) => ({
    cniVersion: '1.0.0',
    name: cniNetwork,
    type: 'bridge',
    bridge: bridgeName,
    isGateway: true,
    ipMasq: false,
    ipam: { type: 'meridian-ipam', serverUrl, tokenFile, cluster: t.cluster, project: t.project, timeoutMs: 5000, routes: [{ dst: '0.0.0.0/0' }] },
    ...extra,
  });

  const bridge = (command: string, ns: string, containerId: string, conf: object): Promise<PluginRun> =>
    runPlugin(path.join(cniBin, 'bridge'), {
      env: {
        CNI_COMMAND: command,
        CNI_CONTAINERID: containerId,
        CNI_NETNS: `/var/run/netns/${ns}`,
        CNI_IFNAME: 'eth0',
        CNI_PATH: cniBin,
        CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=bridge-test;K8S_POD_NAME=${ns}`,
        MERIDIAN_NODE_NAME: nodeName,
      },
      stdin: JSON.stringify(conf),
      killAfterMs: 60_000,
    });

  /** The plugin itself (not through bridge), for the lease-level checks. */
  const ipam = (command: string, containerId: string, conf: object): Promise<PluginRun> =>
    runPlugin(path.join(cniBin, 'meridian-ipam'), {
      env: {
        CNI_COMMAND: command,
        CNI_CONTAINERID: containerId,
        CNI_NETNS: '/var/run/netns/none',
        CNI_IFNAME: 'eth0',
        CNI_PATH: cniBin,
        MERIDIAN_NODE_NAME: nodeName,
      },
      stdin: JSON.stringify(conf),
    });

  describe.skipIf(skip !== undefined)(`${title}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    beforeAll(async () => {
      t = target();
      dir = await mkdtemp(path.join(os.tmpdir(), 'meridian-cni-bridge-'));
      cniBin = path.join(dir, 'bin');
      await pluginExecutable(cniBin);
      await symlink(path.join(pluginDir, 'bridge'), path.join(cniBin, 'bridge'));
      tokenFile = path.join(dir, 'token');
      await writeFile(tokenFile, `${t.token}\n`, { mode: 0o600 });
      const u = new URL(t.serverUrl);
      if (u.protocol === 'http:') {
        relay = new TcpRelay(u.hostname.replace(/^\[(.*)\]$/, '$1'), Number(u.port || 80));
        const port = await relay.start();
        pluginUrl = `http://127.0.0.1:${port}${u.pathname.replace(/\/+$/, '')}`;
      } else {
        pluginUrl = t.serverUrl;
      }
      // A pre-created bridge with a pinned MAC: the kernel otherwise re-derives the bridge MAC from
      // its ports as veths come and go, and bridge CHECK compares it with prevResult.
      await exec('ip', ['link', 'add', bridgeName, 'type', 'bridge']);
      bridgeCreated = true;
      await exec('ip', ['link', 'set', bridgeName, 'address', '02:6d:72:64:00:01']);
      await exec('ip', ['link', 'set', bridgeName, 'up']);
      for (const ns of nsNames) {
        await exec('ip', ['netns', 'add', ns]);
        createdNs.push(ns);
      }
    }, 120_000);

    afterAll(async () => {
      // Best effort, even after failures: release the leases, remove namespaces, bridge and files.
      if (relay && !relay.running) await relay.start().catch(() => undefined);
      if (pluginUrl && cniBin) {
        const conf = bridgeConf(pluginUrl);
        await Promise.all(nsNames.map((ns, i) => bridge('DEL', ns, containerIdOf(i), conf).catch(() => undefined)));
      }
      for (const ns of createdNs) await exec('ip', ['netns', 'del', ns]).catch(() => undefined);
      if (bridgeCreated) await exec('ip', ['link', 'del', bridgeName]).catch(() => undefined);
      await relay?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    }, 120_000);

    it(`ADD in ${N} namespaces concurrently: distinct addresses, really on the interfaces`, async () => {
      const conf = bridgeConf(pluginUrl);
      const runs = await Promise.all(nsNames.slice(0, N).map((ns, i) => bridge('ADD', ns, containerIdOf(i), conf)));
      for (const r of runs) {
        expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
        expect(r.json!.cniVersion).toBe('1.0.0');
        results.push(r.json!);
      }
      const addresses = results.map((res) => (res.ips as { address: string }[]).find((ip) => !ip.address.includes(':'))!.address);
      expect(new Set(addresses).size).toBe(N);
      for (let i = 0; i < N; i++) expect(await nsAddresses(nsNames[i])).toContain(`eth0 ${addresses[i]}`);
      // The lease's gateway is on the bridge (isGateway).
      const gw = (results[0].ips as { gateway?: string }[])[0].gateway;
      if (gw) {
        const { stdout } = await exec('ip', ['-j', 'addr', 'show', 'dev', bridgeName]);
        expect(stdout).toContain(`"${gw}"`);
      }
    });

    it('ADD again is idempotent through the plugin (same addresses)', async () => {
      const again = await ipam('ADD', containerIdOf(0), bridgeConf(pluginUrl));
      expect(again.status, again.stdout + again.stderr).toBe(0);
      expect((again.json!.ips as { address: string }[]).map((i) => i.address)).toEqual((results[0].ips as { address: string }[]).map((i) => i.address));
    });

    it('CHECK passes for every namespace', async () => {
      const runs = await Promise.all(
        nsNames.slice(0, N).map((ns, i) => bridge('CHECK', ns, containerIdOf(i), bridgeConf(pluginUrl, { prevResult: results[i] }))),
      );
      for (const r of runs) expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    });

    it('DEL twice succeeds; addresses and leases are gone afterwards', async () => {
      for (let round = 0; round < 2; round++) {
        const runs = await Promise.all(
          nsNames.slice(0, N).map((ns, i) => bridge('DEL', ns, containerIdOf(i), bridgeConf(pluginUrl, { prevResult: results[i] }))),
        );
        for (const r of runs) expect(r.status, `round ${round}: ${r.stdout}\n${r.stderr}`).toBe(0);
      }
      for (let i = 0; i < N; i++) expect(await nsAddresses(nsNames[i])).toEqual([]);
      const check = await ipam('CHECK', containerIdOf(0), bridgeConf(pluginUrl, { prevResult: results[0] }));
      expect(check.json?.code, check.stdout).toBe(104);
    });

    it('with the server stopped, ADD fails with code 11 and no address is configured; DEL fails with 11 too', async () => {
      let url = pluginUrl;
      if (relay) await relay.stop();
      else url = `http://127.0.0.1:${await freePort()}`;
      const ns = nsNames[N];
      const r = await bridge('ADD', ns, containerIdOf(N), bridgeConf(url));
      expect(r.status).not.toBe(0);
      expect(r.json?.code, r.stdout + r.stderr).toBe(11);
      expect(await nsAddresses(ns)).toEqual([]);
      const del = await bridge('DEL', ns, containerIdOf(N), bridgeConf(url));
      expect(del.json?.code, del.stdout + del.stderr).toBe(11);
      // Server back: the runtime's retried DEL succeeds.
      if (relay) {
        await relay.start();
        const retried = await bridge('DEL', ns, containerIdOf(N), bridgeConf(pluginUrl));
        expect(retried.status, retried.stdout + retried.stderr).toBe(0);
      }
    });
  });
}
