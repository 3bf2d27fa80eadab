/**
 * bench/cni-plugin: the plugin as a node runs it, beside a local allocator. The BUILT executable
 * (compiled from cni/ by bin/build-cni.ts, or MERIDIAN_CNI_PLUGIN) against a running Meridian (the
 * real web process on a fresh database), and Debian's `host-local` IPAM plugin with its own file
 * store, called interleaved, call by call: ADD of N containers (each container's ADD through one
 * plugin, then the other, alternating who goes first), then their DELs the same way. Each figure is
 * process start to exit, as the runtime waits for it. Target: meridian-ipam's ADD p50 ≤ 4× host-local's.
 *
 *   node --import tsx bench/cni-plugin.ts [containers=200]     (needs a production build: npm run build)
 *
 * Start-up alone (CNI_COMMAND=VERSION) is measured the same way, for scale. On a shared machine,
 * other processes' load lengthens every figure: the load average is printed with them.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { systemActor } from '../server/audit/events';
import { createCluster } from '../server/cni/clusters';
import { createNetwork } from '../server/ipam/networks';
import { createOrganization } from '../server/tenancy/projects';
import { createProject } from '../server/workflows/project-creation';
import { pluginExecutable } from '../cni/test-support/plugin-executable';
import { benchDatabase, fmt, percentile, startWeb } from './lib/harness';

const actor = systemActor('bench');
const N = Number(process.argv[2] ?? process.env.BENCH_CONTAINERS ?? 200);
const HOST_LOCAL = path.join(process.env.MERIDIAN_CNI_PLUGIN_DIR ?? '/usr/lib/cni', 'host-local');

/** Runs `cmd` as a runtime does (CNI_* env, config on stdin); resolves with its wall time, start to exit. */
function timed(cmd: string, env: Record<string, string>, stdin: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, [], { env: env as unknown as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => {
      const ms = performance.now() - started;
      if (status !== 0) reject(new Error(`${path.basename(cmd)} ${env.CNI_COMMAND} exited ${status}: ${out} ${err}`));
      else resolve(ms);
    });
    child.stdin.on('error', () => {});
    child.stdin.end(stdin);
  });
}

async function main() {
  if (!existsSync(HOST_LOCAL)) throw new Error(`${HOST_LOCAL} not found (apt-get install containernetworking-plugins)`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'meridian-cni-plugin-bench-'));
  const bench = await benchDatabase();
  const { db } = bench.handle;
  const org = await createOrganization(db, { slug: 'bench', name: 'bench' }, actor);
  const project = await createProject(db, { organizationId: org.id, slug: 'bench', name: 'bench' }, actor);
  await createNetwork(db, project.id, { name: 'pods', cidrs: [{ cidr: '10.64.0.0/16' }] }, actor);
  const token = (await createCluster(db, project.id, { name: 'bench', network: 'pods', issueToken: true }, actor)).token!.secret;
  const web = await startWeb(bench.url);
  try {
    const plugin = await pluginExecutable(path.join(dir, 'bin'));
    const tokenFile = path.join(dir, 'token');
    await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
    const meridianConf = JSON.stringify({
      cniVersion: '1.0.0',
      name: 'bench-net',
      type: 'bridge',
      ipam: { type: 'meridian-ipam', serverUrl: web.base, tokenFile, cluster: 'bench', routes: [{ dst: '0.0.0.0/0' }] },
    });
    const hostLocalConf = JSON.stringify({
      cniVersion: '1.0.0',
      name: 'bench-net',
      type: 'bridge',
      ipam: { type: 'host-local', ranges: [[{ subnet: '10.99.0.0/16' }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: path.join(dir, 'host-local') },
    });
    const env = (command: string, id: string) => ({
      PATH: '/usr/bin:/bin',
      CNI_COMMAND: command,
      CNI_CONTAINERID: id,
      CNI_NETNS: '/var/run/netns/bench',
      CNI_IFNAME: 'eth0',
      CNI_PATH: path.dirname(plugin),
      // As kubelet passes them: host-local refuses unknown CNI_ARGS without IgnoreUnknown.
      CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=bench;K8S_POD_NAME=${id}`,
      MERIDIAN_NODE_NAME: 'bench-node',
      MERIDIAN_CNI_QUIET: '1',
    });
    const plugins = [
      { name: 'meridian-ipam', cmd: plugin, conf: meridianConf },
      { name: 'host-local', cmd: HOST_LOCAL, conf: hostLocalConf },
    ];
    const series: Record<string, Record<'version' | 'add' | 'del', number[]>> = {};
    for (const p of plugins) series[p.name] = { version: [], add: [], del: [] };

    process.stdout.write(
      `cni-plugin bench: ${N} containers, ${os.cpus().length} CPUs, load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}, meridian-ipam ${((await stat(plugin)).size / 1e6).toFixed(1)} MB\n`,
    );
    // Warm-up (not counted): the node's first block, the server's connections and plans, page cache.
    for (let i = 0; i < 10; i++) {
      for (const p of plugins) {
        await timed(p.cmd, env('ADD', `warm${i}`), p.conf);
        await timed(p.cmd, env('DEL', `warm${i}`), p.conf);
      }
    }
    const inTurn = (i: number) => (i % 2 === 0 ? plugins : [...plugins].reverse());
    for (let i = 0; i < N; i++)
      for (const p of inTurn(i)) series[p.name].version.push(await timed(p.cmd, { ...env('VERSION', 'v'), CNI_COMMAND: 'VERSION' }, p.conf));
    for (let i = 0; i < N; i++) for (const p of inTurn(i)) series[p.name].add.push(await timed(p.cmd, env('ADD', `bench${i}`), p.conf));
    for (let i = 0; i < N; i++) for (const p of inTurn(i)) series[p.name].del.push(await timed(p.cmd, env('DEL', `bench${i}`), p.conf));

    process.stdout.write(`| call (process start to exit) | meridian-ipam p50 | p99 | host-local p50 | p99 | ratio of p50s |\n|---|---|---|---|---|---|\n`);
    const m = series['meridian-ipam'];
    const h = series['host-local'];
    for (const [label, key] of [
      ['VERSION (start-up only)', 'version'],
      ['ADD', 'add'],
      ['DEL', 'del'],
    ] as const) {
      const ratio = percentile(m[key], 50) / percentile(h[key], 50);
      process.stdout.write(
        `| ${label} | ${fmt(percentile(m[key], 50))} | ${fmt(percentile(m[key], 99))} | ${fmt(percentile(h[key], 50))} | ${fmt(percentile(h[key], 99))} | ${ratio.toFixed(1)}× |\n`,
      );
    }
    const ratio = percentile(m.add, 50) / percentile(h.add, 50);
    process.stdout.write(
      `ADD p50 ratio ${ratio.toFixed(1)}×: ${ratio <= 4 ? 'meets' : 'MISSES'} the ≤ 4× target (load average now ${os.loadavg()[0].toFixed(2)})\n`,
    );
  } finally {
    await web.stop();
    await bench.close();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
