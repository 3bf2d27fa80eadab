/**
 * bench/load: a mixed workload against the whole system for a fixed time, printed as one table.
 *
 *   node --import tsx bench/load.ts [seconds=60]        (needs a production build: npm run build)
 *
 * A warm-up of BENCH_WARMUP_SECONDS (10) runs the same workload first and is not counted.
 *
 * Real parts only: a fresh database (DATABASE_URL's server, or a throwaway embedded one), the
 * simulator process (zero operation latency), one worker process and one web process. Clients,
 * all over HTTP with API tokens or a console session, run concurrently for the whole window:
 *
 *   cni       16  ADD then DEL churn on 2 clusters × 8 nodes (cluster tokens)
 *   ipclaims   8  create then delete IP claims (each create is also a quota decision)
 *   quota      4  creates against a bucket of 5 (granted or 403 QuotaExceeded — both are answers)
 *   machines   4  request → Ready → release → gone (approval off), following the machine by GET
 *   console    2  server-rendered network and machines pages as a signed-in tenant
 *
 * Prints, per operation: count, throughput, p50, p99 and errors (anything but the expected
 * statuses), then the invariants checked afterwards (no overlapping allocations, buckets equal
 * their live claims). Figures only; nothing is asserted.
 */
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { systemActor } from '../server/audit/events';
import { createCluster } from '../server/cni/clusters';
import { createNetwork } from '../server/ipam/networks';
import { listGrants, updateGrant } from '../server/quota/grants';
import { makeTempDir, randomToken, spawnSimulator } from '../simulator/spawn-simulator';
import { addMembership, createOrganization } from '../server/tenancy/projects';
import { createProject } from '../server/workflows/project-creation';
import { createApiToken } from '../server/tenancy/tokens';
import { createUser } from '../server/tenancy/users';
import { benchDatabase, fmt, percentile, seedBenchFleet, signInCookie, startWeb, startWorker } from './lib/harness';

const SECONDS = Number(process.argv[2] ?? 60);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 10);
const actor = systemActor('bench');

interface Answer {
  status: number;
  body: string;
}

function request(agent: http.Agent, base: URL, method: string, route: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        path: route,
        method,
        headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Latencies and outcomes of one operation kind. */
class Meter {
  readonly latencies: number[] = [];
  errors = 0;
  lastError = '';
  constructor(readonly name: string) {}
  async time(call: () => Promise<Answer>, ok: (a: Answer) => boolean): Promise<Answer | undefined> {
    const t = performance.now();
    try {
      const answer = await call();
      this.latencies.push(performance.now() - t);
      if (!ok(answer)) {
        this.errors++;
        this.lastError = `${answer.status} ${answer.body.slice(0, 160)}`;
      }
      return answer;
    } catch (e) {
      this.errors++;
      this.lastError = String(e);
      return undefined;
    }
  }
}

async function main() {
  const bench = await benchDatabase();
  const { db } = bench.handle;
  const temp = await makeTempDir('meridian-bench-load-');
  const simulator = await spawnSimulator({
    stateFile: path.join(temp.dir, 'state.json'),
    adminToken: randomToken('admin'),
    env: { SIMULATOR_OPERATION_MS: '0' },
  });
  const worker = startWorker(bench.url, simulator);

  // Tenant data: a project with a network and two clusters; a second project with a small bucket.
  const org = await createOrganization(db, { slug: 'load', name: 'load' }, actor);
  const project = await createProject(db, { organizationId: org.id, slug: 'load', name: 'load' }, actor);
  const small = await createProject(db, { organizationId: org.id, slug: 'load-small', name: 'load small' }, actor);
  // Limits through the projects' seeded grants (as an operator would), so the quota audit the
  // worker runs finds the books in order.
  const setGrant = async (projectId: string, ipclaims: number, machines: number) => {
    const [seeded] = (await listGrants(db, { projectId, limit: 1, offset: 0 })).items;
    await updateGrant(
      db,
      projectId,
      seeded.name,
      [
        { resourceType: 'ipam.miloapis.com/ipclaims', amount: ipclaims },
        { resourceType: 'metal.datumapis.com/machines', amount: machines },
      ],
      actor,
    );
  };
  await setGrant(project.id, 1_000_000, 1_000_000);
  await setGrant(small.id, 5, 10);
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '10.0.0.0/12' }, { cidr: 'fd00:10::/48' }] } as never, actor);
  await createNetwork(db, project.id, { name: 'pods', cidrs: [{ cidr: '10.64.0.0/14' }] } as never, actor);
  await createNetwork(db, small.id, { name: 'vpc', cidrs: [{ cidr: '10.0.0.0/16' }] } as never, actor);
  const tokens: Record<string, string> = {};
  for (const c of ['east', 'west']) {
    await createCluster(db, project.id, { name: c, network: 'pods' }, actor);
    tokens[c] = (await createApiToken(db, { projectId: project.id, name: c, clusterName: c }, actor)).secret;
  }
  const tenant = (await createApiToken(db, { projectId: project.id, name: 'tenant' }, actor)).secret;
  const smallTenant = (await createApiToken(db, { projectId: small.id, name: 'tenant' }, actor)).secret;
  const password = 'load-password-1';
  const user = await createUser(db, { email: 'load@example.com', name: 'load', password, createdVia: 'admin', emailVerifiedBy: 'admin' }, actor);
  await addMembership(db, { userId: user.id, role: 'owner', projectId: project.id }, actor);

  // Fleet: one location, a class without approval, capacity for the machine users.
  const fleet = await seedBenchFleet(db, { name: 'load', capacity: 8 });

  const web = await startWeb(bench.url, {
    RATE_LIMIT_TOKEN_RPS: '100000',
    RATE_LIMIT_TOKEN_BURST: '100000',
    ...simulator.clientEnv('web'),
  });
  const base = new URL(web.base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

  // A console session for the page reads.
  const session = await signInCookie(web.base, 'load@example.com', password);

  const newMeters = () =>
    Object.fromEntries(
      [
        'cni ADD',
        'cni DEL',
        'ipclaim create',
        'ipclaim delete',
        'quota decision',
        'machine request',
        'machine Ready (wall)',
        'machine release',
        'machine gone (wall)',
        'console page',
      ].map((n) => [n, new Meter(n)]),
    ) as Record<string, Meter>;
  let meters = newMeters();
  let deadline = 0;
  // Names carry the phase (warm-up or measured), so the measured run never meets a warm-up object.
  let tag = 'warm';
  const running = () => Date.now() < deadline;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const ok2xx = (a: Answer) => a.status >= 200 && a.status < 300;

  const cni = async (w: number) => {
    const cluster = w % 2 ? 'east' : 'west';
    const route = (cmd: string) => `/api/v1/projects/load/clusters/${cluster}/cni/${cmd}`;
    for (let i = 0; running(); i++) {
      const key = { cniNetwork: 'k8s', containerId: `${tag}-w${w}-c${i}`, ifname: 'eth0' };
      await meters['cni ADD'].time(
        () =>
          request(agent, base, 'POST', route('add'), bearer(tokens[cluster]), {
            ...key,
            node: `node-${w % 8}`,
            podNamespace: 'load',
            podName: `pod-${w}-${i}`,
          }),
        ok2xx,
      );
      await meters['cni DEL'].time(() => request(agent, base, 'POST', route('del'), bearer(tokens[cluster]), key), ok2xx);
    }
  };
  const claims = async (w: number) => {
    for (let i = 0; running(); i++) {
      const name = `load-${tag}-${w}-${i}`;
      await meters['ipclaim create'].time(
        () =>
          request(agent, base, 'POST', '/api/v1/projects/load/ipclaims', bearer(tenant), {
            metadata: { name },
            spec: { network: 'vpc', family: i % 4 ? 4 : 6, prefixLength: i % 4 ? 28 : 64 },
          }),
        (a) => a.status === 201,
      );
      await meters['ipclaim delete'].time(() => request(agent, base, 'DELETE', `/api/v1/projects/load/ipclaims/${name}`, bearer(tenant)), ok2xx);
    }
  };
  const quota = async (w: number) => {
    for (let i = 0; running(); i++) {
      const name = `q-${tag}-${w}-${i}`;
      const a = await meters['quota decision'].time(
        () =>
          request(agent, base, 'POST', '/api/v1/projects/load-small/ipclaims', bearer(smallTenant), {
            metadata: { name },
            spec: { network: 'vpc', prefixLength: 30 },
          }),
        (x) => x.status === 201 || (x.status === 403 && x.body.includes('QuotaExceeded')),
      );
      if (a?.status === 201) await request(agent, base, 'DELETE', `/api/v1/projects/load-small/ipclaims/${name}`, bearer(smallTenant));
    }
  };
  const machines = async (w: number) => {
    const phase = async (name: string) => {
      const a = await request(agent, base, 'GET', `/api/v1/projects/load/machines/${name}`, bearer(tenant));
      if (a.status === 404) return 'gone';
      return (JSON.parse(a.body) as { status?: { phase?: string } }).status?.phase ?? 'unknown';
    };
    for (let i = 0; running(); i++) {
      const name = `m-${tag}-${w}-${i}`;
      const t0 = performance.now();
      const created = await meters['machine request'].time(
        () => request(agent, base, 'POST', '/api/v1/projects/load/machines', bearer(tenant), { metadata: { name }, spec: { ...fleet, desiredPower: 'on' } }),
        (a) => a.status === 201 || a.status === 202,
      );
      if (!created || !ok2xx(created)) {
        await sleep(500);
        continue;
      }
      let p: string;
      while ((p = await phase(name)) !== 'Ready' && p !== 'Failed' && Date.now() < deadline + 60_000) await sleep(100);
      meters['machine Ready (wall)'].latencies.push(performance.now() - t0);
      if (p !== 'Ready') meters['machine Ready (wall)'].errors++;
      const t1 = performance.now();
      await meters['machine release'].time(() => request(agent, base, 'DELETE', `/api/v1/projects/load/machines/${name}`, bearer(tenant)), ok2xx);
      while ((p = await phase(name)) !== 'gone' && p !== 'Released' && p !== 'Failed' && Date.now() < deadline + 60_000) await sleep(100);
      meters['machine gone (wall)'].latencies.push(performance.now() - t1);
      if (p === 'Failed') meters['machine gone (wall)'].errors++;
    }
  };
  const consoleReads = async (w: number) => {
    const pages = ['/projects/load/networks/vpc', '/projects/load/machines', '/projects/load'];
    for (let i = 0; running(); i++) {
      await meters['console page'].time(
        () => request(agent, base, 'GET', pages[(i + w) % pages.length], { cookie: session }),
        (a) => a.status === 200,
      );
    }
  };

  process.stdout.write(
    `load: ${SECONDS} s, 34 clients (cni 16, ipclaims 8, quota 4, machines 4, console 2) on ${os.cpus().length} CPUs, load average before ${os.loadavg()[0].toFixed(2)}\n`,
  );
  const workload = () =>
    Promise.all([
      ...Array.from({ length: 16 }, (_, w) => cni(w)),
      ...Array.from({ length: 8 }, (_, w) => claims(w)),
      ...Array.from({ length: 4 }, (_, w) => quota(w)),
      ...Array.from({ length: 4 }, (_, w) => machines(w)),
      ...Array.from({ length: 2 }, (_, w) => consoleReads(w)),
    ]);
  try {
    // Warm-up (route compilation, connection pools, first node blocks), not counted.
    deadline = Date.now() + WARMUP * 1000;
    await workload();
    meters = newMeters();
    tag = 'run';
    deadline = Date.now() + SECONDS * 1000;
    const started = performance.now();
    await workload();
    const elapsed = (performance.now() - started) / 1000;
    process.stdout.write('\n| operation | count | per second | p50 | p99 | errors |\n|---|---|---|---|---|---|\n');
    let totalErrors = 0;
    for (const m of Object.values(meters)) {
      totalErrors += m.errors;
      process.stdout.write(
        `| ${m.name} | ${m.latencies.length} | ${(m.latencies.length / elapsed).toFixed(1)} | ${fmt(percentile(m.latencies, 50))} | ${fmt(percentile(m.latencies, 99))} | ${m.errors} |\n`,
      );
    }
    for (const m of Object.values(meters)) if (m.errors) process.stdout.write(`  ${m.name}: last error ${m.lastError}\n`);
    const [{ overlaps }] = (await db.execute(sql`
      select count(*)::int as overlaps from ip_allocations a join ip_allocations b on a.pool_id = b.pool_id and a.id < b.id and a.cidr && b.cidr`)) as unknown as {
      overlaps: number;
    }[];
    const [{ drift }] = (await db.execute(sql`
      select count(*)::int as drift from allowance_buckets b
      where b.allocated <> coalesce((select sum((e->>'amount')::bigint) from resource_claims c cross join jsonb_array_elements(c.requests) e
                                     where c.project_id = b.project_id and c.status = 'Granted' and c.released_at is null and e->>'resourceType' = b.resource_type), 0)`)) as unknown as {
      drift: number;
    }[];
    process.stdout.write(
      `\nerrors ${totalErrors}; overlapping allocations ${overlaps}; buckets disagreeing with their live claims ${drift}; load average after ${os.loadavg()[0].toFixed(2)}\n`,
    );
  } finally {
    agent.destroy();
    await web.stop();
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
    await simulator.kill();
    await temp.remove();
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
