/**
 * Fleet lifecycle throughput: `node --import tsx bench/fleet.ts [machines] [inFlight] [workers] [concurrency]`.
 *
 * Real parts only: a fresh PostgreSQL database (DATABASE_URL's server, or a throwaway embedded
 * one), the simulator process at zero operation latency, and `workers` worker processes
 * (bin/worker.ts: graphile-worker with the tasks of server/worker/registry.ts, `concurrency` jobs
 * each). One project (approval off, quota raised) and one class/location with a capacity record
 * per machine. `inFlight` simulated users each request a machine (requestMachine — what the REST
 * and tRPC handlers call), wait for it to be Ready, release it (deleteMachine), wait for Released,
 * and start the next, until `machines` machines have gone through. Users learn of phase changes
 * from the live-update notifications (server/live), not by polling.
 *
 * Prints full lifecycles per minute (first request → last Released) and p50/p99 of the time spent
 * in each phase, from the machines' phase-transition events (each transition is an event row,
 * stamped by the database). Targets: ≥ 600 lifecycles/min, no phase's p99 above 2 s. Warm-up
 * lifecycles (BENCH_WARMUP, default 2 × inFlight) run first and are not counted. Figures only;
 * nothing is asserted.
 */
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import type { Db } from '../db/client';
import { systemActor } from '../server/audit/events';
import { deleteMachine, requestMachine } from '../server/fleet/machines';
import { createChangeFeed } from '../server/changes/feed';
import { makeTempDir, randomToken, spawnSimulator } from '../simulator/spawn-simulator';
import { updateGrant } from '../server/quota/grants';
import { createOrganization } from '../server/tenancy/projects';
import { createProject } from '../server/workflows/project-creation';
import { benchDatabase, percentile, postgresCpuMeter, processCpuSeconds, seedBenchFleet, startWorker } from './lib/harness';

const machineCount = Number(process.argv[2] ?? 200);
const inFlight = Number(process.argv[3] ?? 25);
const workerCount = Number(process.argv[4] ?? 1);
const concurrency = Number(process.argv[5] ?? 16);
/** Warm-up lifecycles (not counted), by as many users as the run: every pooled connection and worker slot is warm when measuring starts. */
const warmup = Number(process.env.BENCH_WARMUP ?? inFlight * 2);
/** The simulator's operation latency (the target is set for 0; BENCH_OPERATION_MS shows how deadlines are followed). */
const operationMs = Number(process.env.BENCH_OPERATION_MS ?? 0);
const actor = systemActor('bench');

/**
 * Waits for machines to reach a phase, woken by the change notifications of one project: each
 * notification marks its machine, and the marked ones are read in one query. A slow sweep of all
 * waiters covers a notification lost to a reconnect.
 */
class PhaseWatcher {
  private waiters = new Map<string, { phase: string; resolve: () => void }>();
  private dirty = new Set<string>();
  private scheduled = false;
  private sweep: NodeJS.Timeout;

  constructor(private db: Db) {
    this.sweep = setInterval(() => {
      for (const id of this.waiters.keys()) this.dirty.add(id);
      this.check();
    }, 2_000);
  }

  notified(id: string) {
    if (!this.waiters.has(id)) return;
    this.dirty.add(id);
    this.check();
  }

  until(id: string, phase: string): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.set(id, { phase, resolve });
      this.notified(id);
    });
  }

  private check() {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(async () => {
      const ids = [...this.dirty];
      this.dirty.clear();
      try {
        if (ids.length === 0) return;
        const rows = (await this.db.execute(sql`select id, phase from machines where id = any(${sql.raw(`'{${ids.join(',')}}'`)}::uuid[])`)) as unknown as {
          id: string;
          phase: string;
        }[];
        for (const row of rows) {
          const waiter = this.waiters.get(row.id);
          if (waiter && (row.phase === waiter.phase || row.phase === 'Failed')) {
            this.waiters.delete(row.id);
            waiter.resolve();
          }
        }
      } finally {
        this.scheduled = false;
        if (this.dirty.size) this.check();
      }
    });
  }

  stop() {
    clearInterval(this.sweep);
  }
}

/**
 * Profiling aid (BENCH_SAMPLE=1): samples what the database's backends are doing — waiting on a
 * lock, on I/O, on the client, or running which statement — so the bottleneck shows by name.
 */
function sampleActivity(url: string) {
  const client = new pg.Client({ connectionString: url, application_name: 'bench-sampler' });
  const counts = new Map<string, number>();
  let rounds = 0;
  let running = true;
  const loop = (async () => {
    await client.connect();
    while (running) {
      const { rows } = await client.query<{ app: string; state: string; wait: string; query: string }>(`
        select coalesce(application_name, '') as app, coalesce(state, '?') as state, coalesce(wait_event_type || ':' || wait_event, 'cpu') as wait,
               left(regexp_replace(coalesce(query, ''), '\\s+', ' ', 'g'), 70) as query
        from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`);
      rounds++;
      for (const r of rows) {
        if (r.state === 'idle') continue;
        const key = `${r.app.padEnd(18).slice(0, 18)} ${r.state.padEnd(19)} ${r.wait.padEnd(24)} ${r.query}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await client.end();
  })().catch((e: Error) => console.error(`sampler stopped: ${e.message}`));
  return {
    async stop() {
      running = false;
      await loop;
      return { counts, rounds };
    },
  };
}

async function main() {
  const database = await benchDatabase();
  const { db } = database.handle;
  const temp = await makeTempDir('meridian-bench-fleet-');
  const workers: ChildProcess[] = [];
  const feed = createChangeFeed(database.url);
  let watcher: PhaseWatcher | undefined;
  let simulator: Awaited<ReturnType<typeof spawnSimulator>> | undefined;
  try {
    simulator = await spawnSimulator({
      stateFile: path.join(temp.dir, 'state.json'),
      adminToken: randomToken('admin'),
      env: { SIMULATOR_OPERATION_MS: String(operationMs) },
    });
    const sim = simulator;
    // The catalogue: one usable location, one class without approval, capacity for every machine.
    const capacity = machineCount + warmup;
    const catalogue = await seedBenchFleet(db, { name: 'bench', capacity });
    const org = await createOrganization(db, { slug: 'bench', name: 'bench' }, actor);
    const project = await createProject(db, { organizationId: org.id, slug: 'bench', name: 'bench' }, actor);
    await updateGrant(
      db,
      project.id,
      'default-bench',
      [
        { resourceType: 'ipam.miloapis.com/ipclaims', amount: 100 },
        { resourceType: 'metal.datumapis.com/machines', amount: capacity * 2 },
      ],
      actor,
    );
    const spec = { ...catalogue, interfaces: [], desiredPower: 'on' as const };

    process.stderr.write(`seeded ${capacity} capacity records; starting ${workerCount} worker(s)\n`);
    for (let i = 0; i < workerCount; i++)
      workers.push(
        startWorker(database.url, sim, {
          WORKER_CONCURRENCY: String(concurrency),
          DB_POOL_SIZE: String(concurrency + 2),
          // Names graphile-worker's own connections in pg_stat_activity (the task pool says 'meridian').
          PGAPPNAME: 'graphile-worker',
        }),
      );
    for (let i = 0; ; i++) {
      const [{ n }] = (await db.execute(sql`select count(*)::int as n from worker_heartbeats`)) as unknown as { n: number }[];
      if (n >= workerCount) break;
      if (i > 240) throw new Error('workers did not start');
      await new Promise((r) => setTimeout(r, 250));
    }

    watcher = new PhaseWatcher(db);
    const w = watcher;
    // Machine changes as the console learns of them: the change feed (server/changes/feed.ts).
    feed.subscribe((event) => {
      if (event.type !== 'txn') return;
      for (const c of event.txn.changes) {
        const row = c.row ?? c.old;
        if (c.table === 'machines' && row?.id && row.project_id === project.id) w.notified(row.id);
      }
    });
    await feed.ready();

    /** `count` lifecycles by `users` concurrent users; returns the machine ids and the wall time. */
    async function run(prefix: string, count: number, users: number) {
      const ids: string[] = [];
      /** Client-side times (ms since the epoch, the database's clock on this host) of each call. */
      const calls = new Map<string, { requestStart: number; requestEnd: number; releaseStart: number; releaseEnd: number }>();
      let next = 0;
      let finished = 0;
      const started = performance.now();
      const progress = setInterval(
        () => process.stderr.write(`  ${prefix}: ${finished}/${count} released after ${((performance.now() - started) / 1000).toFixed(0)} s\n`),
        10_000,
      );
      await Promise.all(
        Array.from({ length: users }, async () => {
          while (next < count) {
            const name = `${prefix}-${next++}`;
            const requestStart = Date.now();
            const m = await requestMachine(db, project.id, { ...spec, name }, actor);
            const requestEnd = Date.now();
            ids.push(m.id);
            await w.until(m.id, 'Ready');
            const releaseStart = Date.now();
            await deleteMachine(db, project.id, name, actor);
            const releaseEnd = Date.now();
            calls.set(m.id, { requestStart, requestEnd, releaseStart, releaseEnd });
            await w.until(m.id, 'Released');
            finished++;
          }
        }),
      ).finally(() => clearInterval(progress));
      return { ids, calls, seconds: (performance.now() - started) / 1000 };
    }

    await run('warm', warmup, Math.min(inFlight, warmup));
    const sampler = process.env.BENCH_SAMPLE ? sampleActivity(database.url) : undefined;
    const load = os.loadavg();
    const postgresCpu = postgresCpuMeter(database.cpuSource);
    const cpuBefore = {
      workers: workers.map((c) => processCpuSeconds(c.pid)),
      simulator: processCpuSeconds(sim.child.pid),
      bench: process.cpuUsage(),
      postgres: 0,
    };
    const { ids, calls, seconds } = await run('m', machineCount, inFlight);
    const cpuAfter = {
      workers: workers.map((c) => processCpuSeconds(c.pid)),
      simulator: processCpuSeconds(sim.child.pid),
      bench: process.cpuUsage(cpuBefore.bench),
      postgres: postgresCpu.seconds(),
    };
    postgresCpu.stop();
    const loadAfter = os.loadavg();
    const samples = await sampler?.stop();

    // Phase durations from the transition events, stamped by the database.
    const rows = (await db.execute(sql`
      select object_id as id, action, extract(epoch from at) * 1000 as ms from events
      where object_type = 'machine' and object_id = any(${sql.raw(`'{${ids.join(',')}}'`)}::text[]) order by id`)) as unknown as {
      id: string;
      action: string;
      ms: number;
    }[];
    const at = new Map<string, Record<string, number>>();
    for (const r of rows) {
      const m = at.get(r.id) ?? {};
      m[r.action] ??= Number(r.ms);
      at.set(r.id, m);
    }
    const spans: [string, string, string][] = [
      ['Pending', 'machine.create', 'machine.phase.Allocating'],
      ['Allocating', 'machine.phase.Allocating', 'machine.phase.Bound'],
      ['Bound', 'machine.phase.Bound', 'machine.phase.Installing'],
      ['Installing', 'machine.phase.Installing', 'machine.phase.Ready'],
      ['Ready, release requested', 'machine.release.requested', 'machine.phase.Releasing'],
      ['Releasing', 'machine.phase.Releasing', 'machine.phase.Released'],
    ];
    const totals: [string, string, string][] = [
      ['request → Ready', 'machine.create', 'machine.phase.Ready'],
      ['release → Released', 'machine.release.requested', 'machine.phase.Released'],
      ['request → Released', 'machine.create', 'machine.phase.Released'],
      ['(Ready → user releases)', 'machine.phase.Ready', 'machine.release.requested'],
    ];
    const durations = (from: string, to: string) => [...at.values()].filter((m) => m[from] !== undefined && m[to] !== undefined).map((m) => m[to] - m[from]);
    await new Promise((r) => setTimeout(r, 1_200)); // workers add their job counts once a second
    const [phases] = (await db.execute(sql`
      select (select count(*)::int from machines where id = any(${sql.raw(`'{${ids.join(',')}}'`)}::uuid[]) and phase = 'Released') as released,
             (select count(*)::int from machine_capacity where state = 'Available') as available,
             (select count(*)::int from machine_capacity where state <> 'Available') as other,
             (select coalesce(sum(value), 0)::int from metric_counters where metric = 'meridian_provider_retries_total') as retries,
             (select coalesce(sum(value), 0)::int from metric_counters where metric = 'meridian_job_outcomes_total' and labels like '%outcome="success"%') as jobs`)) as unknown as {
      released: number;
      available: number;
      other: number;
      retries: number;
      jobs: number;
    }[];

    const perMinute = (machineCount / seconds) * 60;
    console.log(
      `fleet: ${machineCount} lifecycles (request → Ready → release → Released), ${inFlight} in flight, ${workerCount} worker process(es) × concurrency ${concurrency}, simulator at ${operationMs} ms, approval off (Node ${process.version}, ${os.cpus().length} CPUs)`,
    );
    console.log(`  load average ${load.map((l) => l.toFixed(2)).join(' ')} at start, ${loadAfter.map((l) => l.toFixed(2)).join(' ')} at end`);
    console.log(`  throughput   ${perMinute.toFixed(0)} lifecycles/min (${seconds.toFixed(1)} s) — target ≥ 600 ${perMinute >= 600 ? 'OK' : 'BELOW TARGET'}`);
    console.log(`  ${'phase'.padEnd(26)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'max ms'.padStart(9)}`);
    let worstP99 = 0;
    for (const [label, from, to] of spans) {
      const d = durations(from, to);
      worstP99 = Math.max(worstP99, percentile(d, 99));
      console.log(
        `  ${label.padEnd(26)} ${percentile(d, 50).toFixed(0).padStart(9)} ${percentile(d, 99).toFixed(0).padStart(9)} ${Math.max(...d)
          .toFixed(0)
          .padStart(9)}`,
      );
    }
    for (const [label, from, to] of totals) {
      const d = durations(from, to);
      console.log(
        `  ${label.padEnd(26)} ${percentile(d, 50).toFixed(0).padStart(9)} ${percentile(d, 99).toFixed(0).padStart(9)} ${Math.max(...d)
          .toFixed(0)
          .padStart(9)}`,
      );
    }
    // Where the waits go: the tenant's own calls, and the worker taking the job up after them.
    const callSpans: [
      string,
      (c: { requestStart: number; requestEnd: number; releaseStart: number; releaseEnd: number }, m: Record<string, number>) => number | undefined,
    ][] = [
      ['request call (commit incl.)', (c) => c.requestEnd - c.requestStart],
      ['request → worker binds', (c, m) => (m['machine.phase.Allocating'] === undefined ? undefined : m['machine.phase.Allocating'] - c.requestEnd)],
      ['release call (commit incl.)', (c) => c.releaseEnd - c.releaseStart],
      ['release → worker cleans', (c, m) => (m['machine.phase.Releasing'] === undefined ? undefined : m['machine.phase.Releasing'] - c.releaseEnd)],
    ];
    for (const [label, f] of callSpans) {
      const d = ids.map((id) => f(calls.get(id)!, at.get(id) ?? {})).filter((v): v is number => v !== undefined);
      console.log(
        `  ${label.padEnd(26)} ${percentile(d, 50).toFixed(0).padStart(9)} ${percentile(d, 99).toFixed(0).padStart(9)} ${Math.max(...d)
          .toFixed(0)
          .padStart(9)}`,
      );
    }
    console.log(`  worst phase p99 ${worstP99.toFixed(0)} ms — target ≤ 2000 ${worstP99 <= 2000 ? 'OK' : 'ABOVE TARGET'}`);
    const workerCpu = cpuAfter.workers.reduce((s, v, i) => s + v - cpuBefore.workers[i], 0);
    console.log(
      `  cpu          workers ${workerCpu.toFixed(1)} s, simulator ${(cpuAfter.simulator - cpuBefore.simulator).toFixed(1)} s, bench (requests, releases) ${((cpuAfter.bench.user + cpuAfter.bench.system) / 1e6).toFixed(1)} s, ` +
        `database backends ${(cpuAfter.postgres - cpuBefore.postgres).toFixed(1)} s over ${seconds.toFixed(1)} s wall`,
    );
    if (samples) {
      console.log(`  database activity (BENCH_SAMPLE: pg_stat_activity every 20 ms, ${samples.rounds} samples; backends per state, averaged):`);
      const byApp = new Map<string, number>();
      for (const [key, n] of samples.counts) byApp.set(key.slice(0, 38).trim(), (byApp.get(key.slice(0, 38).trim()) ?? 0) + n);
      for (const [key, n] of [...byApp.entries()].sort((a, b) => b[1] - a[1]))
        console.log(`    ${(n / samples.rounds).toFixed(2).padStart(6)}  ${key} (all statements)`);
      for (const [key, n] of [...samples.counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25))
        console.log(`    ${(n / samples.rounds).toFixed(2).padStart(6)}  ${key}`);
    }
    console.log(
      `  after        ${phases.released}/${machineCount} Released; capacity ${phases.available} Available, ${phases.other} other; provider retries ${phases.retries}; jobs run ${phases.jobs} (warm-up included)`,
    );
  } finally {
    watcher?.stop();
    await feed.close().catch(() => {});
    await Promise.all(
      workers.map((c) => new Promise<void>((resolve) => (c.exitCode !== null ? resolve() : (c.once('exit', () => resolve()), c.kill('SIGTERM'))))),
    );
    await simulator?.kill('SIGTERM');
    await temp.remove();
    await database.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
