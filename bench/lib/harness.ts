import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { startEmbeddedPostgres } from '../../bin/lib/embedded-postgres';
import type { BatchCounts } from '../../db/batch';
import { createDb, type DbHandle } from '../../db/client';
import { migrateDatabase } from '../../db/migrate';
import { freePort } from '../../test/global-setup';

export { freePort };

/**
 * A fresh, migrated database for one bench run (DATABASE_URL's server, or a throwaway embedded one),
 * and where its PostgreSQL CPU is read from (`cpuSource`): the embedded server whole, or on
 * DATABASE_URL's server (shared with whatever else uses it) the new database's backends.
 */
export async function benchDatabase(
  options: { connections?: number } = {},
): Promise<{ url: string; handle: DbHandle; cpuSource: PostgresCpuSource; close(): Promise<void> }> {
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
  const handle = createDb(url, { max: options.connections ?? 40, applicationName: 'meridian-bench' });
  let cpuSource: PostgresCpuSource = { database: name };
  if (!process.env.DATABASE_URL) {
    // The postmaster is the parent of every backend (the embedded package may start it through a wrapper).
    const [{ pid }] = (await handle.db.execute(sql`select pg_backend_pid() as pid`)) as unknown as { pid: number }[];
    cpuSource = { postmasterPid: Number(statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'))[1]) };
  }
  return {
    url,
    handle,
    cpuSource,
    async close() {
      await handle.close();
      await cleanup();
    },
  };
}

/** The fields of a /proc/<pid>/stat line after the command (field 3, the state, is [0]). */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU seconds (user + system) of the process itself in a /proc/<pid>/stat line. */
function statCpuSeconds(stat: string): number {
  const fields = statFields(stat);
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds (user + system) of the children the process has waited for (cutime + cstime). */
function statReapedCpuSeconds(stat: string): number {
  const fields = statFields(stat);
  return (Number(fields[13]) + Number(fields[14])) / 100;
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

/** Every process's /proc/<pid>/stat line (those that end while being read are skipped). */
function allStats(): Map<number, string> {
  const out = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      out.set(Number(entry), readFileSync(`/proc/${entry}/stat`, 'utf8'));
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

/**
 * CPU seconds used so far by a PostgreSQL server the bench owns (its postmaster's pid): the
 * postmaster, its live children (backends, autovacuum, WAL writer, checkpointer…) and the children
 * it has already reaped. A backend that exits moves its CPU from the live sum into the postmaster's
 * reaped-children counter, so the figure never goes down. The children are read before the
 * postmaster: a child reaped between the two reads is then counted twice (a few ticks more), never
 * not at all.
 */
export function serverCpuSeconds(postmasterPid: number): number {
  let total = 0;
  for (const stat of allStats().values()) if (Number(statFields(stat)[1]) === postmasterPid) total += statCpuSeconds(stat) + statReapedCpuSeconds(stat);
  let postmaster: string;
  try {
    postmaster = readFileSync(`/proc/${postmasterPid}/stat`, 'utf8');
  } catch {
    return NaN;
  }
  return total + statCpuSeconds(postmaster) + statReapedCpuSeconds(postmaster);
}

/** Where a bench's PostgreSQL CPU is read from: the whole server it started, or one database's backends on a shared server. */
export type PostgresCpuSource = { postmasterPid: number } | { database: string };

/**
 * PostgreSQL CPU seconds since the meter started, never negative. A server the bench owns is read
 * whole (serverCpuSeconds). On a shared server the backends of one database are followed one by one
 * (by pid and start time, so a reused pid is a new process): each counts what it used since it was
 * first seen (since 0 when it started after the meter), read again every `sampleMs` so a backend
 * that exits loses at most its last interval. (Summing the backends alive at two moments, as this
 * meter once did, goes negative when backends that had run exit in between: other sessions'
 * connections on a shared server, and every server's when no database was named.)
 */
export function postgresCpuMeter(source: PostgresCpuSource, sampleMs = 250) {
  if ('postmasterPid' in source) {
    const start = serverCpuSeconds(source.postmasterPid);
    return { seconds: () => serverCpuSeconds(source.postmasterPid) - start, stop() {} };
  }
  const first = new Map<string, number>();
  const last = new Map<string, number>();
  const sample = (initial: boolean) => {
    for (const [pid, stat] of allStats()) {
      if (!stat.includes('(postgres)')) continue;
      const key = `${pid}:${statFields(stat)[19]}`;
      if (!last.has(key)) {
        try {
          if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(` ${source.database} `)) continue;
        } catch {
          continue;
        }
        first.set(key, initial ? statCpuSeconds(stat) : 0);
      }
      last.set(key, statCpuSeconds(stat));
    }
  };
  sample(true);
  const timer = setInterval(() => sample(false), sampleMs);
  timer.unref();
  return {
    seconds() {
      sample(false);
      let total = 0;
      for (const [key, cpu] of last) total += cpu - (first.get(key) ?? 0);
      return total;
    },
    stop: () => clearInterval(timer),
  };
}

/**
 * Where the CPU of a phase went: PostgreSQL (`options.postgres`: the bench's own server, or its
 * database's backends on a shared one; see benchDatabase's `cpuSource`), the given child processes
 * (e.g. the web process) and this process. CPU time per operation is steadier than a rate on a
 * shared machine.
 */
export function cpuMeter(children: Record<string, number | undefined> = {}, options: { postgres?: PostgresCpuSource } = {}) {
  const pg = options.postgres ? postgresCpuMeter(options.postgres) : undefined;
  const read = () => {
    const r: Record<string, number> = {};
    if (pg) r.postgres = pg.seconds();
    for (const [name, pid] of Object.entries(children)) r[name] = processCpuSeconds(pid);
    const own = process.cpuUsage();
    r.client = (own.user + own.system) / 1e6;
    return r;
  };
  const start = read();
  if (pg) start.postgres = 0;
  return {
    /** Milliseconds of CPU per operation since the meter started, by process, and their sum. */
    perOp(ops: number): Record<string, number> {
      const end = read();
      pg?.stop();
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

/**
 * Starts the real web process (bin/web.ts) on a free port against `url`; resolves when it answers.
 * Its `/metrics` answers the `metricsToken` it was given (METRICS_TOKEN: closed without one).
 */
export async function startWeb(
  url: string,
  extraEnv: Record<string, string> = {},
): Promise<{ base: string; metricsToken: string; proc: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const metricsToken = extraEnv.METRICS_TOKEN ?? `bench-${randomBytes(18).toString('base64url')}`;
  // BENCH_WEB_NODE_ARGS passes node flags to the web process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/web`.
  const nodeArgs = process.env.BENCH_WEB_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const proc = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(process.cwd(), 'bin/web.ts')], {
    env: {
      ...process.env,
      DATABASE_URL: url,
      PORT: String(port),
      HOSTNAME: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DB_POOL_SIZE: '20',
      METRICS_TOKEN: metricsToken,
      ...extraEnv,
    },
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
    metricsToken,
    proc,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}

/**
 * Per batched SQL function, the statements and items a web process has sent so far, read from its
 * `/metrics` (db/batch.ts counts them): the difference of two readings over a phase gives the
 * phase's mean batch.
 */
export async function batchCounts(web: { base: string; metricsToken: string }): Promise<Map<string, BatchCounts>> {
  const res = await fetch(`${web.base}/metrics`, { headers: { authorization: `Bearer ${web.metricsToken}` } });
  if (!res.ok) throw new Error(`/metrics answered ${res.status}`);
  const text = await res.text();
  const out = new Map<string, BatchCounts>();
  for (const m of text.matchAll(/^meridian_batch_(statements|items|fallbacks)_total\{function="([^"]+)"\} (\d+)$/gm)) {
    const counts = out.get(m[2]) ?? { statements: 0, items: 0, fallbacks: 0 };
    counts[m[1] as keyof BatchCounts] = Number(m[3]);
    out.set(m[2], counts);
  }
  return out;
}

/** `fn: 6000 items in 310 statements (19.4 per statement), 0 fallbacks` for each function that ran between two readings. */
export function fmtBatches(before: Map<string, BatchCounts>, after: Map<string, BatchCounts>): string {
  const lines: string[] = [];
  for (const [fn, a] of after) {
    const b = before.get(fn) ?? { statements: 0, items: 0, fallbacks: 0 };
    const statements = a.statements - b.statements;
    const items = a.items - b.items;
    if (statements === 0) continue;
    lines.push(`${fn}: ${items} items in ${statements} statements (${(items / statements).toFixed(1)} per statement), ${a.fallbacks - b.fallbacks} fallbacks`);
  }
  return lines.join('; ') || 'no batched statements';
}

/**
 * Starts a worker process (bin/worker.ts) against `url` with the provider at `simulator`.
 * BENCH_PROFILE_DIR=dir writes its CPU profile there when it exits. The IPC channel ties the
 * worker's life to the bench's: it stops when the bench goes away.
 */
export function startWorker(
  url: string,
  simulator: { clientEnv(role: 'worker'): Record<string, string> },
  extraEnv: Record<string, string> = {},
): ChildProcess {
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  return spawn(process.execPath, [...profile, '--import', 'tsx', path.join(process.cwd(), 'bin/worker.ts')], {
    env: { ...process.env, DATABASE_URL: url, ...simulator.clientEnv('worker'), LOG_LEVEL: 'warn', ...extraEnv },
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

/**
 * What a phase wrote, read from PostgreSQL's own counters: WAL bytes (the server's insert position:
 * exact and at once, but the whole server's, so meaningful on a server the bench owns), and per
 * table of the database the rows inserted, updated (HOT or not) and deleted, with the index entries
 * those writes added (a row inserted or updated other than HOT adds one entry to each of its table's
 * indexes, exclusion constraints' included; partial indexes are not counted, as which rows they
 * take is not in the counters: the CNI tables' partial indexes take no pod address rows). Backends report table counters to the statistics
 * system at most once a second and, when idle, within ten: `settle` waits that out, and the
 * counters are read only once the processes that wrote have stopped or been idle that long.
 */
export async function writeMeter(db: DbHandle['db']) {
  const read = async () => {
    const [{ lsn }] = (await db.execute(sql`select pg_current_wal_lsn()::text as lsn`)) as unknown as { lsn: string }[];
    const tables = (await db.execute(sql`
      select s.relname as name, s.n_tup_ins::bigint as ins, s.n_tup_upd::bigint as upd, s.n_tup_hot_upd::bigint as hot, s.n_tup_del::bigint as del,
             (select count(*) from pg_index i where i.indrelid = s.relid and i.indpred is null)::int as indexes
      from pg_stat_user_tables s`)) as unknown as { name: string; ins: string; upd: string; hot: string; del: string; indexes: number }[];
    const [hi, lo] = lsn.split('/').map((x) => BigInt(`0x${x}`));
    return { wal: (hi << 32n) + lo, tables: new Map(tables.map((t) => [t.name, t])) };
  };
  const start = await read();
  return {
    /** Per operation since the meter started: WAL bytes, index entries, and each table's row writes (tables with none left out). */
    async perOp(ops: number) {
      const end = await read();
      const tables: Record<string, { inserted: number; updated: number; deleted: number; indexEntries: number }> = {};
      let indexEntries = 0;
      for (const [name, t] of end.tables) {
        const s = start.tables.get(name);
        const d = (k: 'ins' | 'upd' | 'hot' | 'del') => Number(t[k]) - Number(s?.[k] ?? 0);
        const entries = (d('ins') + d('upd') - d('hot')) * t.indexes;
        // Tables a phase barely touched (a row per thousand operations) are left out of the figures, not the sums.
        indexEntries += entries;
        if (Math.abs(d('ins')) + Math.abs(d('upd')) + Math.abs(d('del')) < ops / 1000) continue;
        tables[name] = { inserted: d('ins') / ops, updated: d('upd') / ops, deleted: d('del') / ops, indexEntries: entries / ops };
      }
      return { walBytes: Number(end.wal - start.wal) / ops, indexEntries: indexEntries / ops, tables };
    },
  };
}

/** How long a backend may keep table counters before the statistics system has them (PostgreSQL's idle flush interval, and a margin). */
export const STATS_SETTLE_MS = 11_000;

/** `wal 1234 B, index entries 14.0; pod_leases +1.00 (5.0 entries), ip_free_blocks +0.95 −1.00 (3.8 entries), …`. */
export function fmtWrites(w: Awaited<ReturnType<Awaited<ReturnType<typeof writeMeter>>['perOp']>>): string {
  const tables = Object.entries(w.tables)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, t]) => {
      const parts = [t.inserted && `+${t.inserted.toFixed(2)}`, t.updated && `~${t.updated.toFixed(2)}`, t.deleted && `−${t.deleted.toFixed(2)}`].filter(
        Boolean,
      );
      return `${name} ${parts.join(' ')} (${t.indexEntries.toFixed(1)} entries)`;
    });
  return `wal ${w.walBytes.toFixed(0)} B, index entries ${w.indexEntries.toFixed(1)}; ${tables.join(', ')}`;
}
