/**
 * Quota admission cost: `node --import tsx bench/quota.ts [createsPerPhase] [callers]`.
 *
 * Uses DATABASE_URL when set (a throwaway database is created on that server and dropped), else a
 * throwaway embedded PostgreSQL in a temp dir. One project, one `ipam.miloapis.com/ipclaims`
 * bucket (its grant raised so it never runs out), 64 concurrent callers creating IP claims through
 * the real `createClaim`. Three modes, interleaved in rounds so all see the same machine load:
 *
 *   quota         the seeded set-up: IPClaim policy → registered type → the bucket grown and a claim row
 *                 written (once per batch of concurrent creates: quota_admit_many)
 *   unregistered  the same policy, but its request type has no registration: not quota-managed
 *                 (policy lookup and CEL still run — the "same create without a registration")
 *   bypassed      no ClaimCreationPolicy for IPClaim at all (one policy lookup, nothing else)
 *
 * Two layouts: all callers in ONE pool, and spread over 16 networks of the project sharing the one
 * bucket. A project's concurrent creates go to PostgreSQL in batches (server/ipam/claim-batch.ts)
 * in either layout. Prints creates/s, mean and p99 latency and CPU per create (PostgreSQL and this
 * process; medians of the rounds), and quota's cost: the median of the rounds' own ratios
 * unregistered ÷ quota creates/s (each round's modes run back to back, so a ratio compares like
 * with like), with the rounds' range, and the same for CPU. Target ≤ 1.1×. Figures only; nothing is
 * asserted.
 */
import { eq, sql } from 'drizzle-orm';
import { claimCreationPolicies } from '../db/schema';
import { systemActor } from '../server/audit/events';
import { createClaim } from '../server/ipam/claims';
import { createNetwork } from '../server/ipam/networks';
import { updateGrant } from '../server/quota/grants';
import { createOrganization } from '../server/tenancy/projects';
import { createProject } from '../server/workflows/project-creation';
import { benchDatabase, cpuMeter, percentile } from './lib/harness';

const perPhase = Number(process.argv[2] ?? 400);
const callers = Number(process.argv[3] ?? 64);
// Many short rounds: one phase's rate moves ±15 % with what the machine does meanwhile (a vacuum, a
// checkpoint, a collection), so the cost is the median of many rounds' own ratios.
const rounds = Number(process.env.BENCH_ROUNDS ?? 21);
const IPCLAIMS = 'ipam.miloapis.com/ipclaims';
type Mode = 'quota' | 'unregistered' | 'bypassed';
const modes: Mode[] = ['quota', 'unregistered', 'bypassed'];

async function main() {
  const bench = await benchDatabase({ connections: callers + 6 });
  const handle = bench.handle;
  const db = handle.db;
  const actor = systemActor('bench');
  try {
    const org = await createOrganization(db, { slug: 'bench', name: 'bench' }, actor);
    const project = await createProject(db, { organizationId: org.id, slug: 'bench', name: 'bench' }, actor);
    // One bucket, large enough never to run out during the bench.
    await updateGrant(db, project.id, 'default-bench', [{ resourceType: IPCLAIMS, amount: 100_000_000 }], actor);
    // Layout "one pool": a single IPv6 pool with room for billions of /128s. Layout "16 pools": 16 networks.
    await createNetwork(db, project.id, { name: 'one', cidrs: [{ cidr: '2001:db8:1::/96', maxPrefixLength: 128, defaultPrefixLength: 128 }] }, actor);
    for (let i = 0; i < 16; i++) {
      await createNetwork(
        db,
        project.id,
        { name: `n${i}`, cidrs: [{ cidr: `2001:db8:2:${i.toString(16)}::/96`, maxPrefixLength: 128, defaultPrefixLength: 128 }] },
        actor,
      );
    }
    const [policy] = await db.select().from(claimCreationPolicies).where(eq(claimCreationPolicies.triggerKind, 'IPClaim'));

    async function setMode(mode: Mode) {
      await db.delete(claimCreationPolicies).where(eq(claimCreationPolicies.triggerKind, 'IPClaim'));
      if (mode === 'bypassed') return;
      const requests = mode === 'quota' ? policy.requests : [{ resourceType: 'bench.example.com/unregistered', amount: 1 }];
      await db.insert(claimCreationPolicies).values({ ...policy, requests });
    }

    let seq = 0;
    async function phase(mode: Mode, layout: 'one' | 'spread', n: number) {
      await setMode(mode);
      const latencies: number[] = [];
      let next = 0;
      const cpu = cpuMeter({}, { postgres: bench.cpuSource });
      const start = performance.now();
      await Promise.all(
        Array.from({ length: callers }, async (_, worker) => {
          for (;;) {
            const i = next++;
            if (i >= n) return;
            const network = layout === 'one' ? 'one' : `n${worker % 16}`;
            const t0 = performance.now();
            await createClaim(db, project.id, { name: `b${seq}-${i}`, network, family: 6, reclaimPolicy: 'Delete' }, actor);
            latencies.push(performance.now() - t0);
          }
        }),
      );
      const seconds = (performance.now() - start) / 1000;
      const { postgres, client } = cpu.perOp(n);
      seq++;
      return {
        perSecond: n / seconds,
        mean: latencies.reduce((a, b) => a + b, 0) / latencies.length,
        p99: percentile(latencies, 99),
        cpuMs: postgres + client,
        pgMs: postgres,
        clientMs: client,
      };
    }
    type Phase = Awaited<ReturnType<typeof phase>>;

    console.log(`Quota admission bench: ${callers} concurrent callers, ${perPhase} IP-claim creates per phase, ${rounds} rounds (Node ${process.version})`);
    for (const layout of ['one', 'spread'] as const) {
      // Warm up (JIT, plans, caches) in every mode.
      for (const m of modes) await phase(m, layout, Math.min(200, perPhase));
      const results: Record<Mode, Phase[]> = { quota: [], unregistered: [], bypassed: [] };
      // Each mode goes first, middle and last equally often (the pool fills as the run goes on).
      for (let r = 0; r < rounds; r++) {
        const order = [...modes.slice(r % 3), ...modes.slice(0, r % 3)];
        for (const m of r % 2 ? order.reverse() : order) results[m].push(await phase(m, layout, perPhase));
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      console.log(`\nlayout: ${layout === 'one' ? 'one pool' : '16 networks sharing one bucket'}`);
      console.log(
        `${'mode'.padEnd(14)} ${'creates/s'.padStart(10)} ${'mean ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'CPU ms'.padStart(8)} ${'(PG'.padStart(6)} ${'client)'.padStart(7)}   (median of ${rounds}; CPU per create)`,
      );
      for (const m of modes) {
        const col = (k: keyof Phase, digits: number, width: number) =>
          median(results[m].map((x) => x[k]))
            .toFixed(digits)
            .padStart(width);
        console.log(
          `${m.padEnd(14)} ${col('perSecond', 0, 10)} ${col('mean', 2, 9)} ${col('p99', 2, 9)} ${col('cpuMs', 3, 8)} ${col('pgMs', 3, 6)} ${col('clientMs', 3, 7)}`,
        );
      }
      if (process.env.BENCH_VERBOSE) for (const m of modes) console.log(`${m}: ${results[m].map((x) => x.perSecond.toFixed(0)).join(' ')}`);
      // Per round: the other mode's rate over quota's (time per create), and quota's CPU over the other's.
      const ratios = (base: Mode) => results.quota.map((q, r) => results[base][r].perSecond / q.perSecond);
      const cpuRatios = (base: Mode) => results.quota.map((q, r) => q.cpuMs / results[base][r].cpuMs);
      const range = (xs: number[]) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
      const cost = ratios('unregistered');
      console.log(
        `quota cost vs. the same create without a registration: ${median(cost).toFixed(2)}× time per create (rounds ${range(cost)}; target ≤ 1.1×), ` +
          `${median(cpuRatios('unregistered')).toFixed(2)}× CPU per create; vs. no policy at all: ${median(ratios('bypassed')).toFixed(2)}× time, ${median(cpuRatios('bypassed')).toFixed(2)}× CPU`,
      );
    }
    const [books] = (await db.execute(sql`
      select b.allocated::int as allocated,
             (select count(*)::int from resource_claims where project_id = ${project.id} and status = 'Granted' and released_at is null) as live
      from allowance_buckets b where b.project_id = ${project.id} and b.resource_type = ${IPCLAIMS}`)) as unknown as { allocated: number; live: number }[];
    console.log(`\nbooks after the run: allocated ${books.allocated}, live granted claims ${books.live}`);
  } finally {
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
