/**
 * bench/cni-add: CNI lease ADD throughput through the REST API, 64 concurrent callers across
 * 2 clusters × 16 nodes on one network, against a baseline measured in the same run: single-row
 * inserts into a plain table on the same database at the same concurrency. Targets: ≥ 1,500 ADD/s,
 * ≥ 0.3 (issue 23: ≥ 0.4) of the baseline's rate, CPU per ADD ≤ 3× CPU per INSERT; zero duplicate
 * addresses. What each phase wrote (WAL bytes, rows per table, index entries: bench/lib/harness.ts
 * writeMeter) is printed too: unlike rates and CPU, it does not move with how busy the machine is.
 *
 *   node --import tsx bench/cni-add.ts        (needs a production build: npm run build)
 */
import http from 'node:http';
import os from 'node:os';
import { sql } from 'drizzle-orm';
import { systemActor } from '../server/audit/events';
import { createCluster } from '../server/cni/clusters';
import { createNetwork } from '../server/ipam/networks';
import { createOrganization } from '../server/tenancy/projects';
import { createProject } from '../server/workflows/project-creation';
import { createApiToken } from '../server/tenancy/tokens';
import {
  batchCounts,
  benchDatabase,
  cpuMeter,
  fmt,
  fmtBatches,
  fmtCpu,
  fmtWrites,
  percentile,
  runConcurrent,
  startWeb,
  STATS_SETTLE_MS,
  writeMeter,
} from './lib/harness';

const actor = systemActor('bench');
const ADDS = Number(process.env.BENCH_ADDS ?? 6000);
const CONCURRENCY = 64;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function post(agent: http.Agent, base: URL, path: string, token: string, body: unknown): Promise<number> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        path,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function main() {
  const bench = await benchDatabase();
  const { db } = bench.handle;
  const org = await createOrganization(db, { slug: 'bench', name: 'bench' }, actor);
  const project = await createProject(db, { organizationId: org.id, slug: 'bench', name: 'bench' }, actor);
  await createNetwork(db, project.id, { name: 'pods', cidrs: [{ cidr: '10.64.0.0/14' }] }, actor);
  const tokens: Record<string, string> = {};
  for (const c of ['east', 'west']) {
    await createCluster(db, project.id, { name: c, network: 'pods' }, actor);
    tokens[c] = (await createApiToken(db, { projectId: project.id, name: c, clusterName: c }, actor)).secret;
  }

  // Baseline: single-row inserts into a plain table, same database, same concurrency.
  await db.execute(sql`create table bench_baseline (id bigserial primary key, cluster text, container text, created_at timestamptz default now())`);
  // The set-up's writes reach the statistics before the baseline starts.
  await sleep(STATS_SETTLE_MS);
  const baselineCpu = cpuMeter({}, { postgres: bench.cpuSource });
  const baselineWrites = await writeMeter(db);
  const baseline = await runConcurrent(ADDS, CONCURRENCY, async (i) => {
    await db.execute(sql`insert into bench_baseline (cluster, container) values (${i % 2 ? 'east' : 'west'}, ${`c${i}`})`);
  });
  const baselineRate = ADDS / baseline.seconds;
  const baselinePerOp = baselineCpu.perOp(ADDS);
  await sleep(STATS_SETTLE_MS);
  const baselineWritten = await baselineWrites.perOp(ADDS);

  const web = await startWeb(bench.url, { RATE_LIMIT_TOKEN_RPS: '100000', RATE_LIMIT_TOKEN_BURST: '100000' });
  const base = new URL(web.base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    // Warm up (route compilation, pools, first node blocks).
    await runConcurrent(200, 16, async (i) => {
      const cluster = i % 2 ? 'east' : 'west';
      await post(agent, base, `/api/v1/projects/bench/clusters/${cluster}/cni/add`, tokens[cluster], {
        cniNetwork: 'k8s',
        containerId: `warm${i}`,
        ifname: 'eth0',
        node: `node-${i % 16}`,
      });
    });
    // The warm-up's writes reach the statistics before the measured ADDs start.
    await sleep(STATS_SETTLE_MS);
    const addWrites = await writeMeter(db);
    const batchesBefore = await batchCounts(web);
    let errors = 0;
    const addCpu = cpuMeter({ web: web.proc.pid }, { postgres: bench.cpuSource });
    const run = await runConcurrent(ADDS, CONCURRENCY, async (i) => {
      const cluster = i % 2 ? 'east' : 'west';
      const status = await post(agent, base, `/api/v1/projects/bench/clusters/${cluster}/cni/add`, tokens[cluster], {
        cniNetwork: 'k8s',
        containerId: `ctr${i}`,
        ifname: 'eth0',
        node: `node-${Math.floor(i / 2) % 16}`,
        podNamespace: 'default',
        podName: `pod-${i}`,
      });
      if (status !== 200) errors++;
    });
    const rate = ADDS / run.seconds;
    const addPerOp = addCpu.perOp(ADDS);
    const batches = fmtBatches(batchesBefore, await batchCounts(web));
    // The web process's backends report their last counters as they exit.
    await web.stop();
    await sleep(STATS_SETTLE_MS);
    const addWritten = await addWrites.perOp(ADDS);
    const [{ dup }] = (await db.execute(
      sql`select count(*)::int as dup from (select address from pod_leases group by address having count(*) > 1) d`,
    )) as unknown as { dup: number }[];
    const [{ leases }] = (await db.execute(sql`select count(*)::int as leases from pod_leases`)) as unknown as { leases: number }[];
    process.stdout.write(`| measure | rate | p50 | p99 |\n|---|---|---|---|\n`);
    process.stdout.write(
      `| baseline: single-row INSERT, ${CONCURRENCY} concurrent | ${baselineRate.toFixed(0)}/s | ${fmt(percentile(baseline.latencies, 50))} | ${fmt(percentile(baseline.latencies, 99))} |\n`,
    );
    process.stdout.write(
      `| CNI ADD via REST, ${CONCURRENCY} concurrent, 2 clusters × 16 nodes | ${rate.toFixed(0)}/s | ${fmt(percentile(run.latencies, 50))} | ${fmt(percentile(run.latencies, 99))} |\n`,
    );
    process.stdout.write(`cpu ms per INSERT: ${fmtCpu(baselinePerOp)}\ncpu ms per ADD: ${fmtCpu(addPerOp)}\n`);
    process.stdout.write(`written per INSERT: ${fmtWrites(baselineWritten)}\nwritten per ADD: ${fmtWrites(addWritten)}\n`);
    process.stdout.write(`batches (the web process's /metrics): ${batches}\n`);
    process.stdout.write(
      `ratio ADD/baseline: rate ${(rate / baselineRate).toFixed(2)} (targets ≥ 0.3, ≥ 0.4), CPU ${(addPerOp.total / baselinePerOp.total).toFixed(2)}× (target ≤ 3×), ` +
        `WAL ${(addWritten.walBytes / baselineWritten.walBytes).toFixed(2)}×; target ≥ 1500 ADD/s; errors ${errors}; leases ${leases}; duplicate addresses ${dup}; ` +
        `load average ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}\n`,
    );
  } finally {
    agent.destroy();
    await web.stop();
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
