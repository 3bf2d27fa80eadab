/**
 * The images as built by `npm run build:images`, run for real. `podman run` is refused in this
 * sandbox, so the meridian image's root file system (`buildah from oci-archive:` + `buildah mount`)
 * is run the way a container runtime would: its own mount and PID namespaces, the root bind-mounted
 * read-only, only the data volume writable, the image's user, working directory, environment and
 * entry point as its configuration says (`unshare --root --wd --setuid --setgid`). The host's
 * network is shared, so the processes reach a PostgreSQL on loopback and the test reaches them.
 *
 * Checked: `migrate` applies the migrations; `worker` runs a job; `web` answers /readyz; every
 * process runs as the image's non-root user; no path of the image is writable by that user but the
 * data volume (and the running root is read-only: a write there fails). Sizes and digests are printed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { lstat, mkdtemp, readdir, rm, chown } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImages, DATA_DIR, IMAGE_UID, IMAGES, imagesDir, IPAM_IMAGE } from '@/bin/build-images';
import { freshDatabase } from '@/test/system/harness';
import { freePort } from '@/test/global-setup';

/** A child's whole environment (nothing inherited from this process). */
const childEnv = (vars: Record<string, string>): NodeJS.ProcessEnv => ({ ...vars }) as NodeJS.ProcessEnv;

function missing(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (buildah, mount namespaces)';
  for (const tool of ['buildah', 'mmdebstrap', 'unshare']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is not installed (Debian: apt-get install buildah mmdebstrap)`;
  }
  return undefined;
}
const skip = missing();
if (skip) process.stderr.write(`[images smoke test] skipped: ${skip}\n`);

const buildah = (...args: string[]) => {
  const r = spawnSync('buildah', ['--storage-driver=vfs', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`buildah ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

interface ImageConfig {
  User: string;
  Env: string[];
  Entrypoint: string[];
  Cmd?: string[];
  WorkingDir: string;
  Labels: Record<string, string>;
  Volumes?: Record<string, unknown>;
}

describe.skipIf(skip !== undefined)(`the meridian image, run from its root file system${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let container = '';
  let rootfs = '';
  let config: ImageConfig;
  let dataDir = '';
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  const running: ChildProcess[] = [];

  beforeAll(async () => {
    const built = await buildImages(['meridian', 'meridian-ipam']);
    for (const [name, { sizeMB, digest }] of Object.entries(built)) {
      process.stdout.write(`[images] ${name}: ${sizeMB.toFixed(1)} MB (target ≤ ${IMAGES[name as keyof typeof IMAGES].maxMB} MB) ${digest}\n`);
    }
    container = buildah('from', '--quiet', `oci-archive:${path.join(imagesDir, IMAGES.meridian.archive)}`);
    rootfs = buildah('mount', container);
    config = (JSON.parse(buildah('inspect', '--type', 'container', container)) as { OCIv1: { config: ImageConfig } }).OCIv1.config;
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'meridian-image-data-'));
    await chown(dataDir, IMAGE_UID, IMAGE_UID);
    db = await freshDatabase();
  });

  afterAll(async () => {
    for (const p of running) p.kill('SIGKILL');
    await db?.drop().catch(() => {});
    if (container) buildah('rm', container);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** The image's entry point with `args`, as its runtime would start it; env added to the image's. */
  function runImage(args: string[], env: Record<string, string>): ChildProcess {
    const [uid, gid] = config.User.split(':');
    const setup = [
      'set -e',
      'mount --make-rprivate /',
      // The root read-only, as readOnlyRootFilesystem makes it; then the volumes over it.
      'mount --bind "$R" "$R"',
      'mount -o remount,bind,ro "$R"',
      `mount --bind "$D" "$R${DATA_DIR}"`,
      'mount -t proc proc "$R/proc"',
      'mount --rbind /dev "$R/dev"',
      `exec unshare --root="$R" --wd=${config.WorkingDir} --setuid ${uid} --setgid ${gid} -- "$@"`,
    ].join('\n');
    const imageEnv = Object.fromEntries(config.Env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
    const child = spawn('unshare', ['--mount', '--pid', '--fork', '--', 'sh', '-c', setup, 'sh', ...config.Entrypoint, ...args], {
      env: childEnv({ ...imageEnv, PATH: '/usr/sbin:/usr/bin:/sbin:/bin', R: rootfs, D: dataDir, ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    Object.defineProperty(child, 'log', { get: () => log });
    running.push(child);
    return child;
  }
  const logOf = (c: ChildProcess) => (c as ChildProcess & { log: string }).log;
  const exited = (c: ChildProcess) => new Promise<number | null>((resolve) => c.on('exit', (code) => resolve(code)));

  /** Host PIDs of the processes running inside the image's root. */
  function imageProcesses(): { pid: number; uid: number; gid: number; groups: string }[] {
    const found = [];
    for (const entry of spawnSync('ls', ['/proc'], { encoding: 'utf8' }).stdout.split('\n')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readlinkSync(`/proc/${entry}/root`) !== rootfs) continue;
        const status = readFileSync(`/proc/${entry}/status`, 'utf8');
        const uid = Number(/^Uid:\s+(\d+)/m.exec(status)![1]);
        const gid = Number(/^Gid:\s+(\d+)/m.exec(status)![1]);
        found.push({ pid: Number(entry), uid, gid, groups: /^Groups:[ \t]*(.*)$/m.exec(status)![1].trim() });
      } catch {
        // gone meanwhile
      }
    }
    return found;
  }

  it('is configured to run as a non-root user, with labels, the data volume and a bill of materials', () => {
    expect(config.User).toBe(`${IMAGE_UID}:${IMAGE_UID}`);
    expect(config.Entrypoint.slice(-1)).toEqual(['/app/bin/container.ts']);
    expect(config.Cmd).toEqual(['web']);
    expect(Object.keys(config.Volumes ?? {})).toEqual([DATA_DIR]);
    for (const label of ['title', 'version', 'revision', 'created', 'source']) expect(config.Labels).toHaveProperty(`org.opencontainers.image.${label}`);
    // No shell, no package manager in the image.
    for (const p of ['bin/sh', 'usr/bin/sh', 'bin/bash', 'usr/bin/dash', 'usr/bin/apt', 'usr/bin/dpkg', 'usr/bin/perl'])
      expect(existsSync(path.join(rootfs, p)), p).toBe(false);
    const sbom = JSON.parse(readFileSync(path.join(imagesDir, 'meridian.sbom.spdx.json'), 'utf8')) as { packages: { name: string; versionInfo: string }[] };
    const names = sbom.packages.map((p) => p.name);
    for (const n of ['libc6', 'node', 'next', 'drizzle-orm', 'postgres', 'graphile-worker']) expect(names).toContain(n);
  });

  it('meridian-ipam: the installer as entry point, its executable in the image, non-root by default', () => {
    const ipam = buildah('from', '--quiet', `oci-archive:${path.join(imagesDir, IMAGES['meridian-ipam'].archive)}`);
    try {
      const mount = buildah('mount', ipam);
      const ipamConfig = (JSON.parse(buildah('inspect', '--type', 'container', ipam)) as { OCIv1: { config: ImageConfig } }).OCIv1.config;
      expect(ipamConfig.Entrypoint).toEqual(IPAM_IMAGE.entrypoint);
      expect(ipamConfig.User).toBe(`${IMAGE_UID}:${IMAGE_UID}`);
      // The executable needs nothing but glibc: it runs in the image's root as its user, with /proc
      // mounted as a runtime mounts it (a self-contained Bun executable reads itself through
      // /proc/self/exe), and prints its usage.
      const r = spawnSync(
        'unshare',
        [
          '--mount',
          '--pid',
          '--fork',
          '--',
          'sh',
          '-c',
          `mount --make-rprivate / && mount -t proc proc "$R/proc" && exec unshare --root="$R" --setuid ${IMAGE_UID} --setgid ${IMAGE_UID} -- ${IPAM_IMAGE.binary} install --help`,
        ],
        { encoding: 'utf8', env: childEnv({ PATH: '/usr/sbin:/usr/bin:/sbin:/bin', R: mount }) },
      );
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).toMatch(/--cni-bin-dir/);
    } finally {
      buildah('rm', ipam);
    }
  });

  it('leaves nothing in the image writable by its user but the data volume', async () => {
    const writable: string[] = [];
    const walk = async (dir: string) => {
      for (const name of await readdir(dir)) {
        const full = path.join(dir, name);
        const rel = `/${path.relative(rootfs, full)}`;
        if (['/proc', '/sys', '/dev', DATA_DIR].includes(rel)) continue;
        const st = await lstat(full);
        if (st.isSymbolicLink()) continue;
        const w = (st.uid === IMAGE_UID && st.mode & 0o200) || (st.gid === IMAGE_UID && st.mode & 0o020) || st.mode & 0o002;
        if (w) writable.push(rel);
        if (st.isDirectory()) await walk(full);
      }
    };
    await walk(rootfs);
    expect(writable).toEqual([]);
    const data = await lstat(path.join(rootfs, DATA_DIR));
    expect(data.uid).toBe(IMAGE_UID);
  });

  it('migrates, runs a job in the worker and answers /readyz from web, as the non-root user on a read-only root', async () => {
    const env = { DATABASE_URL: db.url };
    const migrate = runImage(['migrate'], env);
    expect(await exited(migrate), logOf(migrate)).toBe(0);
    expect(logOf(migrate)).toMatch(/migration/i);

    // The read-only root: a write outside the data volume fails, one inside succeeds.
    const writeCheck = spawn(
      'unshare',
      [
        '--mount',
        '--',
        'sh',
        '-c',
        `mount --make-rprivate / && mount --bind "$R" "$R" && mount -o remount,bind,ro "$R" && mount --bind "$D" "$R${DATA_DIR}" && exec unshare --root="$R" --wd=/app --setuid ${IMAGE_UID} --setgid ${IMAGE_UID} -- /usr/local/bin/node -e "const fs=require('fs');let out=[];for(const p of ['/app/x','/tmp/x','/etc/x','${DATA_DIR}/x']){try{fs.writeFileSync(p,'x');out.push(p+':ok')}catch(e){out.push(p+':'+e.code)}}console.log(out.join(' '))"`,
      ],
      { env: childEnv({ PATH: '/usr/sbin:/usr/bin:/sbin:/bin', R: rootfs, D: dataDir }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    writeCheck.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    writeCheck.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    expect(await exited(writeCheck), out).toBe(0);
    expect(out.trim()).toBe(`/app/x:EROFS /tmp/x:EROFS /etc/x:EROFS ${DATA_DIR}/x:ok`);

    const sql = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      const worker = runImage(['worker'], env);
      // A heartbeat row two days old: the prune job, run by this worker, deletes it.
      await sql`insert into worker_heartbeats (worker_id, started_at, last_seen_at) values ('image-smoke-stale', now() - interval '3 days', now() - interval '2 days')`;
      await sql`select graphile_worker.add_job('system__heartbeat_prune', '{}'::json)`;
      const deadline = Date.now() + 90_000;
      let stale = 1;
      while (Date.now() < deadline && worker.exitCode === null) {
        [{ stale }] = await sql<{ stale: number }[]>`select count(*)::int as stale from worker_heartbeats where worker_id = 'image-smoke-stale'`;
        if (stale === 0) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      expect(stale, `the worker ran the job (log:\n${logOf(worker)})`).toBe(0);
      const [{ failed }] = await sql<{ failed: number }[]>`select count(*)::int as failed from graphile_worker.jobs where last_error is not null`;
      expect(failed).toBe(0);

      const port = await freePort();
      const web = runImage(['web'], { ...env, PORT: String(port), HTTPS_PORT: '0', HOSTNAME: '127.0.0.1' });
      let status = 0;
      let body = '';
      const webDeadline = Date.now() + 120_000;
      while (Date.now() < webDeadline && web.exitCode === null) {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(5_000) });
          status = res.status;
          body = await res.text();
          if (status === 200) break;
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 500));
      }
      expect(status, `web /readyz (${body}; log:\n${logOf(web)})`).toBe(200);

      const procs = imageProcesses();
      expect(procs.length).toBeGreaterThanOrEqual(2);
      // The image's user and group, and no supplementary group but its own (none at all, as
      // `unshare --setgid` leaves it, or the user's group, as a runtime reading /etc/group sets it).
      for (const p of procs) {
        expect({ uid: p.uid, gid: p.gid }).toEqual({ uid: IMAGE_UID, gid: IMAGE_UID });
        for (const g of p.groups.split(/\s+/).filter(Boolean)) expect(Number(g), `supplementary group of ${p.pid}`).toBe(IMAGE_UID);
      }
      // SIGTERM to each process in the image (PID 1 of its namespace): both stop cleanly.
      for (const p of procs) process.kill(p.pid, 'SIGTERM');
      expect(await Promise.all([exited(web), exited(worker)])).toEqual([0, 0]);
    } finally {
      await sql.end();
    }
  });
});
