/**
 * bench/ipam-claims: IP claim creation cost as pools fragment, and sustained HTTP throughput.
 *
 *   node --import tsx bench/ipam-claims.ts            (needs a production build for the HTTP part: npm run build)
 *
 * 1. Domain function, one caller: p50/p99 of createClaim in a /8 holding 100 claims (baseline) and
 *    20,000 claims of mixed sizes with holes (fragmented), and in an IPv6 /32 with 20,000 /64 claims;
 *    the fragmented/baseline p50 ratio (target ≤ 2×; p50 ≤ 5 ms, p99 ≤ 20 ms).
 * 2. REST API, 16 concurrent clients: claims/s sustained (target ≥ 400/s), then an overlap check.
 * 3. The network page with 20,000 claims: server time to first byte and full HTML (target < 500 ms).
 * Prints figures only.
 */
import { sql } from 'drizzle-orm';
import { systemActor } from '../server/audit/events';
import { createClaim, deleteClaim } from '../server/ipam/claims';
import { createNetwork } from '../server/ipam/networks';
import { createOrganization, addMembership } from '../server/tenancy/projects';
import { createProject } from '../server/workflows/project-creation';
import { createApiToken } from '../server/tenancy/tokens';
import { createUser } from '../server/tenancy/users';
import { benchDatabase, cpuMeter, fmt, fmtCpu, percentile, runConcurrent, signInCookie, startWeb } from './lib/harness';

const actor = systemActor('bench');
const FRAGMENTED = Number(process.env.BENCH_CLAIMS ?? 20_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 500);

async function main() {
  const bench = await benchDatabase();
  const { db } = bench.handle;
  const org = await createOrganization(db, { slug: 'bench', name: 'bench' }, actor);
  const project = await createProject(db, { organizationId: org.id, slug: 'bench', name: 'bench' }, actor);
  // The bench measures the allocator, so quota must not cap it: lift any default grant limit.
  await db
    .execute(sql`do $$ begin if to_regclass('allowance_buckets') is not null then update allowance_buckets set "limit" = 1000000000; end if; end $$`)
    .catch(() => {});
  const cidrs = [
    { name: 'base', cidr: '10.0.0.0/8' },
    { name: 'frag', cidr: '11.0.0.0/8' },
    { name: 'v6', cidr: '2001:db8::/32' },
  ];
  for (const c of cidrs) {
    await createNetwork(db, project.id, { name: c.name, cidrs: [{ cidr: c.cidr, maxPrefixLength: c.cidr.includes(':') ? 128 : 32 }] }, actor);
  }
  const sizes = [24, 26, 27, 28, 29, 30, 32];
  const fill = async (network: string, count: number, prefix: (i: number) => number) => {
    const t = performance.now();
    await runConcurrent(count, 8, async (i) => {
      await createClaim(
        db,
        project.id,
        { name: `${network}-fill-${i}`, network, family: network === 'v6' ? 6 : 4, prefixLength: prefix(i), reclaimPolicy: 'Delete' },
        actor,
      );
    });
    return (performance.now() - t) / 1000;
  };
  process.stdout.write(`filling: base 100 claims, frag ${FRAGMENTED} mixed claims with holes, v6 ${FRAGMENTED} /64 claims…\n`);
  await fill('base', 100, (i) => sizes[i % sizes.length]);
  const fragSeconds = await fill('frag', FRAGMENTED, (i) => sizes[(i * 7919) % sizes.length]);
  // Holes: release every third claim, so free space is scattered across the pool.
  await runConcurrent(Math.floor(FRAGMENTED / 3), 8, async (i) => {
    await deleteClaim(db, project.id, `frag-fill-${i * 3}`, actor);
  });
  const v6Seconds = await fill('v6', FRAGMENTED, () => 64);
  const [{ free }] = (await db.execute(
    sql`select count(*)::int as free from ip_free_blocks f join ip_pools p on p.id = f.pool_id join networks n on n.id = p.network_id where n.name = 'frag'`,
  )) as unknown as { free: number }[];
  process.stdout.write(`  filled in ${fragSeconds.toFixed(1)} s (v4) and ${v6Seconds.toFixed(1)} s (v6); fragmented pool has ${free} free blocks\n\n`);

  const measure = async (network: string, prefix: (i: number) => number) => {
    const { latencies } = await runConcurrent(SAMPLES, 1, async (i) => {
      await createClaim(
        db,
        project.id,
        { name: `${network}-m-${i}`, network, family: network === 'v6' ? 6 : 4, prefixLength: prefix(i), reclaimPolicy: 'Delete' },
        actor,
      );
    });
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
  };
  const base = await measure('base', (i) => sizes[i % sizes.length]);
  const frag = await measure('frag', (i) => sizes[i % sizes.length]);
  const v6 = await measure('v6', () => 64);
  const rows = [
    ['IPv4 /8, 100 claims (baseline)', base],
    [`IPv4 /8, ${FRAGMENTED} mixed claims, fragmented`, frag],
    [`IPv6 /32, ${FRAGMENTED} /64 claims`, v6],
  ] as const;
  process.stdout.write('createClaim through the domain function, one caller:\n');
  process.stdout.write('| pool | p50 | p99 |\n|---|---|---|\n');
  for (const [label, r] of rows) process.stdout.write(`| ${label} | ${fmt(r.p50)} | ${fmt(r.p99)} |\n`);
  process.stdout.write(
    `fragmented/baseline p50 ratio: ${(frag.p50 / base.p50).toFixed(2)}× (target ≤ 2×); IPv6/baseline: ${(v6.p50 / base.p50).toFixed(2)}×\n\n`,
  );

  // HTTP: the real web process, 16 concurrent clients for a fixed duration.
  const token = await createApiToken(db, { projectId: project.id, name: 'bench' }, actor);
  const password = 'bench-password-1';
  const user = await createUser(db, { email: 'bench@example.com', name: 'bench', password, createdVia: 'admin', emailVerifiedBy: 'admin' }, actor);
  await addMembership(db, { userId: user.id, role: 'owner', projectId: project.id }, actor);
  const web = await startWeb(bench.url);
  try {
    const seconds = Number(process.env.BENCH_HTTP_SECONDS ?? 15);
    const deadline = Date.now() + seconds * 1000;
    let done = 0;
    let errors = 0;
    const latencies: number[] = [];
    // CPU per request, by process: steadier than the rate on a shared machine.
    const cpu = cpuMeter({ web: web.proc.pid }, { postgres: bench.cpuSource });
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        for (let i = 0; Date.now() < deadline; i++) {
          const t = performance.now();
          const res = await fetch(`${web.base}/api/v1/projects/bench/ipclaims`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token.secret}`, 'content-type': 'application/json' },
            body: JSON.stringify({ metadata: { name: `http-${w}-${i}` }, spec: { network: 'base', prefixLength: 30 } }),
          });
          await res.arrayBuffer();
          latencies.push(performance.now() - t);
          if (res.status === 201) done++;
          else errors++;
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    const cpuPerClaim = cpu.perOp(done + errors);
    const [{ overlaps }] = (await db.execute(sql`
      select count(*)::int as overlaps from ip_allocations a join ip_allocations b on a.pool_id = b.pool_id and a.id < b.id and a.cidr && b.cidr`)) as unknown as {
      overlaps: number;
    }[];
    process.stdout.write(`REST POST /ipclaims, 16 concurrent clients, ${seconds} s:\n`);
    process.stdout.write(
      `  ${(done / elapsed).toFixed(0)} claims/s (target ≥ 400), p50 ${fmt(percentile(latencies, 50))}, p99 ${fmt(percentile(latencies, 99))}, errors ${errors}, overlapping allocations afterwards: ${overlaps}\n`,
    );
    process.stdout.write(`  cpu ms per request (postgres: every PostgreSQL process on the host): ${fmtCpu(cpuPerClaim)}\n\n`);

    // The network page: sign in, then time the server-rendered HTML of the fragmented network.
    const session = await signInCookie(web.base, 'bench@example.com', password);
    const pageTimes: number[] = [];
    let status = 0;
    for (let i = 0; i < 12; i++) {
      const t = performance.now();
      const res = await fetch(`${web.base}/projects/bench/networks/frag`, { headers: { cookie: session } });
      await res.text();
      status = res.status;
      if (i >= 2) pageTimes.push(performance.now() - t);
    }
    process.stdout.write(
      `network page with ${FRAGMENTED} claims (server-rendered HTML, status ${status}): p50 ${fmt(percentile(pageTimes, 50))}, max ${fmt(Math.max(...pageTimes))} (target < 500 ms)\n`,
    );
  } finally {
    await web.stop();
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
