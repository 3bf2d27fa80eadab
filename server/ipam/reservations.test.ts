import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { listAllPools } from '@/server/ipam/admin';
import { createApiToken } from '@/server/tenancy/tokens';
import { createCaller } from '@/server/trpc/root';
import { testDb } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { createClaim } from './claims';
import { createChildPool, createNetwork, getNetwork } from './networks';
import { routeHandlers } from '@/test/rest';

const networkItem = routeHandlers('/api/v1/projects/{project}/networks/{name}');
const networksRoute = routeHandlers('/api/v1/projects/{project}/networks');

const actor = systemActor('test');
const TWO_64 = 1n << 64n;
const TWO_80 = 1n << 80n;

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

/** capacity = allocated + reserved + available, exactly, for a pool or a family total. */
function expectFiguresAddUp(f: { capacity: string; reserved: string; allocated: string; available: string }) {
  expect(BigInt(f.allocated) + BigInt(f.reserved) + BigInt(f.available), JSON.stringify(f)).toBe(BigInt(f.capacity));
}

async function poolCounts(projectId: string) {
  const { db } = testDb();
  return (await db.execute(sql`select count(*)::int as pools, (select count(*)::int from networks where project_id = ${projectId}) as networks
    from ip_pools where project_id = ${projectId}`)) as unknown as { pools: number; networks: number }[];
}

describe('reservations at IPv6 scale', () => {
  test('a /64 leading reservation in an IPv6 pool: exact, stored as Reservation blocks, and the figures add up', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const net = await createNetwork(
      db,
      project.id,
      { name: 'vpc', cidrs: [{ cidr: '2001:db8:1::/48', reserveLeading: TWO_64.toString(), reserveTrailing: '3' }] },
      actor,
    );
    const reserved = TWO_64 + 3n;
    expect(net.pools[0]).toMatchObject({
      capacity: TWO_80.toString(),
      reserved: reserved.toString(),
      allocated: '0',
      available: (TWO_80 - reserved).toString(),
      reserveLeading: TWO_64.toString(),
      reserveTrailing: '3',
    });
    expectFiguresAddUp(net.pools[0]);

    // The first /64 is reserved: FirstFit takes the next one.
    const c = await createClaim(db, project.id, { name: 'a', network: 'vpc', family: 6, prefixLength: 64, reclaimPolicy: 'Delete' }, actor);
    expect(c.claim.allocatedCidr).toBe('2001:db8:1:1::/64');
    const after = await getNetwork(db, project.id, 'vpc');
    expect(after.pools[0]).toMatchObject({ allocated: TWO_64.toString(), available: (TWO_80 - reserved - TWO_64).toString() });
    expectFiguresAddUp(after.pools[0]);
    // utilization is the share of the allocatable space in use: 2^64 of 2^80 − 2^64 − 3.
    expect(after.pools[0].utilization).toBe(Number((TWO_64 * 1_000_000n) / (TWO_80 - reserved)) / 1_000_000);
    expect(after.utilization.IPv6).toMatchObject({ capacity: TWO_80.toString(), reserved: reserved.toString(), allocated: TWO_64.toString() });
    expectFiguresAddUp(after.utilization.IPv6!);

    const blocks = (await db.execute(
      sql`select cidr::text as cidr from ip_allocations where project_id = ${project.id} and kind = 'Reservation' order by cidr`,
    )) as unknown as { cidr: string }[];
    expect(blocks.map((b) => b.cidr)).toEqual(['2001:db8:1::/64', '2001:db8:1:ffff:ffff:ffff:ffff:fffd/128', '2001:db8:1:ffff:ffff:ffff:ffff:fffe/127']);

    // The operator's list shows the same figures.
    const listed = (await listAllPools(db, { search: project.slug, limit: 10, offset: 0 })).items;
    expect(listed).toEqual([expect.objectContaining({ capacity: TWO_80.toString(), reserved: reserved.toString(), allocated: TWO_64.toString() })]);
  });

  test('a reservation that is not one CIDR (2^64 + 1) in a child pool is exact too', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '2001:db8:2::/48' }] }, actor);
    await createChildPool(
      db,
      project.id,
      { network: 'vpc', parent: 'vpc-v6', name: 'apps', prefixLength: 56, reserveLeading: (TWO_64 + 1n).toString(), reserveTrailing: 2 ** 53 - 1 },
      actor,
    );
    const apps = (await getNetwork(db, project.id, 'vpc')).pools.find((p) => p.name === 'apps')!;
    expect(apps).toMatchObject({ capacity: (1n << 72n).toString(), reserved: (TWO_64 + 1n + BigInt(2 ** 53 - 1)).toString(), allocated: '0' });
    expectFiguresAddUp(apps);
    const c = await createClaim(db, project.id, { name: 'one', network: 'vpc', pool: 'apps', family: 6, prefixLength: 128, reclaimPolicy: 'Delete' }, actor);
    expect(c.claim.allocatedCidr).toBe('2001:db8:2:1::1/128');
  });

  test('larger than the pool, or leading and trailing overlapping: a 400 naming the field, nothing stored', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const cases: [Record<string, unknown>, string][] = [
      [{ reserveLeading: (TWO_80 + 1n).toString() }, 'cidrs.0.reserveLeading'],
      [{ reserveTrailing: (TWO_80 + 1n).toString() }, 'cidrs.0.reserveTrailing'],
      [{ reserveLeading: (1n << 79n).toString(), reserveTrailing: ((1n << 79n) + 1n).toString() }, 'cidrs.0.reserveTrailing'],
    ];
    for (const [rules, field] of cases) {
      await expect(
        createNetwork(db, project.id, { name: 'big', cidrs: [{ cidr: '2001:db8:3::/48', ...rules }] }, actor),
        JSON.stringify(rules),
      ).rejects.toMatchObject({
        code: 'ValidationFailed',
        field,
      });
    }
    await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '2001:db8:4::/48' }] }, actor);
    await expect(
      createChildPool(db, project.id, { network: 'vpc', parent: 'vpc-v6', name: 'c', prefixLength: 64, reserveLeading: (TWO_64 + 1n).toString() }, actor),
    ).rejects.toMatchObject({
      code: 'ValidationFailed',
      field: 'reserveLeading',
      message: expect.stringContaining('18446744073709551617'),
    });
    // The whole pool reserved fits: nothing is left to allocate.
    await createChildPool(
      db,
      project.id,
      { network: 'vpc', parent: 'vpc-v6', name: 'all', prefixLength: 64, reserveLeading: (TWO_64 - 5n).toString(), reserveTrailing: '5' },
      actor,
    );
    const net = await getNetwork(db, project.id, 'vpc');
    expect(net.pools.find((p) => p.name === 'all')).toMatchObject({ reserved: TWO_64.toString(), available: '0', phase: 'Exhausted' });
    // The refused child's carve was rolled back: the root holds only the one that fit.
    expect(net.pools.find((p) => p.name === 'vpc-v6')!.allocated).toBe(TWO_64.toString());
    expect(await poolCounts(project.id)).toEqual([{ pools: 2, networks: 1 }]);
  });

  test('REST: the reservation as a decimal string, the figures in status, and bad counts refused naming the field', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const token = await createApiToken(db, { projectId: project.id, name: 'rest' }, actor);
    const call = async (handler: Handler, method: string, params: Record<string, string>, body?: unknown) => {
      const res = await handler(
        new Request('http://localhost/api/v1/x', {
          method,
          headers: { authorization: `Bearer ${token.secret}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
        }),
        { params: Promise.resolve({ project: project.slug, ...params }) },
      );
      return { status: res.status, body: await res.json() };
    };
    const network = (name: string, rules: Record<string, unknown>) => ({ metadata: { name }, spec: { cidrs: [{ cidr: '2001:db8:5::/48', ...rules }] } });
    const created = await call(networksRoute.POST as Handler, 'POST', {}, network('vpc', { reserveLeading: TWO_64.toString() }));
    expect(created.status).toBe(201);
    expect(created.body.status.pools[0]).toMatchObject({
      capacity: TWO_80.toString(),
      reserved: TWO_64.toString(),
      allocated: '0',
      available: (TWO_80 - TWO_64).toString(),
      rules: { reserveLeading: TWO_64.toString(), reserveTrailing: '0' },
    });
    expect(created.body.status.utilization.IPv6).toMatchObject({
      capacity: TWO_80.toString(),
      reserved: TWO_64.toString(),
      available: (TWO_80 - TWO_64).toString(),
    });
    const read = await call(networkItem.GET as Handler, 'GET', { name: 'vpc' });
    expectFiguresAddUp(read.body.status.pools[0]);

    const bad: [string, string][] = [
      [JSON.stringify(network('x', { reserveLeading: (TWO_80 + 1n).toString() })), 'cidrs.0.reserveLeading'],
      [JSON.stringify(network('x', { reserveLeading: '1', reserveTrailing: TWO_80.toString() })), 'cidrs.0.reserveTrailing'],
      [JSON.stringify(network('x', { reserveLeading: -1 })), 'spec.cidrs.0.reserveLeading'],
      [JSON.stringify(network('x', { reserveLeading: '-1' })), 'spec.cidrs.0.reserveLeading'],
      [JSON.stringify(network('x', { reserveLeading: '1e3' })), 'spec.cidrs.0.reserveLeading'],
      [JSON.stringify(network('x', { reserveTrailing: 1.5 })), 'spec.cidrs.0.reserveTrailing'],
      [JSON.stringify(network('x', { reserveLeading: '9'.repeat(41) })), 'spec.cidrs.0.reserveLeading'],
      // A JSON number beyond 2^53 cannot be exact: it must come as a string.
      ['{"metadata":{"name":"x"},"spec":{"cidrs":[{"cidr":"2001:db8:6::/48","reserveLeading":18446744073709551616}]}}', 'spec.cidrs.0.reserveLeading'],
    ];
    for (const [body, field] of bad) {
      const res = await call(networksRoute.POST as Handler, 'POST', {}, body);
      expect(res.status, body).toBe(400);
      expect(res.body.error, body).toMatchObject({ code: 'ValidationFailed', field });
    }
    expect(await poolCounts(project.id)).toEqual([{ pools: 1, networks: 1 }]);
  });

  test('tRPC: networks.create takes the reservation as a string and networks.get shows the reserved figure', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const editor = await makeUser(db, { projectId: project.id, role: 'editor' });
    const caller = createCaller({ db, session: { user: editor } });
    await caller.ipam.networks.create({ project: project.slug, name: 'vpc', cidrs: [{ cidr: '2001:db8:7::/48', reserveTrailing: TWO_64.toString() }] });
    const net = await caller.ipam.networks.get({ project: project.slug, name: 'vpc' });
    expect(net.pools[0]).toMatchObject({ capacity: TWO_80.toString(), reserved: TWO_64.toString(), reserveTrailing: TWO_64.toString() });
    expect(net.utilization.IPv6).toMatchObject({ reserved: TWO_64.toString() });
    await expect(
      caller.ipam.networks.create({ project: project.slug, name: 'big', cidrs: [{ cidr: '2001:db8:8::/48', reserveLeading: (TWO_80 + 1n).toString() }] }),
    ).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
  });
});
