import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import type { Db } from '@/db/client';
import { systemActor } from '@/server/audit/events';
import { createCluster, findCluster } from '@/server/cni/clusters';
import { addLease } from '@/server/cni/leases';
import { createClaim, deleteClaim } from '@/server/ipam/claims';
import { createNetwork } from '@/server/ipam/networks';
import { createApiToken } from '@/server/tenancy/tokens';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { routeHandlers } from '@/test/rest';
import {
  fleetHistory,
  MAX_ROWS_PER_SERIES,
  objectHistory,
  pruneHistory,
  readSeriesPoints,
  recordSample,
  resolveRange,
  seriesOf,
  TIERS,
  uuidBefore,
} from './history';

const actor = systemActor('test');

async function setup() {
  const { db } = testDb();
  const { project } = await makeProject(db);
  const network = await createNetwork(
    db,
    project.id,
    { name: 'vpc', cidrs: [{ cidr: '198.51.100.0/24', reserveLeading: 4 } as never, { cidr: '2001:db8::/64' }] },
    actor,
  );
  return { db, project, networkId: (network as { id: string }).id };
}

async function samplesOf(db: Db, key: string) {
  return (await db.execute(sql`
    select cs.step, to_char(cs.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as at, cs.used::text as used, cs.capacity::text as capacity
      from capacity_samples cs join capacity_series s on s.id = cs.series_id where s.key = ${key} order by cs.step, cs.at`)) as unknown as {
    step: number;
    at: string;
    used: string;
    capacity: string;
  }[];
}

describe('capacity history', () => {
  test('a sample records every series of the project from the exact counters, in the three periods', async () => {
    const { db, project, networkId } = await setup();
    await createCluster(db, project.id, { name: 'c1', network: 'vpc' }, actor);
    const cluster = await findCluster(db, project.id, 'c1');
    await createClaim(db, project.id, { name: 'web', network: 'vpc', prefixLength: 28, family: 4, reclaimPolicy: 'Delete' } as never, actor);
    await addLease(db, cluster, { cniNetwork: 'k8s', containerId: 'ctr1', ifname: 'eth0', node: 'n1', podNamespace: 'default', podName: 'p1' }, actor);

    const at = new Date('2031-03-04T05:06:30Z');
    expect(await recordSample(db, at)).toBeGreaterThan(0);

    const keys = (
      (await db.execute(sql`select key, kind from capacity_series where project_id = ${project.id} order by key`)) as unknown as { key: string; kind: string }[]
    ).map((r) => r.kind);
    expect(keys.filter((k) => k === 'network')).toHaveLength(2);
    expect(keys.filter((k) => k === 'pool')).toHaveLength(2);
    expect(keys.filter((k) => k === 'cluster-pods')).toHaveLength(2);
    expect(keys.filter((k) => k === 'cluster-blocks')).toHaveLength(2);
    expect(keys.filter((k) => k === 'bucket').length).toBeGreaterThan(0);

    // IPv4: 256 addresses, 4 reserved → 252 allocatable; the /28 claim and the node's /26 block → 80 used.
    expect(await samplesOf(db, `network:${networkId}:4`)).toEqual([
      { step: 60, at: '2031-03-04T05:06:00Z', used: '80', capacity: '252' },
      { step: 3600, at: '2031-03-04T05:00:00Z', used: '80', capacity: '252' },
      { step: 86400, at: '2031-03-04T00:00:00Z', used: '80', capacity: '252' },
    ]);
    expect((await samplesOf(db, `cluster-pods:${cluster.id}:4`))[0]).toMatchObject({ used: '1', capacity: '64' });
    expect((await samplesOf(db, `cluster-blocks:${cluster.id}:4`))[0]).toMatchObject({ used: '64', capacity: '252' });
    expect((await samplesOf(db, `bucket:${project.id}:ipam.miloapis.com/ipclaims`))[0]).toMatchObject({ used: '1', capacity: '100' });

    // A later minute of the same hour: a new minute row; the hour and day keep the peak.
    await deleteClaim(db, project.id, 'web', actor);
    await recordSample(db, new Date('2031-03-04T05:07:10Z'));
    await recordSample(db, new Date('2031-03-04T05:07:10Z')); // the same tick again changes nothing
    expect(await samplesOf(db, `network:${networkId}:4`)).toEqual([
      { step: 60, at: '2031-03-04T05:06:00Z', used: '80', capacity: '252' },
      { step: 60, at: '2031-03-04T05:07:00Z', used: '64', capacity: '252' },
      { step: 3600, at: '2031-03-04T05:00:00Z', used: '80', capacity: '252' },
      { step: 86400, at: '2031-03-04T00:00:00Z', used: '80', capacity: '252' },
    ]);
  });

  test('a paced sample records, part by part, exactly the rows of a sample in one statement; an abort stops it between parts', async () => {
    const { db, project } = await setup();
    for (let i = 0; i < 5; i++) {
      await createNetwork(db, project.id, { name: `vpc-${i}`, cidrs: [{ cidr: `10.${i}.0.0/16` }] }, actor);
      await createClaim(db, project.id, { name: `c-${i}`, network: `vpc-${i}`, prefixLength: 24 + i, family: 4, reclaimPolicy: 'Delete' } as never, actor);
    }
    await createCluster(db, project.id, { name: 'c1', network: 'vpc-2' }, actor);
    const cluster = await findCluster(db, project.id, 'c1');
    await addLease(db, cluster, { cniNetwork: 'k8s', containerId: 'ctr1', ifname: 'eth0', node: 'n1', podNamespace: 'default', podName: 'p1' }, actor);
    const [{ networks }] = (await db.execute(sql`select count(*)::int as networks from networks`)) as unknown as { networks: number }[];

    const whole = new Date('2031-05-01T00:00:00Z');
    const paced = new Date('2031-05-01T00:10:00Z');
    const n = await recordSample(db, whole);
    const parts: number[] = [];
    expect(await recordSample(db, paced, { duty: 0.5, partNetworks: 2, onPart: (ms) => parts.push(ms) })).toBe(n);
    expect(parts).toHaveLength(Math.ceil(networks / 2));
    const at = async (t: Date) =>
      (await db.execute(sql`
        select s.key, cs.used::text as used, cs.capacity::text as capacity from capacity_samples cs join capacity_series s on s.id = cs.series_id
         where cs.step = 60 and cs.at = ${t.toISOString()}::timestamptz order by s.key`)) as unknown as { key: string; used: string; capacity: string }[];
    const rows = await at(whole);
    expect(rows).toHaveLength(n);
    expect(rows.some((r) => r.key.startsWith('bucket:') && r.used !== '0')).toBe(true);
    expect(rows.some((r) => r.key.startsWith('cluster-pods:') && r.used === '1')).toBe(true);
    expect(await at(paced)).toEqual(rows);

    // Aborted after its first part: that part is recorded, the rest is not.
    const stop = new AbortController();
    const cut = new Date('2031-05-01T00:20:00Z');
    const first = await recordSample(db, cut, { duty: 1, partNetworks: 2, signal: stop.signal, onPart: () => stop.abort() });
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(n);
    expect(await at(cut)).toHaveLength(first);

    // Parts meet without a gap: each ends just below where the next begins.
    expect(uuidBefore('10000000-0000-4000-8000-000000000000')).toBe('10000000-0000-4000-7fff-ffffffffffff');
    expect(uuidBefore('a0000000-0000-0000-0000-000000000000')).toBe('9fffffff-ffff-ffff-ffff-ffffffffffff');
  });

  test('the counters are read without scanning allocations, leases or claims', async () => {
    const { db } = testDb();
    const plan = JSON.stringify(await db.execute(sql`explain (format json) select * from capacity_counters()`));
    for (const table of ['ip_allocations', 'pod_leases', 'ip_claims', 'resource_claims', 'ip_free_blocks']) expect(plan).not.toContain(`"${table}"`);
    expect(plan).toContain('"ip_pools"');
  });

  test("a chart's read of one series is an index-only scan (the key carries the values)", async () => {
    const { db } = await setup();
    await recordSample(db, new Date('2031-05-01T00:00:00Z'));
    // What autovacuum does for the insert-mostly table: marks the settled pages all-visible.
    await db.execute(sql`vacuum analyze capacity_samples`);
    const [{ id }] = (await db.execute(sql`select id from capacity_series order by id limit 1`)) as unknown as { id: number }[];
    const range = resolveRange({ from: '2031-02-01T00:00:00Z', to: '2031-05-01T00:00:00Z', step: '1h' }, new Date('2031-05-01T00:00:00Z'));
    const plan = await db.transaction(async (tx) => {
      // Any plan but a scan of the key: the question is only whether that scan needs the heap.
      await tx.execute(sql`set local enable_seqscan = off`);
      await tx.execute(sql`set local enable_bitmapscan = off`);
      await tx.execute(sql`set local plan_cache_mode = force_custom_plan`);
      return JSON.stringify(
        await tx.execute(sql`explain (format json)
          select at, used, capacity from capacity_samples
           where series_id = ${id} and step = ${range.source} and at >= ${range.from.toISOString()}::timestamptz and at <= ${range.to.toISOString()}::timestamptz
           order by series_id, step, at`),
      );
    });
    expect(plan).toContain('"Node Type":"Index Only Scan"');
  });

  test('pruning keeps each period for its retention only', async () => {
    const { db, networkId } = await setup();
    const now = new Date('2031-06-01T00:00:00Z');
    await recordSample(db, now);
    const [{ id }] = (await db.execute(sql`select id from capacity_series where key = ${`network:${networkId}:4`}`)) as unknown as { id: number }[];
    const ago = (s: number) => new Date(now.getTime() - s * 1000).toISOString();
    for (const [step, age] of [
      [60, 2 * 86_400 - 60],
      [60, 2 * 86_400 + 60],
      [3600, 90 * 86_400 - 3600],
      [3600, 90 * 86_400 + 3600],
      [86_400, 1096 * 86_400 - 86_400],
      [86_400, 1096 * 86_400 + 86_400],
    ])
      await db.execute(sql`insert into capacity_samples (series_id, step, at, used, capacity) values (${id}, ${step}, ${ago(age)}::timestamptz, 1, 10)`);
    await pruneHistory(db, now);
    const left = (await db.execute(
      sql`select step, count(*)::int as n from capacity_samples where series_id = ${id} group by step order by step`,
    )) as unknown as {
      step: number;
      n: number;
    }[];
    expect(left).toEqual([
      { step: 60, n: 2 },
      { step: 3600, n: 2 },
      { step: 86400, n: 2 },
    ]);
    expect(MAX_ROWS_PER_SERIES).toBe(2880 + 2160 + 1096);

    // A series deleted (with its project, or pruned) takes its samples with it.
    await db.execute(sql`delete from capacity_series where id = ${id}`);
    const [{ n }] = (await db.execute(sql`select count(*)::int as n from capacity_samples where series_id = ${id}`)) as unknown as { n: number }[];
    expect(n).toBe(0);
  });

  test('history reads aggregate to the step with the peak, from the finest period kept at `from`', async () => {
    const { db, project, networkId } = await setup();
    const base = Date.parse('2031-07-01T10:00:00Z');
    for (let i = 0; i < 10; i++) {
      if (i === 3) await createClaim(db, project.id, { name: 'a', network: 'vpc', prefixLength: 26, family: 4, reclaimPolicy: 'Delete' } as never, actor);
      if (i === 6) await deleteClaim(db, project.id, 'a', actor);
      await recordSample(db, new Date(base + i * 60_000));
    }
    const [series] = await seriesOf(db, project.id, networkId, ['network']);
    const now = new Date(base + 10 * 60_000);
    const range = resolveRange({ from: '2031-07-01T10:00:00Z', to: '2031-07-01T10:09:59Z', step: '5m' }, now);
    expect(range).toMatchObject({ step: 300, source: 60 });
    expect(await readSeriesPoints(db, series.id, range)).toEqual([
      { at: '2031-07-01T10:00:00Z', used: '64', capacity: '252', utilization: 0.253968 },
      { at: '2031-07-01T10:05:00Z', used: '64', capacity: '252', utilization: 0.253968 },
    ]);
    const minutes = await readSeriesPoints(db, series.id, resolveRange({ from: '-10m', step: '1m' }, now));
    expect(minutes.map((p) => p.used)).toEqual(['0', '0', '0', '64', '64', '64', '0', '0', '0', '0']);

    const [v4] = await objectHistory(db, project.id, networkId, ['network'], resolveRange({ from: '-1h' }, now), now);
    // Ten minutes of history are one hourly peak: no line to fit yet.
    expect(v4).toMatchObject({ family: 'IPv4', current: { used: '0', capacity: '252' }, forecast: { state: 'insufficientData' } });
  });

  test.each([
    [{}, { step: 300, source: 60 }],
    [{ from: '-7d' }, { step: 3600, source: 3600 }],
    [
      { from: '-90d', step: '1h' },
      { step: 3600, source: 3600 },
    ],
    [{ from: '-730d' }, { step: 86_400 * 2, source: 86_400 }],
    [
      { from: '-1h', step: '1' },
      { step: 60, source: 60 },
    ],
    [
      { from: '-1h', step: '90s' },
      { step: 120, source: 60 },
    ],
  ])('range %o resolves to %o', (input, expected) => {
    const r = resolveRange(input, new Date('2031-01-01T00:00:00Z'));
    expect({ step: r.step, source: r.source }).toEqual(expected);
  });

  test.each([
    [{ from: 'yesterday' }, 'from'],
    [{ to: '2031-13-45' }, 'to'],
    [{ from: '-1h', to: '-2h' }, 'from'],
    [{ step: 'fast' }, 'step'],
    [{ from: '-2d', to: '-1s', step: '1m' }, 'step'],
  ])('range %o is refused naming %s', (input, field) => {
    expect(() => resolveRange(input, new Date('2031-01-01T00:00:00Z'))).toThrow(expect.objectContaining({ code: 'ValidationFailed', field }));
  });

  test('REST: a network, a cluster and the buckets over time; another project is 404', async () => {
    const { db, project } = await setup();
    await createCluster(db, project.id, { name: 'c1', network: 'vpc' }, actor);
    await recordSample(db, new Date(Date.now() - 120_000));
    await recordSample(db);
    const token = await createApiToken(db, { projectId: project.id, name: 'rest' }, actor);
    const get = async (path: string, params: Record<string, string>, query = '', slug = project.slug) => {
      const res = await routeHandlers(path).GET(new Request(`http://localhost/x${query}`, { headers: { authorization: `Bearer ${token.secret}` } }), {
        params: Promise.resolve({ project: slug, ...params }),
      });
      return { status: res.status, body: await res.json() };
    };
    const net = await get('/api/v1/projects/{project}/networks/{name}/utilization', { name: 'vpc' }, '?from=-10m&step=1m');
    expect(net.status).toBe(200);
    expect(net.body).toMatchObject({ kind: 'UtilizationHistory', metadata: { name: 'vpc' }, spec: { step: 60, sourceStep: 60 } });
    expect(net.body.items.map((s: { family: string }) => s.family)).toEqual(['IPv4', 'IPv6']);
    expect(net.body.items[0].points.length).toBeGreaterThanOrEqual(2);
    expect(net.body.items[0].forecast).toHaveProperty('state');

    const cl = await get('/api/v1/projects/{project}/clusters/{cluster}/utilization', { cluster: 'c1' });
    expect(cl.body.items.map((s: { kind: string }) => s.kind).sort()).toEqual(['cluster-blocks', 'cluster-blocks', 'cluster-pods', 'cluster-pods']);
    const buckets = await get('/api/v1/projects/{project}/allowancebuckets/utilization', {}, '?resourceType=ipam.miloapis.com/ipclaims');
    expect(buckets.body.items).toHaveLength(1);
    expect(buckets.body.items[0]).toMatchObject({ kind: 'bucket', resourceType: 'ipam.miloapis.com/ipclaims' });

    expect((await get('/api/v1/projects/{project}/networks/{name}/utilization', { name: 'nope' })).status).toBe(404);
    expect((await get('/api/v1/projects/{project}/networks/{name}/utilization', { name: 'vpc' }, '?step=fast')).body).toMatchObject({
      error: { code: 'ValidationFailed', field: 'step' },
    });
    const other = await makeProject(db);
    await createNetwork(db, other.project.id, { name: 'vpc', cidrs: [{ cidr: '203.0.113.0/24' }] }, actor);
    expect((await get('/api/v1/projects/{project}/networks/{name}/utilization', { name: 'vpc' }, '', other.project.slug)).status).toBe(404);
    expect(TIERS).toHaveLength(3);
  });

  test('fleet history sums every network per family at each step, each network at its peak of the step', async () => {
    const { db, project, networkId } = await setup();
    const base = Date.parse('2041-02-03T04:00:00Z');
    await recordSample(db, new Date(base));
    await createClaim(db, project.id, { name: 'f1', network: 'vpc', prefixLength: 26, family: 4, reclaimPolicy: 'Delete' } as never, actor);
    await recordSample(db, new Date(base + 60_000));
    await deleteClaim(db, project.id, 'f1', actor);
    await recordSample(db, new Date(base + 120_000));
    const direct = async (at: number) =>
      (
        (await db.execute(sql`
          select sum(cs.used)::text as used from capacity_samples cs join capacity_series s on s.id = cs.series_id
           where s.kind = 'network' and s.family = 4 and cs.step = 60 and cs.at = ${new Date(at).toISOString()}::timestamptz`)) as unknown as { used: string }[]
      )[0].used;
    const now = new Date(base + 180_000);
    const minutes = await fleetHistory(db, resolveRange({ from: '2041-02-03T04:00:00Z', to: '2041-02-03T04:02:00Z', step: '1m' }, now));
    const v4 = minutes.find((f) => f.family === 'IPv4')!;
    expect(v4.points.map((p) => p.used)).toEqual([await direct(base), await direct(base + 60_000), await direct(base + 120_000)]);
    // One 5-minute step: every network at its peak of the step (this one's is the minute with the claim).
    const [bin] = (await fleetHistory(db, resolveRange({ from: '2041-02-03T04:00:00Z', to: '2041-02-03T04:02:00Z', step: '5m' }, now))).find(
      (f) => f.family === 'IPv4',
    )!.points;
    const [peaks] = (await db.execute(sql`
      select sum(m)::text as used from (select max(cs.used) as m from capacity_samples cs join capacity_series s on s.id = cs.series_id
       where s.kind = 'network' and s.family = 4 and cs.step = 60 and cs.at >= ${new Date(base).toISOString()}::timestamptz
         and cs.at < ${new Date(base + 300_000).toISOString()}::timestamptz group by cs.series_id) x`)) as unknown as { used: string }[];
    expect(bin.used).toBe(peaks.used);
    const mine = (await db.execute(sql`
      select max(cs.used)::text as used from capacity_samples cs join capacity_series s on s.id = cs.series_id
       where s.key = ${`network:${networkId}:4`} and cs.step = 60 and cs.at >= ${new Date(base).toISOString()}::timestamptz`)) as unknown as { used: string }[];
    expect(mine[0].used).toBe('64');
    expect(minutes.map((f) => f.family)).toContain('IPv6');
  });
});
