import { sql } from 'drizzle-orm';
import { isDomainError } from '@/server/errors';
import { describe, expect, inject, onTestFinished, test } from 'vitest';
import { createDb } from '@/db/client';
import { systemActor } from '@/server/audit/events';
import { testDb, uniq } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { createClaim, deleteClaim, getClaim, listClaims, releaseRetainedAllocation } from './claims';
import { createChildPool, createNetwork, deleteNetwork, getNetwork } from './networks';

const actor = systemActor('test');

async function setup(cidrs: { cidr: string; [k: string]: unknown }[] = [{ cidr: '192.0.2.0/24' }]) {
  const { db } = testDb();
  const { project } = await makeProject(db);
  const network = await createNetwork(db, project.id, { name: 'vpc', cidrs: cidrs as never }, actor);
  return { db, projectId: project.id, network };
}

/** Invariants checked straight from the tables: no overlap, counters equal sums, free + used = capacity. */
async function checkBooks(projectId: string) {
  const { db } = testDb();
  const overlaps = (await db.execute(sql`
    select count(*)::int as n from ip_allocations a join ip_allocations b
      on a.pool_id = b.pool_id and a.id < b.id and a.cidr && b.cidr where a.project_id = ${projectId}`)) as unknown as { n: number }[];
  expect(overlaps[0].n).toBe(0);
  const drift = (await db.execute(sql`
    select p.name, p.allocated::text as allocated, coalesce(sum(a.size) filter (where a.kind <> 'Reservation'), 0)::text as summed,
           p.capacity::text as capacity,
           (select coalesce(sum(power(2::numeric, (case when p.family = 4 then 32 else 128 end) - f.prefix_length)), 0) from ip_free_blocks f where f.pool_id = p.id)::numeric(40,0)::text as free
    from ip_pools p left join ip_allocations a on a.pool_id = p.id
    where p.project_id = ${projectId} group by p.id`)) as unknown as { name: string; allocated: string; summed: string; capacity: string; free: string }[];
  for (const row of drift) {
    expect(BigInt(row.allocated), `pool ${row.name} allocated`).toBe(BigInt(row.summed));
    expect(BigInt(row.free) + BigInt(row.allocated), `pool ${row.name} free+allocated`).toBe(BigInt(row.capacity));
  }
}

describe('networks', () => {
  test('roots of one project never overlap (409 naming the network); other projects may reuse ranges', async () => {
    const { db, projectId } = await setup([{ cidr: '198.51.100.0/24' }, { cidr: '2001:db8::/48' }]);
    await expect(createNetwork(db, projectId, { name: 'other', cidrs: [{ cidr: '198.51.100.128/25' }] }, actor)).rejects.toMatchObject({
      code: 'Overlap',
      field: 'cidrs.0.cidr',
      message: expect.stringContaining('network "vpc"'),
    });
    await expect(createNetwork(db, projectId, { name: 'other', cidrs: [{ cidr: '2001:db8::/32' }] }, actor)).rejects.toMatchObject({ code: 'Overlap' });
    const { project: other } = await makeProject(db);
    await createNetwork(db, other.id, { name: 'vpc', cidrs: [{ cidr: '198.51.100.0/24' }] }, actor);
  });

  test('bad CIDRs and rules are field-level errors and store nothing', async () => {
    const { db, projectId } = await setup();
    await expect(createNetwork(db, projectId, { name: 'bad', cidrs: [{ cidr: '203.0.113.1/24' }] }, actor)).rejects.toMatchObject({
      code: 'InvalidCidr',
      field: 'cidrs.0.cidr',
      message: expect.stringContaining('203.0.113.0/24'),
    });
    await expect(createNetwork(db, projectId, { name: 'bad', cidrs: [{ cidr: '203.0.113.0/33' }] }, actor)).rejects.toMatchObject({ code: 'InvalidCidr' });
    await expect(createNetwork(db, projectId, { name: 'bad', cidrs: [{ cidr: 'banana' }] }, actor)).rejects.toMatchObject({ code: 'InvalidCidr' });
    await expect(createNetwork(db, projectId, { name: 'bad', cidrs: [{ cidr: '203.0.113.0/24', minPrefixLength: 16 }] }, actor)).rejects.toMatchObject({
      code: 'ValidationFailed',
      field: 'cidrs.0.minPrefixLength',
    });
    await expect(createNetwork(db, projectId, { name: 'vpc', cidrs: [{ cidr: '203.0.113.0/24' }] }, actor)).rejects.toMatchObject({
      code: 'Conflict',
      field: 'name',
    });
    const [{ n }] = (await db.execute(sql`select count(*)::int as n from networks where project_id = ${projectId}`)) as unknown as { n: number }[];
    expect(n).toBe(1);
  });

  test('a network with claims cannot be deleted; an empty one can', async () => {
    const { db, projectId } = await setup();
    await createClaim(db, projectId, { name: 'c1', network: 'vpc', prefixLength: 28, reclaimPolicy: 'Delete' }, actor);
    await expect(deleteNetwork(db, projectId, 'vpc', actor)).rejects.toMatchObject({ code: 'Conflict', message: expect.stringContaining('1 claim') });
    await deleteClaim(db, projectId, 'c1', actor);
    await deleteNetwork(db, projectId, 'vpc', actor);
    await expect(getNetwork(db, projectId, 'vpc')).rejects.toMatchObject({ code: 'NotFound' });
  });
});

describe('claims', () => {
  test('bind synchronously with counters maintained, idempotent by name, ClaimExists on a different spec', async () => {
    const { db, projectId } = await setup([{ cidr: '192.0.2.0/24', defaultPrefixLength: 28 }]);
    const first = await createClaim(db, projectId, { name: 'web', network: 'vpc', reclaimPolicy: 'Delete' }, actor);
    expect(first).toMatchObject({ created: true, claim: { phase: 'Bound', allocatedCidr: '192.0.2.0/28', prefixLength: 28 } });
    const again = await createClaim(db, projectId, { name: 'web', network: 'vpc', reclaimPolicy: 'Delete' }, actor);
    expect(again).toMatchObject({ created: false, claim: { id: first.claim.id, allocatedCidr: '192.0.2.0/28' } });
    await expect(createClaim(db, projectId, { name: 'web', network: 'vpc', prefixLength: 27, reclaimPolicy: 'Delete' }, actor)).rejects.toMatchObject({
      code: 'ClaimExists',
    });
    const net = await getNetwork(db, projectId, 'vpc');
    expect(net.pools[0]).toMatchObject({ capacity: '256', allocated: '16', available: '240', utilization: 0.0625 });
    await checkBooks(projectId);
  });

  test('pinned addresses, overlap, prefix rules, family mismatch, unknown network', async () => {
    const { db, projectId } = await setup([{ cidr: '192.0.2.0/24', minPrefixLength: 26, maxPrefixLength: 32 }]);
    const pinned = await createClaim(db, projectId, { name: 'gw', network: 'vpc', address: '192.0.2.1', reclaimPolicy: 'Delete' }, actor);
    expect(pinned.claim.allocatedCidr).toBe('192.0.2.1/32');
    await expect(createClaim(db, projectId, { name: 'gw2', network: 'vpc', address: '192.0.2.0/30', reclaimPolicy: 'Delete' }, actor)).rejects.toMatchObject({
      code: 'Overlap',
      message: expect.stringContaining('claim "gw"'),
    });
    await expect(createClaim(db, projectId, { name: 'big', network: 'vpc', prefixLength: 24, reclaimPolicy: 'Delete' }, actor)).rejects.toMatchObject({
      code: 'PrefixLengthRejected',
      field: 'prefixLength',
    });
    // Beyond the family's bits the length is invalid whatever the rules say: the code the schema gives /129.
    await expect(createClaim(db, projectId, { name: 'big', network: 'vpc', prefixLength: 33, reclaimPolicy: 'Delete' }, actor)).rejects.toMatchObject({
      code: 'ValidationFailed',
      field: 'prefixLength',
    });
    await expect(createChildPool(db, projectId, { network: 'vpc', parent: 'vpc-v4', name: 'tiny', prefixLength: 33 }, actor)).rejects.toMatchObject({
      code: 'ValidationFailed',
      field: 'prefixLength',
    });
    await expect(createClaim(db, projectId, { name: 'v6', network: 'vpc', family: 6, reclaimPolicy: 'Delete' }, actor)).rejects.toMatchObject({
      code: 'NoOfferingPool',
      field: 'family',
    });
    await expect(createClaim(db, projectId, { name: 'x', network: 'nope', reclaimPolicy: 'Delete' }, actor)).rejects.toMatchObject({
      code: 'NotFound',
      field: 'network',
    });
    await expect(createClaim(db, projectId, { name: 'x', network: 'vpc', address: '192.0.2.5/24', reclaimPolicy: 'Delete' }, actor)).rejects.toMatchObject({
      code: 'InvalidCidr',
      field: 'address',
    });
    await expect(createClaim(db, projectId, { name: 'x', network: 'vpc', address: '203.0.113.5', reclaimPolicy: 'Delete' }, actor)).rejects.toMatchObject({
      code: 'NoOfferingPool',
      field: 'address',
    });
    await checkBooks(projectId);
  });

  test('exhaustion is 507-coded and stores nothing; release returns the block', async () => {
    const { db, projectId } = await setup([{ cidr: '192.0.2.0/28', maxPrefixLength: 32 }]);
    for (let i = 0; i < 4; i++) await createClaim(db, projectId, { name: `c${i}`, network: 'vpc', prefixLength: 30, reclaimPolicy: 'Delete' }, actor);
    await expect(createClaim(db, projectId, { name: 'c4', network: 'vpc', prefixLength: 30, reclaimPolicy: 'Delete' }, actor)).rejects.toMatchObject({
      code: 'Exhausted',
    });
    expect((await getNetwork(db, projectId, 'vpc')).pools[0].phase).toBe('Exhausted');
    await deleteClaim(db, projectId, 'c2', actor);
    const reused = await createClaim(db, projectId, { name: 'c4', network: 'vpc', prefixLength: 30, reclaimPolicy: 'Delete' }, actor);
    expect(reused.claim.allocatedCidr).toBe('192.0.2.8/30');
    await checkBooks(projectId);
  });

  test('Retain keeps the allocation counted and the name blocked until released', async () => {
    const { db, projectId } = await setup();
    const c = await createClaim(db, projectId, { name: 'keep', network: 'vpc', prefixLength: 26, reclaimPolicy: 'Retain', retentionSeconds: 3600 }, actor);
    const result = await deleteClaim(db, projectId, 'keep', actor);
    expect(result.released).toBe(false);
    expect((await getNetwork(db, projectId, 'vpc')).pools[0].allocated).toBe('64');
    await expect(createClaim(db, projectId, { name: 'keep', network: 'vpc', prefixLength: 26, reclaimPolicy: 'Retain' }, actor)).rejects.toMatchObject({
      code: 'AllocationRetained',
      message: expect.stringContaining(c.claim.allocationId),
    });
    const [job] = (await db.execute(sql`select run_at from graphile_worker.jobs where key = ${`ipallocation:${c.claim.allocationId}`}`)) as unknown as {
      run_at: Date;
    }[];
    expect(new Date(job.run_at).getTime()).toBeGreaterThan(Date.now() + 3500_000);
    expect(await releaseRetainedAllocation(db, c.claim.allocationId, actor, { onlyIfExpired: true })).toBe(false);
    expect(await releaseRetainedAllocation(db, c.claim.allocationId, actor)).toBe(true);
    expect(await releaseRetainedAllocation(db, c.claim.allocationId, actor)).toBe(false);
    expect((await getNetwork(db, projectId, 'vpc')).pools[0].allocated).toBe('0');
    await createClaim(db, projectId, { name: 'keep', network: 'vpc', prefixLength: 26, reclaimPolicy: 'Retain' }, actor);
    await checkBooks(projectId);
  });

  test('dry run shows the block and stores nothing', async () => {
    const { db, projectId } = await setup();
    const preview = await createClaim(db, projectId, { name: 'p', network: 'vpc', prefixLength: 25, reclaimPolicy: 'Delete' }, actor, { dryRun: true });
    expect(preview.claim.allocatedCidr).toBe('192.0.2.0/25');
    await expect(getClaim(db, projectId, 'p')).rejects.toMatchObject({ code: 'NotFound' });
    expect((await getNetwork(db, projectId, 'vpc')).pools[0].allocated).toBe('0');
  });

  test('IPv6 counters are exact beyond 64 bits', async () => {
    const { db, projectId } = await setup([{ cidr: '2001:db8::/32' }]);
    const c = await createClaim(db, projectId, { name: 'v6', network: 'vpc', family: 6, prefixLength: 48, reclaimPolicy: 'Delete' }, actor);
    expect(c.claim.allocatedCidr).toBe('2001:db8::/48');
    const pool = (await getNetwork(db, projectId, 'vpc')).pools[0];
    expect(pool.capacity).toBe((1n << 96n).toString());
    expect(pool.allocated).toBe((1n << 80n).toString());
    await checkBooks(projectId);
  });

  test('child pools are carves of their parent; reservations and BestFit', async () => {
    const { db, projectId } = await setup([{ cidr: '198.51.100.0/24', maxPrefixLength: 32 }]);
    await createChildPool(
      db,
      projectId,
      { network: 'vpc', parent: 'vpc-v4', name: 'apps', prefixLength: 26, reserveLeading: 4, reserveTrailing: 1, strategy: 'BestFit', defaultPrefixLength: 30 },
      actor,
    );
    const net = await getNetwork(db, projectId, 'vpc');
    const apps = net.pools.find((p) => p.name === 'apps')!;
    expect(apps).toMatchObject({ cidr: '198.51.100.0/26', capacity: '64', reserved: '5', available: '59', kind: 'Child' });
    expect(net.pools.find((p) => p.name === 'vpc-v4')!.allocated).toBe('64');
    const c = await createClaim(db, projectId, { name: 'a1', network: 'vpc', pool: 'apps', prefixLength: 32, reclaimPolicy: 'Delete' }, actor);
    // BestFit takes the smallest free block: the one address left between reservations and the rest.
    expect(c.claim.allocatedCidr).toBe('198.51.100.62/32');
    const d = await createClaim(db, projectId, { name: 'a2', network: 'vpc', pool: 'apps', prefixLength: 30, reclaimPolicy: 'Delete' }, actor);
    expect(d.claim.pool).toBe('apps');
    await checkBooks(projectId);
  });

  test('a claim naming no pool comes from a root pool, or a child pool marked default; never a child carved for a purpose', async () => {
    const { db, projectId } = await setup([{ cidr: '198.51.100.0/24', maxPrefixLength: 32 }]);
    await createChildPool(db, projectId, { network: 'vpc', parent: 'vpc-v4', name: 'web-tier', prefixLength: 26 }, actor);
    const claim = (name: string, extra: { pool?: string; address?: string } = {}) =>
      createClaim(db, projectId, { name, network: 'vpc', prefixLength: 28, reclaimPolicy: 'Delete', ...extra }, actor);
    // Unnamed: the root pool, and the preview (dry run) says so and why.
    const preview = await createClaim(db, projectId, { name: 'p', network: 'vpc', prefixLength: 28, reclaimPolicy: 'Delete' }, actor, { dryRun: true });
    expect(preview.claim.pool).toBe('vpc-v4');
    expect(preview.poolReason).toContain('root pool');
    for (let i = 0; i < 4; i++) expect((await claim(`any-${i}`)).claim.pool).toBe('vpc-v4');
    // Named, or pinned inside it: the child pool.
    expect((await claim('named', { pool: 'web-tier' })).poolReason).toBe('the claim names pool web-tier');
    const pinned = await claim('pinned', { address: '198.51.100.48/28' });
    expect(pinned.claim.pool).toBe('web-tier');
    // Marked as the network's default: claims naming no pool try it first.
    await createChildPool(db, projectId, { network: 'vpc', parent: 'vpc-v4', name: 'general', prefixLength: 26, default: true }, actor);
    const general = (await getNetwork(db, projectId, 'vpc')).pools.find((p) => p.name === 'general')!;
    expect(general.isDefault).toBe(true);
    const d = await claim('defaulted');
    expect(d.claim.pool).toBe('general');
    expect(d.poolReason).toBe('child pool general is marked as the default of network vpc');
    // When the default is full, the roots follow (never the purpose-carved web-tier).
    for (let i = 0; i < 3; i++) expect((await claim(`fill-${i}`)).claim.pool).toBe('general');
    expect((await claim('after-default')).claim.pool).toBe('vpc-v4');
    const inWebTier = await listClaims(db, projectId, { pool: 'web-tier', sort: 'name', order: 'asc', limit: 50, offset: 0 });
    expect(inWebTier.items.map((c) => c.name)).toEqual(['named', 'pinned']);
    await checkBooks(projectId);
  });

  test('list filters, sorts, paginates and finds by address', async () => {
    const { db, projectId } = await setup([{ cidr: '192.0.2.0/24', maxPrefixLength: 32 }]);
    for (let i = 0; i < 12; i++)
      await createClaim(db, projectId, { name: `n${String(i).padStart(2, '0')}`, network: 'vpc', prefixLength: 29, reclaimPolicy: 'Delete' }, actor);
    const page1 = await listClaims(db, projectId, { sort: 'name', order: 'asc', limit: 5, offset: 0 });
    expect(page1.items.map((c) => c.name)).toEqual(['n00', 'n01', 'n02', 'n03', 'n04']);
    expect(page1).toMatchObject({ total: 12, nextOffset: 5 });
    const last = await listClaims(db, projectId, { sort: 'name', order: 'asc', limit: 5, offset: 10 });
    expect(last.nextOffset).toBeNull();
    const byIp = await listClaims(db, projectId, { search: '192.0.2.17', sort: 'createdAt', order: 'desc', limit: 50, offset: 0 });
    expect(byIp.items.map((c) => c.allocatedCidr)).toEqual(['192.0.2.16/29']);
  });
});

describe('concurrency', () => {
  test('creates and deletes racing on the same names in a dual-stack network, from two processes, never deadlock', async () => {
    const { db, projectId } = await setup([{ cidr: '198.51.100.0/24', maxPrefixLength: 32 }, { cidr: '2001:db8:77::/48' }]);
    // A second pool stands for a second web process: its own batches, in flight beside the first's.
    const other = createDb(inject('databaseUrl'), { max: 10, applicationName: 'meridian-test-2' });
    onTestFinished(() => other.close());
    const spec = (i: number, round: number) =>
      (i + round) % 2 === 0 ? { network: 'vpc', family: 4 as const, prefixLength: 30 } : { network: 'vpc', family: 6 as const, prefixLength: 64 };
    for (let i = 0; i < 24; i++) await createClaim(db, projectId, { name: `r${i}`, ...spec(i, 0), reclaimPolicy: 'Delete' } as never, actor);
    const unexpected: unknown[] = [];
    const expectedOnly = (p: Promise<unknown>) =>
      p.catch((e) => {
        // Losing a race is a coded answer (NotFound, ClaimExists); anything else (a deadlock, a 500) is a bug.
        if (!isDomainError(e)) unexpected.push(e);
      });
    for (let round = 1; round <= 4; round++) {
      await Promise.all(
        Array.from({ length: 24 }, (_, i) => [
          expectedOnly(deleteClaim(db, projectId, `r${i}`, actor)),
          expectedOnly(createClaim(i % 2 ? other.db : db, projectId, { name: `r${i}`, ...spec(i, round), reclaimPolicy: 'Delete' } as never, actor)),
          expectedOnly(createClaim(i % 2 ? db : other.db, projectId, { name: `s${round}-${i}`, ...spec(i, round), reclaimPolicy: 'Delete' } as never, actor)),
        ]).flat(),
      );
      await Promise.all(Array.from({ length: 24 }, (_, i) => expectedOnly(deleteClaim(db, projectId, `s${round}-${i}`, actor))));
    }
    expect(unexpected).toEqual([]);
    await checkBooks(projectId);
  });

  test('64 concurrent claims into room for 40: exactly 40 Bound, 24 Exhausted, no overlap', async () => {
    // A /26 with 24 addresses reserved leaves 40 single addresses.
    const { db, projectId } = await setup([{ cidr: '203.0.113.0/26', maxPrefixLength: 32, defaultPrefixLength: 32, reserveLeading: 16, reserveTrailing: 8 }]);
    const results = await Promise.allSettled(
      Array.from({ length: 64 }, (_, i) => createClaim(db, projectId, { name: `c${i}`, network: 'vpc', reclaimPolicy: 'Delete' }, actor)),
    );
    const bound = results.filter((r) => r.status === 'fulfilled');
    const exhausted = results.filter((r) => r.status === 'rejected' && (r.reason as { code?: string }).code === 'Exhausted');
    expect(bound.length).toBe(40);
    expect(exhausted.length).toBe(24);
    const cidrs = new Set(bound.map((r) => (r as PromiseFulfilledResult<{ claim: { allocatedCidr: string } }>).value.claim.allocatedCidr));
    expect(cidrs.size).toBe(40);
    await checkBooks(projectId);
  });

  test('concurrent creates of one name bind once and all see the same address', async () => {
    const { db, projectId } = await setup();
    const name = uniq('same');
    const results = await Promise.all(
      Array.from({ length: 16 }, () => createClaim(db, projectId, { name, network: 'vpc', prefixLength: 28, reclaimPolicy: 'Delete' }, actor)),
    );
    expect(new Set(results.map((r) => r.claim.allocatedCidr)).size).toBe(1);
    expect(results.filter((r) => r.created).length).toBe(1);
    await checkBooks(projectId);
  });

  test('concurrent creates and deletes keep the books exact', async () => {
    const { db, projectId } = await setup([{ cidr: '198.51.100.0/24', maxPrefixLength: 32 }]);
    for (let i = 0; i < 20; i++) await createClaim(db, projectId, { name: `old${i}`, network: 'vpc', prefixLength: 30, reclaimPolicy: 'Delete' }, actor);
    await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => deleteClaim(db, projectId, `old${i}`, actor)),
      ...Array.from({ length: 30 }, (_, i) =>
        createClaim(db, projectId, { name: `new${i}`, network: 'vpc', prefixLength: 32 - (i % 3), reclaimPolicy: 'Delete' }, actor),
      ),
    ]);
    await checkBooks(projectId);
    // Everything released merges back: deleting all leaves one free block again.
    const all = await listClaims(db, projectId, { sort: 'name', order: 'asc', limit: 500, offset: 0 });
    await Promise.all(all.items.map((c) => deleteClaim(db, projectId, c.name, actor)));
    const [{ n }] = (await db.execute(
      sql`select count(*)::int as n from ip_free_blocks f join ip_pools p on p.id = f.pool_id where p.project_id = ${projectId}`,
    )) as unknown as { n: number }[];
    expect(n).toBe(1);
    await checkBooks(projectId);
  });
});
