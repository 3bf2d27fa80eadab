import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { startEmbeddedPostgres } from '../../bin/lib/embedded-postgres';
import { createDb, type DbHandle } from '../../db/client';
import { migrateDatabase } from '../../db/migrate';
import { freePort } from '../../test/global-setup';

export { freePort };

/** A fresh, migrated database for one bench run (DATABASE_URL's server, or a throwaway embedded one). */
export async function benchDatabase(): Promise<{ url: string; handle: DbHandle; close(): Promise<void> }> {
  const name = `meridian_bench_${Date.now()}`;
  let url: string;
  let cleanup: () => Promise<void>;
  if (process.env.DATABASE_URL) {
    const admin = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${name}"`);
    await admin.end();
    const u = new URL(process.env.DATABASE_URL);
    u.pathname = `/${name}`;
    url = u.toString();
    cleanup = async () => {
      const a = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists "${name}" with (force)`);
      await a.end();
    };
  } else {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'meridian-bench-'));
    const pg = await startEmbeddedPostgres({ dataDir: dir, port: await freePort(), database: name });
    url = pg.url;
    cleanup = async () => {
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    };
  }
  await migrateDatabase(url);
  const handle = createDb(url, { max: 40, applicationName: 'meridian-bench' });
  return {
    url,
    handle,
    async close() {
      await handle.close();
      await cleanup();
    },
  };
}

/** CPU seconds (user + system) in a /proc/<pid>/stat line. */
function statCpuSeconds(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds a process has used so far, from /proc (Linux); NaN when it is unknown or gone. */
export function processCpuSeconds(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    return statCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return NaN;
  }
}

/**
 * CPU seconds used so far by PostgreSQL processes on this host: the backends serving `database`
 * (by their process titles), or without one every PostgreSQL process (any server's).
 */
export function postgresCpuSeconds(database?: string): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      if (database && !readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(` ${database} `)) continue;
      total += statCpuSeconds(stat);
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

/**
 * Where the CPU of a phase went: PostgreSQL's processes (those serving `options.database` only,
 * when given: on a shared server, the others are someone else's), the given child processes (e.g.
 * the web process) and this process. CPU time per operation is steadier than a rate on a shared
 * machine.
 */
export function cpuMeter(children: Record<string, number | undefined> = {}, options: { database?: string } = {}) {
  const read = () => {
    const r: Record<string, number> = { postgres: postgresCpuSeconds(options.database) };
    for (const [name, pid] of Object.entries(children)) r[name] = processCpuSeconds(pid);
    const own = process.cpuUsage();
    r.client = (own.user + own.system) / 1e6;
    return r;
  };
  const start = read();
  return {
    /** Milliseconds of CPU per operation since the meter started, by process, and their sum. */
    perOp(ops: number): Record<string, number> {
      const end = read();
      const out: Record<string, number> = {};
      let total = 0;
      for (const k of Object.keys(end)) {
        out[k] = ((end[k] - (start[k] ?? 0)) * 1000) / ops;
        total += out[k];
      }
      out.total = total;
      return out;
    },
  };
}

/** `cpu ms per op: postgres 0.41, web 0.30, client 0.09, total 0.80`. */
export const fmtCpu = (perOp: Record<string, number>) =>
  Object.entries(perOp)
    .map(([k, v]) => `${k} ${v.toFixed(3)}`)
    .join(', ');

/** p-th percentile (0..100) of durations in ms. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

/** Runs `work` with `concurrency` workers until `count` calls are done; returns per-call latencies. */
export async function runConcurrent(count: number, concurrency: number, work: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t = performance.now();
        await work(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

/** Starts the real web process (bin/web.ts) on a free port against `url`; resolves when it answers. */
export async function startWeb(url: string, extraEnv: Record<string, string> = {}): Promise<{ base: string; proc: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  // BENCH_WEB_NODE_ARGS passes node flags to the web process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/web`.
  const nodeArgs = process.env.BENCH_WEB_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const proc = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(process.cwd(), 'bin/web.ts')], {
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), HOSTNAME: '127.0.0.1', LOG_LEVEL: 'warn', DB_POOL_SIZE: '20', ...extraEnv },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    base,
    proc,
    stop: () =>
      new Promise<void>((resolve) => {
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}

/**
 * Starts a worker process (bin/worker.ts) against `url` with the provider at `simulator`.
 * BENCH_PROFILE_DIR=dir writes its CPU profile there when it exits. The IPC channel ties the
 * worker's life to the bench's: it stops when the bench goes away.
 */
export function startWorker(url: string, simulator: { baseUrl: string; token: string }, extraEnv: Record<string, string> = {}): ChildProcess {
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  return spawn(process.execPath, [...profile, '--import', 'tsx', path.join(process.cwd(), 'bin/worker.ts')], {
    env: { ...process.env, DATABASE_URL: url, SIMULATOR_URL: simulator.baseUrl, SIMULATOR_TOKEN: simulator.token, LOG_LEVEL: 'warn', ...extraEnv },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
}

/**
 * A bench fleet catalogue: one usable location, one class without approval, one profile and
 * `capacity` capacity records. Returns the names a machine request uses.
 */
export async function seedBenchFleet(db: DbHandle['db'], options: { name: string; capacity: number }) {
  const { locations, machineCapacity, machineClasses, machineProfiles, serviceAvailability } = await import('../../db/schema/fleet');
  const { name, capacity } = options;
  const [loc] = await db
    .insert(locations)
    .values({ name: `${name}1`, displayName: `${name} 1` })
    .returning({ id: locations.id });
  await db.insert(serviceAvailability).values({ locationId: loc.id, service: 'machines', status: 'Available' });
  const [cls] = await db
    .insert(machineClasses)
    .values({ name: `c1.${name}`, cores: 8, memoryGib: 32, arch: 'x86_64', requiresApproval: false })
    .returning({ id: machineClasses.id });
  const digest = 'sha256:' + 'be'.repeat(32);
  await db.insert(machineProfiles).values({ name: `${name}-os`, imageRef: `example/os@${digest}`, imageDigest: digest });
  await db
    .insert(machineCapacity)
    .values(Array.from({ length: capacity }, (_, i) => ({ deviceRef: `dev-${name}-${String(i).padStart(4, '0')}`, classId: cls.id, locationId: loc.id })));
  return { class: `c1.${name}`, profile: `${name}-os`, location: `${name}1` };
}

/** Signs in to the console with the credentials provider; returns the session's cookie header. */
export async function signInCookie(base: string, email: string, password: string): Promise<string> {
  const csrf = await fetch(`${base}/api/auth/csrf`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const cookies = (csrf.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]);
  const login = await fetch(`${base}/api/auth/callback/credentials`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies.join('; ') },
    body: new URLSearchParams({ email, password, csrfToken, callbackUrl: '/' }),
  });
  return [...cookies, ...(login.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0])].join('; ');
}
