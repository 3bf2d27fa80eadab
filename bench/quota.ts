/**
 * Quota admission cost: `node --import tsx bench/quota.ts [createsPerPhase] [callers]`.
 *
 * Uses DATABASE_URL when set (a throwaway database is created on that server and dropped), else a
 * throwaway embedded PostgreSQL in a temp dir. One project, one `ipam.miloapis.com/ipclaims`
 * bucket (its grant raised so it never runs out), 64 concurrent callers creating IP claims through
 * the real `createClaim`. Three modes, interleaved in rounds so all see the same machine load:
 *
 *   quota         the seeded set-up: IPClaim policy → registered type → conditional bucket update + claim row
 *   unregistered  the same policy, but its request type has no registration: not quota-managed
 *                 (policy lookup and CEL still run — the "same create without a registration")
 *   bypassed      no ClaimCreationPolicy for IPClaim at all (one policy lookup, nothing else)
 *
 * Two layouts: all callers in ONE pool (IPAM's pool lock already serializes them) and spread over
 * 16 networks of the project (pool locks in parallel; the one bucket row is the shared point).
 * Prints creates/s, mean and p99 latency, and the ratio quota ÷ unregistered (target ≤ 1.3×).
 * Figures only; nothing is asserted.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../bin/lib/embedded-postgres';
import { createDb } from '../db/client';
import { migrateDatabase } from '../db/migrate';
import { claimCreationPolicies } from '../db/schema';
import { systemActor } from '../server/audit/events';
import { createClaim } from '../server/ipam/claims';
import { createNetwork } from '../server/ipam/networks';
import { updateGrant } from '../server/quota/grants';
import { createOrganization } from '../server/tenancy/projects';
import { createProject } from '../server/workflows/project-creation';
import { freePort } from '../test/global-setup';

const perPhase = Number(process.argv[2] ?? 400);
const callers = Number(process.argv[3] ?? 64);
const rounds = 5;
const IPCLAIMS = 'ipam.miloapis.com/ipclaims';
type Mode = 'quota' | 'unregistered' | 'bypassed';
const modes: Mode[] = ['quota', 'unregistered', 'bypassed'];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

async function main() {
  let embedded: EmbeddedDatabase | undefined;
  let tmp: string | undefined;
  let url: string;
  let drop: (() => Promise<void>) | undefined;
  const dbName = `meridian_bench_quota_${Date.now()}`;
  if (process.env.DATABASE_URL) {
    const admin = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${dbName}"`);
    await admin.end();
    const u = new URL(process.env.DATABASE_URL);
    u.pathname = `/${dbName}`;
    url = u.toString();
    drop = async () => {
      const a = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists "${dbName}" with (force)`);
      await a.end();
    };
  } else {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'meridian-bench-quota-'));
    embedded = await startEmbeddedPostgres({ dataDir: tmp, port: await freePort(), database: dbName });
    url = embedded.url;
  }
  await migrateDatabase(url);
  const handle = createDb(url, { max: callers + 6, applicationName: 'bench-quota' });
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
      seq++;
      latencies.sort((a, b) => a - b);
      return { perSecond: n / seconds, mean: latencies.reduce((a, b) => a + b, 0) / latencies.length, p99: percentile(latencies, 99) };
    }

    console.log(`Quota admission bench: ${callers} concurrent callers, ${perPhase} IP-claim creates per phase, ${rounds} rounds (Node ${process.version})`);
    for (const layout of ['one', 'spread'] as const) {
      // Warm up (JIT, plans, caches) in every mode.
      for (const m of modes) await phase(m, layout, Math.min(200, perPhase));
      const results: Record<Mode, { perSecond: number; mean: number; p99: number }[]> = { quota: [], unregistered: [], bypassed: [] };
      for (let r = 0; r < rounds; r++) for (const m of r % 2 ? [...modes].reverse() : modes) results[m].push(await phase(m, layout, perPhase));
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      console.log(`\nlayout: ${layout === 'one' ? 'one pool (pool lock serializes creates)' : '16 networks, one bucket (the bucket row is the shared point)'}`);
      console.log(`${'mode'.padEnd(14)} ${'creates/s'.padStart(10)} ${'mean ms'.padStart(9)} ${'p99 ms'.padStart(9)}   (median of ${rounds})`);
      const summary: Record<Mode, { perSecond: number; mean: number; p99: number }> = {} as never;
      for (const m of modes) {
        summary[m] = {
          perSecond: median(results[m].map((x) => x.perSecond)),
          mean: median(results[m].map((x) => x.mean)),
          p99: median(results[m].map((x) => x.p99)),
        };
        console.log(
          `${m.padEnd(14)} ${summary[m].perSecond.toFixed(0).padStart(10)} ${summary[m].mean.toFixed(2).padStart(9)} ${summary[m].p99.toFixed(2).padStart(9)}`,
        );
      }
      const cost = summary.unregistered.perSecond / summary.quota.perSecond;
      console.log(
        `quota cost vs. the same create without a registration: ${cost.toFixed(2)}× time per create (target ≤ 1.3×); vs. no policy at all: ${(summary.bypassed.perSecond / summary.quota.perSecond).toFixed(2)}×`,
      );
    }
    const [books] = (await db.execute(sql`
      select b.allocated::int as allocated,
             (select count(*)::int from resource_claims where project_id = ${project.id} and status = 'Granted' and released_at is null) as live
      from allowance_buckets b where b.project_id = ${project.id} and b.resource_type = ${IPCLAIMS}`)) as unknown as { allocated: number; live: number }[];
    console.log(`\nbooks after the run: allocated ${books.allocated}, live granted claims ${books.live}`);
  } finally {
    await handle.close();
    if (drop) await drop();
    if (embedded) await embedded.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
