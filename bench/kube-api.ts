/**
 * bench/kube-api: the Kubernetes API against REST v1, same run, same database, same process.
 *
 *   node --import tsx bench/kube-api.ts
 *
 * 1. 1,000 IP claims created through server-side apply (PATCH application/apply-patch+yaml,
 *    64 concurrent, over HTTPS as kubectl and Flux send it) and the same 1,000 (other names, same
 *    network) through REST v1's POST (64 concurrent, over HTTP as the web process serves it): time
 *    per create (wall time / claims) of each, and the ratio (target ≤ 1.2× REST's).
 * 2. `kubectl get ipclaims` as kubectl asks it (Table, `limit=500` pages followed to the end) over a
 *    namespace of 10,000 claims: p50 and p99 of the whole listing (target p50 ≤ 300 ms), and of one
 *    first page (what kubectl prints first).
 * Both servers run in this process (REST v1's dispatcher and the Kubernetes API's HTTPS server, as
 * bin/web.ts mounts them); figures only, no assertions.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { benchDatabase, fmt, percentile, runConcurrent } from './lib/harness';

const CLAIMS = Number(process.env.BENCH_CLAIMS ?? 1000);
const LISTED = Number(process.env.BENCH_LISTED ?? 10_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const CONCURRENCY = 64;

async function main() {
  const loadBefore = os.loadavg()[0];
  const bench = await benchDatabase();
  process.env.DATABASE_URL = bench.url;
  process.env.LOG_LEVEL ??= 'warn';
  // Modules that read the environment come after DATABASE_URL is set.
  const { configureDbPool } = await import('../db/client');
  // Both servers' requests run on the process-wide pool, as in the web process.
  configureDbPool({ url: bench.url, max: 20, applicationName: 'meridian-bench-kube-api' });
  const { systemActor } = await import('../server/audit/events');
  const { apiTable } = await import('../server/api/routes');
  const { kubeKinds } = await import('../server/api/kinds');
  const { createApiServer } = await import('../server/http/api-server');
  const { createKubeHttpsServer } = await import('../server/kube/https');
  const { controlPlanePath } = await import('../server/kube/server');
  const { ensureLocalTls } = await import('../server/kube/tls');
  const { createClaim } = await import('../server/ipam/claims');
  const { createNetwork } = await import('../server/ipam/networks');
  const { createOrganization } = await import('../server/tenancy/projects');
  const { createProject } = await import('../server/workflows/project-creation');
  const { createApiToken } = await import('../server/tenancy/tokens');
  const { createNamespace } = await import('../server/kube/store');

  const actor = systemActor('bench');
  const { db } = bench.handle;
  const org = await createOrganization(db, { slug: 'bench', name: 'bench' }, actor);
  const project = await createProject(db, { organizationId: org.id, slug: 'bench', name: 'bench' }, actor);
  // Quota must not cap the bench: lift every limit of the project.
  await db.execute(sql`update allowance_buckets set "limit" = 1000000000`);
  await createNetwork(db, project.id, { name: 'net', cidrs: [{ cidr: '10.0.0.0/8', maxPrefixLength: 32 }] }, actor);
  const token = (await createApiToken(db, { projectId: project.id, name: 'bench', role: 'editor' }, actor)).secret;

  const api = createApiServer(apiTable);
  const restServer = http.createServer((req, res) => void api.handle(req, res));
  await new Promise<void>((resolve) => restServer.listen(0, '127.0.0.1', resolve));
  const restBase = `http://127.0.0.1:${(restServer.address() as AddressInfo).port}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'meridian-bench-kube-'));
  const tls = await ensureLocalTls(path.join(dir, 'data'));
  const kube = createKubeHttpsServer(kubeKinds, tls);
  await new Promise<void>((resolve) => kube.server.listen(0, '127.0.0.1', resolve));
  const kubeRoot = `https://127.0.0.1:${(kube.server.address() as AddressInfo).port}${controlPlanePath('bench')}`;
  const ca = readFileSync(tls.ca, 'utf8');
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca });

  function send(url: string, method: string, body: string | undefined, headers: Record<string, string>): Promise<{ status: number; text: string }> {
    const u = new URL(url);
    const lib = u.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = lib.request(
        u,
        {
          method,
          agent: u.protocol === 'https:' ? httpsAgent : httpAgent,
          headers: { authorization: `Bearer ${token}`, ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
  const expectStatus = (what: string, got: { status: number; text: string }, ok: number[]) => {
    if (!ok.includes(got.status)) throw new Error(`${what}: ${got.status} ${got.text.slice(0, 300)}`);
  };

  // Warm both paths (connections, prepared statements, the module graph) before timing.
  for (let i = 0; i < 16; i++) {
    expectStatus(
      'warm REST',
      await send(
        `${restBase}/api/v1/projects/bench/ipclaims`,
        'POST',
        JSON.stringify({ metadata: { name: `warm-rest-${i}` }, spec: { network: 'net', prefixLength: 30 } }),
        {
          'content-type': 'application/json',
        },
      ),
      [201],
    );
    expectStatus(
      'warm SSA',
      await send(
        `${kubeRoot}/apis/ipam.miloapis.com/v1alpha1/namespaces/default/ipclaims/warm-ssa-${i}?fieldManager=bench`,
        'PATCH',
        `apiVersion: ipam.miloapis.com/v1alpha1\nkind: IPClaim\nmetadata: {name: warm-ssa-${i}}\nspec: {network: net, prefixLength: 30}\n`,
        { 'content-type': 'application/apply-patch+yaml' },
      ),
      [201],
    );
  }

  // 1. Creates: REST v1 first, then server-side apply, then each again in the other order (the
  // pool fills as the run goes: alternating rounds spread that over both).
  const rounds: { rest: number[]; ssa: number[] } = { rest: [], ssa: [] };
  const half = Math.floor(CLAIMS / 2);
  const restRound = async (from: number, count: number) => {
    const t = performance.now();
    await runConcurrent(count, CONCURRENCY, async (i) => {
      const body = JSON.stringify({ metadata: { name: `rest-${from + i}` }, spec: { network: 'net', prefixLength: 30 } });
      expectStatus('REST create', await send(`${restBase}/api/v1/projects/bench/ipclaims`, 'POST', body, { 'content-type': 'application/json' }), [201]);
    });
    rounds.rest.push((performance.now() - t) / count);
  };
  const ssaRound = async (from: number, count: number) => {
    const t = performance.now();
    await runConcurrent(count, CONCURRENCY, async (i) => {
      const name = `ssa-${from + i}`;
      const body = `apiVersion: ipam.miloapis.com/v1alpha1\nkind: IPClaim\nmetadata: {name: ${name}}\nspec: {network: net, prefixLength: 30}\n`;
      expectStatus(
        'SSA create',
        await send(`${kubeRoot}/apis/ipam.miloapis.com/v1alpha1/namespaces/default/ipclaims/${name}?fieldManager=bench`, 'PATCH', body, {
          'content-type': 'application/apply-patch+yaml',
        }),
        [201],
      );
    });
    rounds.ssa.push((performance.now() - t) / count);
  };
  await restRound(0, half);
  await ssaRound(0, half);
  await ssaRound(half, CLAIMS - half);
  await restRound(half, CLAIMS - half);
  const perCreate = (r: number[]) => r.reduce((a, b) => a + b, 0) / r.length;
  const rest = perCreate(rounds.rest);
  const ssa = perCreate(rounds.ssa);
  process.stdout.write(
    `load average (1 min) at the start ${loadBefore.toFixed(2)} on ${os.cpus().length} cores (above the core count, the timings include waiting for a CPU)\n`,
  );
  process.stdout.write(`creates (${CLAIMS} each, ${CONCURRENCY} concurrent):\n`);
  process.stdout.write(`  REST v1 POST          ${fmt(rest)} per create (rounds: ${rounds.rest.map(fmt).join(', ')})\n`);
  process.stdout.write(`  server-side apply     ${fmt(ssa)} per create (rounds: ${rounds.ssa.map(fmt).join(', ')})\n`);
  process.stdout.write(`  ratio SSA / REST      ${(ssa / rest).toFixed(2)}× (target ≤ 1.20×)\n`);

  // 2. `kubectl get ipclaims` over 10,000 claims in one namespace.
  await createNamespace(db, project.id, { name: 'big', labels: {}, annotations: {} });
  await createNetwork(db, project.id, { name: 'net', cidrs: [{ cidr: '11.0.0.0/8', maxPrefixLength: 32 }] }, actor, 'big');
  process.stdout.write(`filling namespace "big" with ${LISTED} claims…\n`);
  await runConcurrent(LISTED, 16, async (i) => {
    await createClaim(db, project.id, { name: `c-${String(i).padStart(5, '0')}`, network: 'net', prefixLength: 30, reclaimPolicy: 'Delete' }, actor, {
      namespace: 'big',
    });
  });
  const table = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
  const list = `${kubeRoot}/apis/ipam.miloapis.com/v1alpha1/namespaces/big/ipclaims`;
  const whole: number[] = [];
  const first: number[] = [];
  for (let s = 0; s < SAMPLES + 2; s++) {
    const t = performance.now();
    let next: string | undefined;
    let rows = 0;
    let pages = 0;
    do {
      const page = await send(`${list}?limit=500${next ? `&continue=${next}` : ''}`, 'GET', undefined, { accept: table });
      expectStatus('list', page, [200]);
      const body = JSON.parse(page.text) as { rows: unknown[]; metadata: { continue?: string } };
      rows += body.rows.length;
      if (pages++ === 0 && s >= 2) first.push(performance.now() - t);
      next = body.metadata.continue;
    } while (next);
    if (rows !== LISTED) throw new Error(`listed ${rows} rows, expected ${LISTED}`);
    if (s >= 2) whole.push(performance.now() - t);
  }
  process.stdout.write(`kubectl get ipclaims (Table, limit=500 pages) over ${LISTED} claims, ${SAMPLES} samples:\n`);
  process.stdout.write(`  whole list            p50 ${fmt(percentile(whole, 50))}  p99 ${fmt(percentile(whole, 99))} (target p50 ≤ 300 ms)\n`);
  process.stdout.write(`  first page            p50 ${fmt(percentile(first, 50))}  p99 ${fmt(percentile(first, 99))}\n`);
  process.stdout.write(`load average (1 min) at the end ${os.loadavg()[0].toFixed(2)}\n`);

  httpAgent.destroy();
  httpsAgent.destroy();
  kube.stopWatching();
  kube.server.closeAllConnections();
  restServer.closeAllConnections();
  await new Promise<void>((resolve) => kube.server.close(() => resolve()));
  await new Promise<void>((resolve) => restServer.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
  await bench.close();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
