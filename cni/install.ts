/**
 * `meridian-ipam install`: puts the plugin on a node the way CNI plugins are installed — the
 * executable into the CNI bin directory, the cluster token into a file only root can read, and a
 * network configuration list that chains a main plugin (Debian-style `bridge` by default) with
 * `meridian-ipam` for IPAM, then `portmap`. Run by hand on a node, or by the DaemonSet in
 * deploy/kubernetes/cni/ with the host's directories mounted under `--root`.
 *
 * Every file is written atomically (a temporary file in the same directory, fsync, rename, fsync of
 * the directory): the runtime never sees half a conflist or half an executable. Running it again
 * with the same options changes nothing ("unchanged"); a changed token or a new executable
 * replaces the old one. A conflist of the same name that does not chain meridian-ipam belongs to
 * another network plugin: it is left alone (exit 1) unless `--force` is given.
 *
 * `--root` is a prefix for the files written only: the conflist names paths as the node sees them
 * (`--root /host` with the host's /etc/cni/net.d mounted at /host/etc/cni/net.d).
 */
import { createHash } from 'node:crypto';
import { constants, existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, open, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseNetConf } from './config';
import { CniError } from './errors';

export const PLUGIN_NAME = 'meridian-ipam';

export interface InstallOptions {
  serverUrl: string;
  cluster: string;
  project?: string;
  network?: string;
  /** The token itself (from `--token-file` or MERIDIAN_CNI_TOKEN). */
  token: string;
  /** Node name for the leases (`ipam.node`); without it the plugin uses the host name. */
  nodeName?: string;
  timeoutMs?: number;
  /** A PEM CA bundle to trust for an https serverUrl: copied next to the token. */
  caFile?: string;
  cniBinDir: string;
  cniConfDir: string;
  root: string;
  /** The executable to install (the running one by default). */
  plugin: string;
  confName: string;
  networkName: string;
  cniVersion: string;
  mainPlugin: string;
  /** Fields merged over the main plugin's defaults (JSON object). */
  mainPluginConfig: Record<string, unknown>;
  portmap: boolean;
  force: boolean;
}

export class UsageError extends Error {}

/** The defaults of a main plugin by type: `bridge` as a node-local pod network with its own gateway. */
function mainPluginDefaults(type: string): Record<string, unknown> {
  if (type === 'bridge') return { type, bridge: 'cni0', isGateway: true, ipMasq: true, hairpinMode: true };
  return { type };
}

/** Where the token (and a CA bundle) live on the node: a directory of ours inside the CNI config directory. */
export function secretDir(cniConfDir: string): string {
  return path.join(cniConfDir, PLUGIN_NAME);
}

/** The network configuration list the options describe (paths as the node sees them). */
export function conflistFor(o: InstallOptions): Record<string, unknown> {
  const ipam: Record<string, unknown> = {
    type: PLUGIN_NAME,
    serverUrl: o.serverUrl,
    tokenFile: path.join(secretDir(o.cniConfDir), 'token'),
    cluster: o.cluster,
  };
  if (o.project) ipam.project = o.project;
  if (o.network) ipam.network = o.network;
  if (o.nodeName) ipam.node = o.nodeName;
  if (o.timeoutMs !== undefined) ipam.timeoutMs = o.timeoutMs;
  if (o.caFile) ipam.caFile = path.join(secretDir(o.cniConfDir), 'ca.pem');
  ipam.routes = [{ dst: '0.0.0.0/0' }];
  const main = { ...mainPluginDefaults(o.mainPlugin), ...o.mainPluginConfig, type: o.mainPlugin, ipam };
  const plugins: Record<string, unknown>[] = [main];
  if (o.portmap) plugins.push({ type: 'portmap', capabilities: { portMappings: true }, snat: true });
  return { cniVersion: o.cniVersion, name: o.networkName, plugins };
}

/** Whether a conflist on disk is one this installer wrote: it chains meridian-ipam as some plugin's IPAM. */
function chainsMeridian(text: string): boolean {
  try {
    const conf = JSON.parse(text) as { plugins?: { ipam?: { type?: unknown } }[] };
    return Array.isArray(conf.plugins) && conf.plugins.some((p) => p?.ipam?.type === PLUGIN_NAME);
  } catch {
    return false;
  }
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export type FileOutcome = 'installed' | 'updated' | 'unchanged';

/**
 * What this process last wrote or found in place, by file: when a file's identity, size and
 * times are still these and the content wanted is the same, it is not read again (`--watch`
 * checks a 100 MB executable every cycle).
 */
const known = new Map<string, { ino: number; size: number; mtimeMs: number; ctimeMs: number; mode: number; sha: string }>();

/**
 * Writes `content` to `file` with `mode` atomically: a temporary file beside it, fsync, rename over
 * the old one, fsync of the directory. Nothing is written when the file already holds exactly this
 * content with this mode.
 */
export async function writeAtomic(file: string, content: Buffer, mode: number): Promise<FileOutcome> {
  const dir = path.dirname(file);
  const sha = sha256(content);
  let existed = false;
  try {
    const st = await stat(file);
    existed = true;
    const seen = known.get(file);
    const same = (f: { ino: number; size: number; mtimeMs: number; ctimeMs: number }) =>
      f.ino === st.ino && f.size === st.size && f.mtimeMs === st.mtimeMs && f.ctimeMs === st.ctimeMs;
    if (st.isFile() && (st.mode & 0o7777) === mode && st.size === content.length) {
      if (seen && same(seen) && seen.sha === sha && seen.mode === mode) return 'unchanged';
      if (sha256(await readFile(file)) === sha) {
        known.set(file, { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, mode, sha });
        return 'unchanged';
      }
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const tmp = path.join(dir, `.${path.basename(file)}.tmp-${process.pid}`);
  const fh = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, mode);
  try {
    await fh.writeFile(content);
    await fh.chmod(mode); // the umask narrowed the mode given to open
    await fh.sync();
  } catch (e) {
    await fh.close();
    await rm(tmp, { force: true });
    throw e;
  }
  await fh.close();
  try {
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  const d = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await d.sync();
  } finally {
    await d.close();
  }
  const st = await stat(file);
  known.set(file, { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, mode, sha });
  return existed ? 'updated' : 'installed';
}

/** The executable to install, read once per process (it is the running one, or a file named once). */
let pluginContent: { file: string; bytes: Buffer } | undefined;
async function pluginBytes(file: string): Promise<Buffer> {
  if (pluginContent?.file === file) return pluginContent.bytes;
  const bytes = await readFile(file).catch((e: NodeJS.ErrnoException) => {
    throw new Error(`cannot read the plugin executable ${file}: ${e.code ?? e.message}`);
  });
  pluginContent = { file, bytes };
  return bytes;
}

/** Runs one installation; returns what happened to each file (and warnings). Throws UsageError / Error. */
export async function install(o: InstallOptions): Promise<{ files: { file: string; outcome: FileOutcome }[]; warnings: string[] }> {
  const conflist = conflistFor(o);
  // The plugin's own validation of what it will be given (cniVersion and name come from the list).
  const plugins = conflist.plugins as Record<string, unknown>[];
  try {
    parseNetConf(JSON.stringify({ ...plugins[0], cniVersion: o.cniVersion, name: o.networkName }));
  } catch (e) {
    if (e instanceof CniError) throw new UsageError(`the configuration would be refused by the plugin: ${e.msg}`);
    throw e;
  }
  const at = (p: string) => path.join(o.root, p);
  const binDir = at(o.cniBinDir);
  const confDir = at(o.cniConfDir);
  const secrets = at(secretDir(o.cniConfDir));
  const confFile = path.join(confDir, o.confName);
  const warnings: string[] = [];

  if (existsSync(confFile) && !o.force && !chainsMeridian(readFileSync(confFile, 'utf8'))) {
    throw new Error(`${confFile} exists and does not chain ${PLUGIN_NAME}: it belongs to another network plugin (--force replaces it)`);
  }
  const executable = await pluginBytes(o.plugin);

  await mkdir(binDir, { recursive: true, mode: 0o755 });
  await mkdir(confDir, { recursive: true, mode: 0o755 });
  await mkdir(secrets, { recursive: true, mode: 0o700 });
  await chmod(secrets, 0o700);

  const files: { file: string; outcome: FileOutcome }[] = [];
  const put = async (file: string, content: Buffer, mode: number) => files.push({ file, outcome: await writeAtomic(file, content, mode) });
  await put(path.join(binDir, PLUGIN_NAME), executable, 0o755);
  await put(path.join(secrets, 'token'), Buffer.from(`${o.token}\n`), 0o600);
  if (o.caFile) {
    const pem = await readFile(o.caFile).catch((e: NodeJS.ErrnoException) => {
      throw new Error(`cannot read --ca-file ${o.caFile}: ${e.code ?? e.message}`);
    });
    await put(path.join(secrets, 'ca.pem'), pem, 0o644);
  }
  // Last: the runtime picks the network up once the conflist is there, and by then all it names is.
  await put(confFile, Buffer.from(`${JSON.stringify(conflist, null, 2)}\n`), 0o644);

  for (const type of plugins.map((p) => String(p.type)).filter((t) => t !== PLUGIN_NAME)) {
    if (!existsSync(path.join(binDir, type)))
      warnings.push(`${path.join(binDir, type)} is missing: the runtime needs the ${type} plugin there (e.g. Debian's containernetworking-plugins)`);
  }
  // Runtimes use the first configuration file in lexical order.
  const first = (await readdir(confDir)).filter((f) => /\.(conflist|conf|json)$/.test(f)).sort()[0];
  if (first && first !== o.confName) warnings.push(`${path.join(confDir, first)} sorts before ${o.confName}: the runtime uses that one, not ${PLUGIN_NAME}'s`);
  return { files, warnings };
}

const USAGE = `usage: meridian-ipam install --server-url URL --cluster NAME [options]

  --server-url URL          Meridian's address (http or https)
  --cluster NAME            the cluster, as registered in Meridian
  --project SLUG            the project (default: the token's own)
  --network NAME            the Meridian network (informational)
  --token-file PATH         file holding the cluster token (default: env MERIDIAN_CNI_TOKEN)
  --node-name NAME          node name for the leases (default: env NODE_NAME, else the host name at each call)
  --ca-file PATH            PEM CA bundle to trust for an https server (copied to the node)
  --timeout-ms N            the plugin's deadline per call
  --cni-bin-dir DIR         default /opt/cni/bin
  --cni-conf-dir DIR        default /etc/cni/net.d
  --root DIR                prefix for every file written (the host's / mounted elsewhere); default /
  --conf-name FILE          default 10-meridian.conflist
  --network-name NAME       the CNI network's name; default meridian
  --cni-version V           default 1.0.0
  --main-plugin TYPE        default bridge
  --main-plugin-config JSON fields merged over the main plugin's defaults, e.g. '{"bridge":"br-pods"}'
  --no-portmap              do not chain portmap
  --plugin PATH             the executable to install (default: this one)
  --force                   replace a conflist of the same name that does not chain meridian-ipam
  --watch SECONDS           install again every SECONDS until SIGTERM (a DaemonSet's container)`;

const VALUE_FLAGS = new Set([
  'server-url',
  'cluster',
  'project',
  'network',
  'token-file',
  'node-name',
  'ca-file',
  'timeout-ms',
  'cni-bin-dir',
  'cni-conf-dir',
  'root',
  'conf-name',
  'network-name',
  'cni-version',
  'main-plugin',
  'main-plugin-config',
  'plugin',
  'watch',
]);
const BOOL_FLAGS = new Set(['no-portmap', 'force', 'help']);

/** Parses the command line (and MERIDIAN_CNI_TOKEN, NODE_NAME) into options; UsageError names what is wrong. */
export function parseInstallArgs(argv: string[], env: Record<string, string | undefined>): InstallOptions & { watchSeconds?: number; help?: boolean } {
  const v: Record<string, string> = {};
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (BOOL_FLAGS.has(name) && eq < 0) {
      flags.add(name);
      continue;
    }
    if (!VALUE_FLAGS.has(name)) throw new UsageError(`unknown option --${name}`);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    v[name] = value;
  }
  if (flags.has('help')) return { help: true } as InstallOptions & { help: true };
  for (const required of ['server-url', 'cluster']) if (!v[required]) throw new UsageError(`--${required} is required`);
  let token: string;
  if (v['token-file']) {
    try {
      token = readFileSync(v['token-file'], 'utf8').trim();
    } catch (e) {
      throw new UsageError(`cannot read --token-file ${v['token-file']}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  } else {
    token = (env.MERIDIAN_CNI_TOKEN ?? '').trim();
  }
  if (!token) throw new UsageError('no token: give --token-file or set MERIDIAN_CNI_TOKEN');
  if (!/^[\x21-\x7e]+$/.test(token)) throw new UsageError('the token must be one line of printable ASCII without spaces');
  for (const dir of ['cni-bin-dir', 'cni-conf-dir', 'root'])
    if (v[dir] !== undefined && !path.isAbsolute(v[dir])) throw new UsageError(`--${dir} must be an absolute path`);
  const int = (name: string, min: number, max: number) => {
    if (v[name] === undefined) return undefined;
    const n = Number(v[name]);
    if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer between ${min} and ${max}`);
    return n;
  };
  let mainPluginConfig: Record<string, unknown> = {};
  if (v['main-plugin-config'] !== undefined) {
    try {
      mainPluginConfig = JSON.parse(v['main-plugin-config']) as Record<string, unknown>;
    } catch {
      throw new UsageError('--main-plugin-config must be a JSON object');
    }
    if (typeof mainPluginConfig !== 'object' || mainPluginConfig === null || Array.isArray(mainPluginConfig))
      throw new UsageError('--main-plugin-config must be a JSON object');
    if ('ipam' in mainPluginConfig) throw new UsageError('--main-plugin-config must not set ipam: it is meridian-ipam');
  }
  const confName = v['conf-name'] ?? '10-meridian.conflist';
  if (confName.includes('/') || !confName.endsWith('.conflist')) throw new UsageError('--conf-name must be a file name ending in .conflist');
  return {
    serverUrl: v['server-url'],
    cluster: v.cluster,
    project: v.project,
    network: v.network,
    token,
    nodeName: v['node-name'] ?? (env.NODE_NAME?.trim() || undefined),
    timeoutMs: int('timeout-ms', 1, 300_000),
    caFile: v['ca-file'],
    cniBinDir: v['cni-bin-dir'] ?? '/opt/cni/bin',
    cniConfDir: v['cni-conf-dir'] ?? '/etc/cni/net.d',
    root: v.root ?? '/',
    plugin: v.plugin ?? process.execPath,
    confName,
    networkName: v['network-name'] ?? 'meridian',
    cniVersion: v['cni-version'] ?? '1.0.0',
    mainPlugin: v['main-plugin'] ?? 'bridge',
    mainPluginConfig,
    portmap: !flags.has('no-portmap'),
    force: flags.has('force'),
    watchSeconds: int('watch', 1, 86_400),
  };
}

const say = (line: string) => process.stdout.write(`${line}\n`);

/** The `install` subcommand: exit 0 when installed, 1 on a failure, 2 on a usage error. */
export async function runInstall(argv: string[]): Promise<number> {
  let options: ReturnType<typeof parseInstallArgs>;
  try {
    options = parseInstallArgs(argv, process.env);
  } catch (e) {
    process.stderr.write(`meridian-ipam install: ${(e as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (options.help) {
    say(USAGE);
    return 0;
  }
  if (!options.plugin || (!process.versions.bun && options.plugin === process.execPath)) {
    process.stderr.write('meridian-ipam install: run the compiled executable, or name it with --plugin\n');
    return 2;
  }
  const once = async (): Promise<number> => {
    try {
      const { files, warnings } = await install(options);
      for (const f of files) say(`${f.outcome.padEnd(9)} ${f.file}`);
      for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
      return 0;
    } catch (e) {
      process.stderr.write(`meridian-ipam install: ${(e as Error).message}\n`);
      return e instanceof UsageError ? 2 : 1;
    }
  };
  const status = await once();
  if (options.watchSeconds === undefined || status === 2) return status;
  // Keep the files as they should be (token rotated through the Secret, files removed by hand)
  // until the container is stopped.
  return new Promise<number>((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = () => {
      if (timer) clearTimeout(timer);
      resolve(0);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    const tick = () => {
      timer = setTimeout(async () => {
        await once();
        tick();
      }, options.watchSeconds! * 1000);
    };
    tick();
  });
}
