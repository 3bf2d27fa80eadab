/**
 * bench/capacity: the three capacity figures of issue 21.
 *   `node --import tsx bench/capacity.ts`   (BENCH_SERIES, BENCH_CLAIMS, BENCH_HISTORY_SERIES to resize)
 *
 * 1. Sampling: one sample of BENCH_SERIES (10,000) series — networks with a root pool each (two
 *    series per network) written as rows (the sampler reads only counters, so how they got there
 *    does not matter), plus the project's buckets — timed as the statement's wall time from the
 *    client (the database time of `capacity_sample`, median of 5 at different minutes), in one
 *    statement and paced part by part as the worker records it. Then IP claim creates at 8 callers
 *    in a network of their own, in rounds of "alone", "while paced samples run back to back" (a
 *    worst case: the worker samples once a minute) and, for comparison, unpaced samples back to
 *    back; creates/s compared.
 * 2. A 90-day chart of one series (hourly points) with three years of history loaded for
 *    BENCH_HISTORY_SERIES series (every period full: 6,136 rows each): p50/p95 of 200 reads.
 * 3. `available` on a pool fragmented by BENCH_CLAIMS (20,000) claims of mixed sizes with every
 *    third released: p50/p95 of 500 reads (with a length, and the largest blocks).
 *
 * Prints figures; asserts nothing. DATABASE_URL's server when set, else a throwaway embedded PostgreSQL.
 */
import { sql } from 'drizzle-orm';
import { systemActor } from '../server/audit/events';
import { readSeriesPoints, recordSample, resolveRange, SAMPLE_DUTY } from '../server/capacity/history';
import { availableBlocks } from '../server/ipam/available';
import { createClaim, deleteClaim } from '../server/ipam/claims';
import { createNetwork } from '../server/ipam/networks';
import { createOrganization } from '../server/tenancy/projects';
import { createProject } from '../server/workflows/project-creation';
import { benchDatabase, percentile, runConcurrent } from './lib/harness';

const actor = systemActor('bench');
const SERIES = Number(process.env.BENCH_SERIES ?? 10_000);
const CLAIMS = Number(process.env.BENCH_CLAIMS ?? 20_000);
const HISTORY_SERIES = Number(process.env.BENCH_HISTORY_SERIES ?? 200);
const CREATE_SECONDS = 6;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const out = (s: string) => process.stdout.write(`${s}\n`);
const ms = (v: number) => `${v.toFixed(1)} ms`;

async function main() {
  const bench = await benchDatabase();
  const { db } = bench.handle;
  try {
    const org = await createOrganization(db, { slug: 'bench', name: 'bench' }, actor);
    const project = await createProject(db, { organizationId: org.id, slug: 'bench', name: 'bench' }, actor);
    await db.execute(sql`update allowance_buckets set "limit" = 1000000000 where project_id = ${project.id}`);

    // ---- 1. sampling ------------------------------------------------------------------------------
    const networks = Math.floor(SERIES / 2);
    await db.execute(sql`
      with n as (
        insert into networks (project_id, name) select ${project.id}, 'n' || i from generate_series(1, ${networks}) i returning id, name)
      insert into ip_pools (project_id, network_id, name, cidr, family, min_prefix_length, max_prefix_length, default_prefix_length, capacity, allocated)
      select ${project.id}, n.id, n.name || '-v4', ('100.' || (64 + (substr(n.name, 2)::int >> 8)) || '.' || (substr(n.name, 2)::int & 255) || '.0/24')::cidr,
             4, 24, 32, 28, 256, (random() * 256)::int
        from n`);
    await createNetwork(db, project.id, { name: 'claims', cidrs: [{ cidr: '2001:db8:1::/96', maxPrefixLength: 128, defaultPrefixLength: 128 }] }, actor);
    const base = Date.parse('2031-01-01T00:00:00Z');
    const first = performance.now();
    const n = await recordSample(db, new Date(base));
    out(`sampling: ${n} series; first sample (creates the series) ${ms(performance.now() - first)}`);
    const times: number[] = [];
    const pacedDb: number[] = [];
    const pacedSpan: number[] = [];
    let parts = 0;
    for (let i = 1; i <= 5; i++) {
      await db.execute(sql`update ip_pools set allocated = (random() * 256)::int where project_id = ${project.id} and family = 4`);
      const t = performance.now();
      await recordSample(db, new Date(base + i * 60_000));
      times.push(performance.now() - t);
      await db.execute(sql`update ip_pools set allocated = (random() * 256)::int where project_id = ${project.id} and family = 4`);
      let spent = 0;
      parts = 0;
      const p0 = performance.now();
      await recordSample(db, new Date(base + (100 + i) * 60_000), {
        duty: SAMPLE_DUTY,
        onPart: (took) => {
          spent += took;
          parts++;
        },
      });
      pacedSpan.push(performance.now() - p0);
      pacedDb.push(spent);
    }
    out(`  one sample of ${n} series in one statement: p50 ${ms(percentile(times, 50))}, max ${ms(Math.max(...times))} (target ≤ 1,000 ms)`);
    out(
      `  paced as the worker records it (${parts} parts, duty ${SAMPLE_DUTY * 100} %): database time p50 ${ms(percentile(pacedDb, 50))}, ` +
        `max ${ms(Math.max(...pacedDb))}; spread over ${(percentile(pacedSpan, 50) / 1000).toFixed(1)} s`,
    );

    let claimNo = 0;
    const createsPerSecond = async (seconds: number) => {
      const until = performance.now() + seconds * 1000;
      let done = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (performance.now() < until) {
            await createClaim(db, project.id, { name: `c${claimNo++}`, network: 'claims', family: 6, prefixLength: 128, reclaimPolicy: 'Delete' }, actor);
            done++;
          }
        }),
      );
      return done / seconds;
    };
    // Claim creates alone, then while samples run back to back — paced as the worker records them
    // (the sampler always busy: a worst case, the worker samples once a minute), then unpaced for
    // comparison — in rounds, so all three run under the same conditions.
    let minute = 200;
    const whileSampling = async (paced: boolean) => {
      const stop = new AbortController();
      const sampler = (async () => {
        while (!stop.signal.aborted) {
          await recordSample(db, new Date(base + minute++ * 60_000), paced ? { duty: SAMPLE_DUTY, signal: stop.signal } : undefined);
        }
      })();
      const rate = await createsPerSecond(CREATE_SECONDS);
      stop.abort();
      await sampler;
      return rate;
    };
    const alone: number[] = [];
    const paced: number[] = [];
    const unpaced: number[] = [];
    // The order rotates round by round: creates slow down as the network fills, and a fixed order
    // would charge that to whichever mode runs last.
    for (let round = 0; round < ROUNDS; round++) {
      const modes = [
        async () => alone.push(await createsPerSecond(CREATE_SECONDS)),
        async () => paced.push(await whileSampling(true)),
        async () => unpaced.push(await whileSampling(false)),
      ];
      for (let k = 0; k < 3; k++) await modes[(round + k) % 3]();
      out(
        `  round ${round + 1}: creates alone ${alone[round].toFixed(0)}/s; while paced samples run back to back ${paced[round].toFixed(0)}/s; ` +
          `unpaced back to back ${unpaced[round].toFixed(0)}/s`,
      );
    }
    // Each round's own ratio (its modes ran minutes apart at most), then the median over the rounds.
    const slower = (rates: number[]) =>
      percentile(
        rates.map((r, i) => (alone[i] - r) / alone[i]).map((x) => x * 100),
        50,
      );
    out(
      `  claim creates: median ${percentile(alone, 50).toFixed(0)}/s alone; while the paced sampler runs, median of the rounds' ` +
        `${slower(paced).toFixed(1)} % slower (target ≤ 5 %); unpaced ${slower(unpaced).toFixed(1)} % slower`,
    );
    const [size] = (await db.execute(sql`
      select pg_total_relation_size('capacity_samples')::float8 as bytes, (select count(*) from capacity_samples)::float8 as rows`)) as unknown as {
      bytes: number;
      rows: number;
    }[];
    out(
      `  storage: ${(size.bytes / size.rows).toFixed(0)} bytes per sample row with its index → ${(((size.bytes / size.rows) * 6136) / 1024).toFixed(0)} KiB per series at full retention\n`,
    );

    // ---- 2. a 90-day chart with three years loaded --------------------------------------------------
    const now = new Date();
    const t = performance.now();
    // In time order across the series, as the sampler writes them (one series' rows spread over the
    // whole table); then the vacuum that autovacuum runs on an insert-mostly table.
    await db.execute(sql`
      insert into capacity_samples (series_id, step, at, used, capacity)
      select s.id, p.step, g.at, (random() * 256)::int, 256
        from (select id from capacity_series order by id limit ${HISTORY_SERIES}) s
        cross join (values (60, 2880), (3600, 2160), (86400, 1096)) p(step, n)
        cross join lateral (select to_timestamp(floor(extract(epoch from ${now.toISOString()}::timestamptz) / p.step) * p.step - k * p.step) as at
                              from generate_series(0, p.n - 1) k) g
       order by g.at, s.id, p.step
      on conflict do nothing`);
    await db.execute(sql`vacuum analyze capacity_samples`);
    const [{ rows }] = (await db.execute(sql`select count(*)::int as rows from capacity_samples`)) as unknown as { rows: number }[];
    out(`chart: ${HISTORY_SERIES} series with three years of history (${rows} sample rows) loaded in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const [{ id }] = (await db.execute(sql`select id from capacity_series order by id limit 1`)) as unknown as { id: number }[];
    const range = resolveRange({ from: '-90d', step: '1h' }, now);
    const reads: number[] = [];
    let points = 0;
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      points = (await readSeriesPoints(db, id, range)).length;
      reads.push(performance.now() - t0);
    }
    out(`  90-day chart of one series (${points} hourly points): p50 ${ms(percentile(reads, 50))}, p95 ${ms(percentile(reads, 95))} (target p95 ≤ 50 ms)\n`);

    // ---- 3. available on a fragmented pool ---------------------------------------------------------
    await createNetwork(db, project.id, { name: 'frag', cidrs: [{ cidr: '11.0.0.0/8', maxPrefixLength: 32 }] }, actor);
    const sizes = [24, 26, 27, 28, 29, 30, 32];
    const fillStart = performance.now();
    await runConcurrent(CLAIMS, 8, async (i) => {
      await createClaim(
        db,
        project.id,
        { name: `f${i}`, network: 'frag', family: 4, prefixLength: sizes[(i * 7919) % sizes.length], reclaimPolicy: 'Delete' },
        actor,
      );
    });
    await runConcurrent(Math.floor(CLAIMS / 3), 8, async (i) => {
      await deleteClaim(db, project.id, `f${i * 3}`, actor);
    });
    const [{ free }] = (await db.execute(sql`
      select count(*)::int as free from ip_free_blocks f join ip_pools p on p.id = f.pool_id where p.name = 'frag-v4'`)) as unknown as { free: number }[];
    out(`available: pool of ${CLAIMS} claims (every third released) filled in ${((performance.now() - fillStart) / 1000).toFixed(0)} s, ${free} free blocks`);
    for (const [label, prefixLength] of [
      ['prefixLength=24&limit=10', 24],
      ['prefixLength=30&limit=10', 30],
      ['largest (no length), limit=10', undefined],
    ] as const) {
      const lat: number[] = [];
      for (let i = 0; i < 500; i++) {
        const t0 = performance.now();
        await availableBlocks(db, project.id, 'frag', 'frag-v4', { prefixLength, limit: 10 });
        lat.push(performance.now() - t0);
      }
      out(`  ${label}: p50 ${ms(percentile(lat, 50))}, p95 ${ms(percentile(lat, 95))} (target p95 ≤ 20 ms)`);
    }
  } finally {
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
