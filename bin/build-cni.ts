/**
 * `npm run build:cni`: compiles the CNI IPAM plugin (cni/) into ONE self-contained executable per
 * architecture with Bun (`bun build --compile`, the npm package `bun`, a devDependency pinned
 * exactly): the JavaScript runtime and the plugin's bytecode in one file that needs nothing on the
 * node but glibc — no Node.js, no npm. docs/cni.md has the measurements behind the
 * choice (start-up, size, suites).
 *
 *   dist/cni/linux-amd64/meridian-ipam    dist/cni/linux-arm64/meridian-ipam
 *   dist/cni/meridian-ipam                → this machine's architecture (a symlink)
 *
 * The directory names are the container platforms' (`TARGETARCH`): the meridian-ipam image
 * (bin/build-images.ts) copies its platform's.
 *
 * Each executable embeds Bun's runtime for its CPU, handed to Bun with `--compile-executable-path`
 * so that Bun itself downloads nothing: for x64 the baseline build (no AVX2 needed),
 * `@oven/bun-linux-x64-baseline`, an optional dependency of ours; for arm64 `@oven/bun-linux-aarch64`,
 * an optional dependency of `bun`. A runtime npm did not install (the other architecture's) is
 * fetched once with `npm pack` (from the npm registry, integrity-checked by npm) into
 * node_modules/.cache/meridian-cni. `--target linux-amd64` (or `linux-arm64`) builds one architecture only.
 */
import { execFile } from 'node:child_process';
import { existsSync, openSync, readSync, closeSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rename, rm, symlink, unlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

/** The architectures the plugin is built for, named as container platforms name them. */
export const CNI_TARGETS = ['linux-amd64', 'linux-arm64'] as const;
export type CniTarget = (typeof CNI_TARGETS)[number];

/** Bun's name of each architecture: its `--target` and its runtime package on npm. */
const BUN: Record<CniTarget, { target: string; pkg: string }> = {
  // Bun's baseline build: runs on x86-64 CPUs without AVX2.
  'linux-amd64': { target: 'bun-linux-x64-baseline', pkg: '@oven/bun-linux-x64-baseline' },
  'linux-arm64': { target: 'bun-linux-arm64', pkg: '@oven/bun-linux-aarch64' },
};

export const defaultCniOutFile = path.join(root, 'dist', 'cni', 'meridian-ipam');

/** This machine's target, or undefined where none of CNI_TARGETS runs (the plugin is Linux-only). */
export function hostTarget(): CniTarget | undefined {
  if (process.platform !== 'linux') return undefined;
  return process.arch === 'x64' ? 'linux-amd64' : process.arch === 'arm64' ? 'linux-arm64' : undefined;
}

const isElf = (file: string): boolean => {
  if (!existsSync(file)) return false;
  const fd = openSync(file, 'r');
  try {
    const magic = Buffer.alloc(4);
    return readSync(fd, magic, 0, 4, 0) === 4 && magic.toString('latin1') === '\x7fELF';
  } finally {
    closeSync(fd);
  }
};

const bunPackageDir = () => path.dirname(require.resolve('bun/package.json'));

/** The version of the installed `bun` package (the runtime the executables embed). */
export function bunVersion(): string {
  return (JSON.parse(readFileSync(path.join(bunPackageDir(), 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * The Bun binary npm installed for this machine. `bun`'s postinstall (which npm runs or not,
 * depending on its version and on package.json `allowScripts`) moves it from the platform package
 * to `bun/bin/bun.exe`; both places are looked at.
 */
export function hostBun(): string {
  const host = hostTarget();
  const candidates: string[] = [];
  if (host) {
    try {
      candidates.push(path.join(path.dirname(require.resolve(`${BUN[host].pkg}/package.json`, { paths: [bunPackageDir()] })), 'bin', 'bun'));
    } catch {
      // not installed as its own package: the postinstall may have moved the binary
    }
  }
  candidates.push(path.join(bunPackageDir(), 'bin', 'bun.exe'));
  const found = candidates.find(isElf);
  if (!found) throw new Error(`no Bun binary for ${process.platform}-${process.arch} in node_modules (looked at ${candidates.join(', ')}); run npm ci`);
  return found;
}

/**
 * The Bun runtime the executable for `target` embeds: its npm package as npm installed it (the x64
 * baseline runtime is an optional dependency, installed on x64 Linux), or else fetched once by
 * `npm pack` into node_modules/.cache — always the version of the installed `bun`.
 */
async function targetRuntime(target: CniTarget): Promise<string> {
  const version = bunVersion();
  try {
    const dir = path.dirname(require.resolve(`${BUN[target].pkg}/package.json`, { paths: [root, bunPackageDir()] }));
    const installed = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string };
    if (installed.version === version && isElf(path.join(dir, 'bin', 'bun'))) return path.join(dir, 'bin', 'bun');
  } catch {
    // not installed by npm (another architecture's runtime): fetched below
  }
  const cache = path.join(root, 'node_modules', '.cache', 'meridian-cni', `${BUN[target].pkg.replace('/', '+')}-${version}`);
  const binary = path.join(cache, 'package', 'bin', 'bun');
  if (isElf(binary)) return binary;
  const work = await mkdtemp(path.join(os.tmpdir(), 'meridian-bun-runtime-'));
  try {
    await exec('npm', ['pack', '--silent', '--pack-destination', work, `${BUN[target].pkg}@${version}`], { cwd: work, maxBuffer: 1 << 20 });
    const tarball = (await readdir(work)).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack ${BUN[target].pkg}@${version} wrote no tarball`);
    await exec('tar', ['-xzf', path.join(work, tarball), '-C', work]);
    await mkdir(path.dirname(cache), { recursive: true });
    await rm(cache, { recursive: true, force: true });
    await rename(work, cache);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  if (!isElf(binary)) throw new Error(`${BUN[target].pkg}@${version} holds no bin/bun`);
  return binary;
}

/**
 * Compiles the plugin for `target` (this machine's by default) into `outFile`; returns its path.
 * Tests build into a temporary directory with the defaults.
 */
export async function buildCni(options: { outFile?: string; target?: CniTarget } = {}): Promise<string> {
  const host = hostTarget();
  const target = options.target ?? host;
  if (!target) throw new Error(`the plugin is built for ${CNI_TARGETS.join(', ')}; this machine is ${process.platform}-${process.arch}: pass a target`);
  const outFile = options.outFile ?? (options.target ? path.join(root, 'dist', 'cni', target, 'meridian-ipam') : defaultCniOutFile);
  await mkdir(path.dirname(outFile), { recursive: true });
  const args = [
    'build',
    path.join(root, 'cni', 'bin.ts'),
    '--compile',
    `--target=${BUN[target].target}`,
    '--minify',
    // Precompiled bytecode: start-up without parsing or compiling the plugin's JavaScript.
    '--bytecode',
    // A plugin runs in whatever directory the runtime starts it in: it reads no .env or bunfig.toml there.
    '--no-compile-autoload-dotenv',
    '--no-compile-autoload-bunfig',
    `--outfile=${outFile}`,
  ];
  // Always the runtime named here, so Bun itself downloads nothing and the host's build is the one shipped.
  args.push(`--compile-executable-path=${await targetRuntime(target)}`);
  try {
    await exec(hostBun(), args, { cwd: root, maxBuffer: 16 << 20, env: { ...process.env, NO_COLOR: '1' } });
  } catch (e) {
    const { stdout, stderr } = e as { stdout?: string; stderr?: string };
    throw new Error(`bun build --compile for ${target} failed: ${(stderr || stdout || (e as Error).message).trim()}`, { cause: e });
  }
  await chmod(outFile, 0o755);
  return outFile;
}

/** The CLI: every target (or `--target T`), and dist/cni/meridian-ipam → this machine's. */
async function cli(argv: string[]) {
  const i = argv.indexOf('--target');
  const wanted = i >= 0 ? argv[i + 1] : undefined;
  if (wanted !== undefined && !(CNI_TARGETS as readonly string[]).includes(wanted)) throw new Error(`--target must be one of ${CNI_TARGETS.join(', ')}`);
  const targets = wanted ? [wanted as CniTarget] : [...CNI_TARGETS];
  for (const target of targets) {
    const out = await buildCni({ target });
    process.stdout.write(`built ${path.relative(process.cwd(), out)} (Bun ${bunVersion()}, ${BUN[target].target})\n`);
  }
  const host = hostTarget();
  if (host && targets.includes(host)) {
    await unlink(defaultCniOutFile).catch(() => undefined);
    await symlink(path.join(host, 'meridian-ipam'), defaultCniOutFile);
    process.stdout.write(`linked ${path.relative(process.cwd(), defaultCniOutFile)} → ${host}/meridian-ipam\n`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  cli(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  });
}
