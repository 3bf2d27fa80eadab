/**
 * `meridian-ipam install`, run as the BUILT executable's subcommand into temporary roots: the files
 * it writes (modes, contents, paths as the node sees them), idempotence, token rotation, a foreign
 * conflist left alone unless --force, usage errors, and --watch repairing what was removed.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pluginExecutable } from './test-support/plugin-executable';

let dir = '';
let plugin = '';
let roots = 0;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'meridian-ipam-install-'));
  plugin = await pluginExecutable(path.join(dir, 'build'));
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(plugin, ['install', ...args], {
      env: { PATH: '/usr/bin:/bin', ...env } as Record<string, string> as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const newRoot = async () => {
  const root = path.join(dir, `root${roots++}`);
  await mkdir(root);
  return root;
};
const base = (root: string) => ['--server-url', 'http://192.0.2.10:8080', '--cluster', 'k1', '--project', 'acme', '--root', root];
const TOKEN = { MERIDIAN_CNI_TOKEN: 'mrd_tok_INSTALL_0123456789' };
const conflistPath = (root: string) => path.join(root, 'etc/cni/net.d/10-meridian.conflist');
const mode = async (p: string) => (await stat(p)).mode & 0o7777;
const outcomes = (r: Run) =>
  Object.fromEntries(
    r.stdout
      .trim()
      .split('\n')
      .map((l) => [l.split(/\s+/)[1], l.split(/\s+/)[0]]),
  );

describe('meridian-ipam install', () => {
  it('writes the executable (0755), the token (0600 in a 0700 directory) and a conflist chaining bridge, meridian-ipam and portmap', async () => {
    const root = await newRoot();
    const r = await run([...base(root), '--network', 'vpc', '--node-name', 'node-7'], TOKEN);
    expect(r.status, r.stderr).toBe(0);
    const bin = path.join(root, 'opt/cni/bin/meridian-ipam');
    expect(await mode(bin)).toBe(0o755);
    expect((await readFile(bin)).equals(await readFile(plugin))).toBe(true);
    const token = path.join(root, 'etc/cni/net.d/meridian-ipam/token');
    expect(await mode(token)).toBe(0o600);
    expect(await mode(path.dirname(token))).toBe(0o700);
    expect(await readFile(token, 'utf8')).toBe(`${TOKEN.MERIDIAN_CNI_TOKEN}\n`);
    const conf = JSON.parse(await readFile(conflistPath(root), 'utf8'));
    expect(conf).toEqual({
      cniVersion: '1.0.0',
      name: 'meridian',
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: {
            type: 'meridian-ipam',
            serverUrl: 'http://192.0.2.10:8080',
            // As the node sees it: without the --root prefix.
            tokenFile: '/etc/cni/net.d/meridian-ipam/token',
            cluster: 'k1',
            project: 'acme',
            network: 'vpc',
            node: 'node-7',
            routes: [{ dst: '0.0.0.0/0' }],
          },
        },
        { type: 'portmap', capabilities: { portMappings: true }, snat: true },
      ],
    });
    expect(outcomes(r)).toEqual({ [bin]: 'installed', [token]: 'installed', [conflistPath(root)]: 'installed' });
    // bridge and portmap are not in this root's bin directory: said, not fatal.
    expect(r.stderr).toContain('bridge plugin');
    // Nothing left behind but the three files.
    expect((await readdir(path.join(root, 'etc/cni/net.d'))).sort()).toEqual(['10-meridian.conflist', 'meridian-ipam']);
    expect(await readdir(path.join(root, 'opt/cni/bin'))).toEqual(['meridian-ipam']);
  });

  it('is idempotent: a second run changes nothing; a new token replaces only the token file', async () => {
    const root = await newRoot();
    expect((await run(base(root), TOKEN)).status).toBe(0);
    const before = await stat(conflistPath(root));
    const again = await run(base(root), TOKEN);
    expect(again.status, again.stderr).toBe(0);
    expect(new Set(Object.values(outcomes(again)))).toEqual(new Set(['unchanged']));
    expect((await stat(conflistPath(root))).mtimeMs).toBe(before.mtimeMs);
    const rotated = await run(base(root), { MERIDIAN_CNI_TOKEN: 'mrd_tok_ROTATED_9876543210' });
    expect(rotated.status, rotated.stderr).toBe(0);
    const o = outcomes(rotated);
    expect(o[path.join(root, 'etc/cni/net.d/meridian-ipam/token')]).toBe('updated');
    expect(o[conflistPath(root)]).toBe('unchanged');
    expect(await readFile(path.join(root, 'etc/cni/net.d/meridian-ipam/token'), 'utf8')).toBe('mrd_tok_ROTATED_9876543210\n');
  });

  it('leaves a foreign conflist of the same name alone (exit 1) unless --force', async () => {
    const root = await newRoot();
    await mkdir(path.dirname(conflistPath(root)), { recursive: true });
    const foreign = JSON.stringify({ cniVersion: '1.0.0', name: 'other', plugins: [{ type: 'flannel' }] });
    await writeFile(conflistPath(root), foreign);
    const refused = await run(base(root), TOKEN);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('another network plugin');
    expect(await readFile(conflistPath(root), 'utf8')).toBe(foreign);
    const forced = await run([...base(root), '--force'], TOKEN);
    expect(forced.status, forced.stderr).toBe(0);
    expect(JSON.parse(await readFile(conflistPath(root), 'utf8')).plugins[0].ipam.type).toBe('meridian-ipam');
  });

  it('says when another configuration sorts first (the runtime would use that one)', async () => {
    const root = await newRoot();
    await mkdir(path.dirname(conflistPath(root)), { recursive: true });
    await writeFile(path.join(root, 'etc/cni/net.d/05-other.conflist'), '{}');
    const r = await run(base(root), TOKEN);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('05-other.conflist sorts before 10-meridian.conflist');
  });

  it('takes the token from --token-file, another main plugin and its fields, no portmap, a CA bundle and other directories', async () => {
    const root = await newRoot();
    const tokenFile = path.join(dir, 'secret-token');
    await writeFile(tokenFile, 'mrd_tok_FROM_FILE_1111\n');
    const ca = path.join(dir, 'ca.pem');
    await writeFile(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const r = await run([
      ...base(root).map((a) => (a === 'http://192.0.2.10:8080' ? 'https://meridian.example:8443' : a)),
      '--token-file',
      tokenFile,
      '--main-plugin',
      'ptp',
      '--main-plugin-config',
      '{"mtu":1400}',
      '--no-portmap',
      '--ca-file',
      ca,
      '--cni-bin-dir',
      '/usr/libexec/cni',
      '--cni-conf-dir',
      '/etc/kubernetes/cni/net.d',
      '--conf-name',
      '20-pods.conflist',
      '--network-name',
      'pods',
      '--timeout-ms',
      '3000',
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(path.join(root, 'usr/libexec/cni/meridian-ipam'))).toBe(true);
    const conf = JSON.parse(await readFile(path.join(root, 'etc/kubernetes/cni/net.d/20-pods.conflist'), 'utf8'));
    expect(conf.name).toBe('pods');
    expect(conf.plugins).toHaveLength(1);
    expect(conf.plugins[0]).toMatchObject({
      type: 'ptp',
      mtu: 1400,
      ipam: { tokenFile: '/etc/kubernetes/cni/net.d/meridian-ipam/token', caFile: '/etc/kubernetes/cni/net.d/meridian-ipam/ca.pem', timeoutMs: 3000 },
    });
    expect(conf.plugins[0].bridge).toBeUndefined();
    expect(await readFile(path.join(root, 'etc/kubernetes/cni/net.d/meridian-ipam/token'), 'utf8')).toBe('mrd_tok_FROM_FILE_1111\n');
    expect(await readFile(path.join(root, 'etc/kubernetes/cni/net.d/meridian-ipam/ca.pem'), 'utf8')).toContain('BEGIN CERTIFICATE');
  });

  it.each([
    [['--cluster', 'k1'], TOKEN, '--server-url is required'],
    [['--server-url', 'http://192.0.2.1'], TOKEN, '--cluster is required'],
    [['--server-url', 'http://192.0.2.1', '--cluster', 'k1'], {}, 'no token'],
    [['--server-url', 'http://192.0.2.1', '--cluster', 'k1', '--cni-conf-dir', 'etc/cni'], TOKEN, 'absolute path'],
    [['--server-url', 'ftp://192.0.2.1', '--cluster', 'k1'], TOKEN, 'ipam.serverUrl'],
    [['--server-url', 'http://192.0.2.1', '--cluster', 'k1', '--main-plugin-config', '{"ipam":{}}'], TOKEN, 'must not set ipam'],
    [['--server-url', 'http://192.0.2.1', '--cluster', 'k1', '--frobnicate'], TOKEN, 'unknown option --frobnicate'],
  ] as const)('usage error %j → exit 2, nothing written', async (args, env, message) => {
    const root = await newRoot();
    const r = await run([...args, '--root', root], env);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
    expect(await readdir(root)).toEqual([]);
  });

  it('--watch installs again what was removed, and stops on SIGTERM with exit 0', async () => {
    const root = await newRoot();
    const child = spawn(plugin, ['install', ...base(root), '--watch', '1'], {
      env: { PATH: '/usr/bin:/bin', ...TOKEN } as Record<string, string> as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (status) => resolve(status)));
    const token = path.join(root, 'etc/cni/net.d/meridian-ipam/token');
    const waitFor = async (what: () => boolean) => {
      for (let i = 0; i < 100 && !what(); i++) await new Promise((r) => setTimeout(r, 100));
      return what();
    };
    expect(await waitFor(() => existsSync(conflistPath(root)))).toBe(true);
    await rm(token);
    expect(await waitFor(() => existsSync(token))).toBe(true);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
