import { describe, expect, test } from 'vitest';
import type { Db } from '@/db/client';
import { systemActor } from '@/server/audit/events';
import { createCluster, findCluster } from '@/server/cni/clusters';
import { addLease } from '@/server/cni/leases';
import { createClaim, deleteClaim } from '@/server/ipam/claims';
import { createChildPool, createNetwork } from '@/server/ipam/networks';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { routeHandlers } from '@/test/rest';
import { createApiToken } from '@/server/tenancy/tokens';
import { decodeAuditCursor, encodeAuditCursor, networkAuditCsv, networkAuditPage, type AuditEntry, type AuditPool } from './address-audit';

const actor = systemActor('test');

async function setup() {
  const { db } = testDb();
  const { project } = await makeProject(db);
  await createNetwork(
    db,
    project.id,
    { name: 'vpc', cidrs: [{ cidr: '198.51.100.0/23', reserveLeading: 4, reserveTrailing: 1 } as never, { cidr: '2001:db8::/64' }] },
    actor,
  );
  await createCluster(db, project.id, { name: 'c1', network: 'vpc' }, actor);
  const cluster = await findCluster(db, project.id, 'c1');
  return { db, project, cluster };
}

async function csvText(db: Db, projectId: string, network: string) {
  let text = '';
  for await (const chunk of networkAuditCsv(db, projectId, network)) text += chunk;
  return text;
}

/** The invariant of one snapshot, checked on the totals and on the rows the report lists. */
function expectBalanced(pools: AuditPool[], items?: AuditEntry[]) {
  for (const p of pools) {
    if (items) {
      const sum = (kinds: string[]) => items.filter((i) => i.pool === p.name && kinds.includes(i.kind)).reduce((n, i) => n + BigInt(i.addresses), 0n);
      expect(sum(['Claim', 'Retained', 'PoolCarve', 'PodAddress']).toString(), p.name).toBe(p.counters.allocated);
      expect(sum(['Reservation']).toString(), p.name).toBe(p.counters.reserved);
      expect(sum(['Claim', 'Retained', 'PoolCarve', 'PodAddress', 'Reservation', 'Free']).toString(), p.name).toBe(p.size);
    }
    expect(p.totals.allocated, p.name).toBe(p.counters.allocated);
    expect(p.totals.reserved, p.name).toBe(p.counters.reserved);
    expect(BigInt(p.totals.allocated) + BigInt(p.totals.reserved) + BigInt(p.totals.free), p.name).toBe(BigInt(p.size));
    expect(p.consistent, p.name).toBe(true);
  }
}

describe('address audit', () => {
  test('lists every allocation with its owner, the reservations and the free blocks, balanced against the counters', async () => {
    const { db, project, cluster } = await setup();
    await createClaim(db, project.id, { name: 'web', network: 'vpc', family: 4, prefixLength: 28, reclaimPolicy: 'Delete' }, actor);
    await createClaim(
      db,
      project.id,
      { name: 'm1-eth0', network: 'vpc', family: 4, prefixLength: 32, reclaimPolicy: 'Delete', ownerRef: { kind: 'Machine', name: 'm1' } },
      actor,
    );
    await createClaim(db, project.id, { name: 'keep', network: 'vpc', family: 4, prefixLength: 29, reclaimPolicy: 'Retain', retentionSeconds: 3600 }, actor);
    await deleteClaim(db, project.id, 'keep', actor);
    await createChildPool(db, project.id, { network: 'vpc', parent: 'vpc-v4', name: 'tier', prefixLength: 26 }, actor);
    await addLease(db, cluster, { cniNetwork: 'k8s', containerId: 'ctr1', ifname: 'eth0', node: 'n1', podNamespace: 'default', podName: 'p1' }, actor);

    const page = await networkAuditPage(db, project.id, 'vpc', null, 1000);
    expectBalanced(page.pools, page.items);
    expect(page.next).toBeNull();
    const v4 = page.pools.find((p) => p.name === 'vpc-v4')!;
    expect(v4).toMatchObject({ size: '512', counters: { capacity: '507', reserved: '5' } });
    const owners = page.items.map((i) => `${i.kind}:${i.ownerKind}:${i.owner}`);
    expect(owners).toContain('Claim:IPClaim:web');
    expect(owners).toContain('Claim:MachineInterface:m1');
    expect(owners).toContain('Retained:RetainedClaim:keep');
    expect(owners).toContain('PoolCarve:ChildPool:tier');
    expect(owners).toContain('PoolCarve:NodeBlock:c1/n1');
    expect(owners).toContain('PodAddress:PodLease:c1/default/p1');
    expect(owners.filter((o) => o.startsWith('Reservation:Reservation'))).not.toHaveLength(0);
    expect(page.items.filter((i) => i.kind === 'Free' && i.pool === 'vpc-v4').length).toBeGreaterThan(0);
    // Pool by pool, in address order.
    const v4Rows = page.items.filter((i) => i.pool === 'vpc-v4');
    expect(v4Rows.map((r) => r.cidr)).toEqual(
      [...v4Rows.map((r) => r.cidr)].sort((a, b) => {
        const n = (c: string) =>
          c
            .split('/')[0]
            .split('.')
            .reduce((x, o) => x * 256 + Number(o), 0);
        return n(a) - n(b);
      }),
    );

    // Paging: small pages give the same rows, in the same order, with a token that round-trips.
    const paged: string[] = [];
    let cursor = null;
    for (let i = 0; i < 100; i++) {
      const p = await networkAuditPage(db, project.id, 'vpc', cursor, 3);
      expect(p.items.length).toBeLessThanOrEqual(3);
      paged.push(...p.items.map((r) => `${r.pool}:${r.cidr}`));
      cursor = decodeAuditCursor(encodeAuditCursor(p.next) ?? undefined);
      if (!cursor) break;
    }
    expect(paged).toEqual(page.items.map((r) => `${r.pool}:${r.cidr}`));
    expect(() => decodeAuditCursor('bm90LWEtdG9rZW4')).toThrow(/continue/);

    // The CSV: a header, one Pool row per pool, one row per listed block; formula text neutralised.
    const csv = await csvText(db, project.id, 'vpc');
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe('pool,pool_cidr,cidr,kind,addresses,owner_kind,owner,detail,created_at');
    expect(lines.length).toBe(1 + page.pools.length + page.items.length);
    expect(lines.filter((l) => l.split(',')[3] === 'Pool')).toHaveLength(page.pools.length);
    expect(csv).toContain('vpc-v4,198.51.100.0/23,198.51.100.0/23,Pool,512,Root,,');
    expect(csv).not.toContain('INCONSISTENT');

    await expect(networkAuditPage(db, project.id, 'nope', null, 10)).rejects.toMatchObject({ code: 'NotFound' });
    const other = await makeProject(db);
    await expect(networkAuditPage(db, other.project.id, 'vpc', null, 10)).rejects.toMatchObject({ code: 'NotFound' });
  });

  test('an owner that starts like a spreadsheet formula is neutralised in the CSV', async () => {
    const { db, project } = await setup();
    await createClaim(
      db,
      project.id,
      { name: 'nic', network: 'vpc', family: 4, prefixLength: 32, reclaimPolicy: 'Delete', ownerRef: { kind: 'Machine', name: '=HYPERLINK("x")' } },
      actor,
    );
    const csv = await csvText(db, project.id, 'vpc');
    expect(csv).toContain(`,MachineInterface,"'=HYPERLINK(""x"")",claim nic,`);
    expect(csv).not.toMatch(/,"?=HYPERLINK/);
  });

  test('every report read while claims and pod leases are created concurrently balances against the counters', async () => {
    const { db, project, cluster } = await setup();
    let writing = true;
    const writers = (async () => {
      const work: Promise<unknown>[] = [];
      for (let i = 0; i < 24; i++) {
        work.push(
          createClaim(db, project.id, { name: `c${i}`, network: 'vpc', family: i % 2 ? 4 : 6, prefixLength: i % 2 ? 30 : 120, reclaimPolicy: 'Delete' }, actor),
        );
        work.push(
          addLease(
            db,
            cluster,
            { cniNetwork: 'k8s', containerId: `ctr${i}`, ifname: 'eth0', node: `n${i % 3}`, podNamespace: 'default', podName: `p${i}` },
            actor,
          ),
        );
        if (i % 4 === 3) await Promise.all(work.splice(0));
      }
      await Promise.all(work);
      writing = false;
    })();
    let reports = 0;
    const seen = new Set<string>();
    while (writing || reports < 3) {
      const [page, csv] = await Promise.all([networkAuditPage(db, project.id, 'vpc', null, 5000), csvText(db, project.id, 'vpc')]);
      expectBalanced(page.pools, page.items);
      seen.add(page.pools.map((p) => p.counters.allocated).join(','));
      expect(csv).not.toContain('INCONSISTENT');
      expect(csv.trimEnd().split('\r\n').length).toBeGreaterThan(page.pools.length);
      reports++;
    }
    await writers;
    // The reads really overlapped the writes: they saw more than one state of the counters.
    expect(seen.size).toBeGreaterThan(1);
    const final = await networkAuditPage(db, project.id, 'vpc', null, 5000);
    expectBalanced(final.pools, final.items);
    // Dual-stack: one lease per family of each attachment.
    expect(final.items.filter((i) => i.ownerKind === 'PodLease')).toHaveLength(48);
    expect(final.items.filter((i) => i.ownerKind === 'IPClaim')).toHaveLength(24);
  });

  test('over REST: pages of the report with their pools, a continue token, 404 for another project and 400 for a bad token', async () => {
    const { db, project } = await setup();
    await createClaim(db, project.id, { name: 'web', network: 'vpc', family: 4, prefixLength: 28, reclaimPolicy: 'Delete' }, actor);
    const token = await createApiToken(db, { projectId: project.id, name: 'audit' }, actor);
    const get = async (slug: string, query: string, secret = token.secret) => {
      const res = await routeHandlers('/api/v1/projects/{project}/networks/{name}/audit').GET(
        new Request(`http://localhost/x${query}`, { headers: { authorization: `Bearer ${secret}` } }),
        { params: Promise.resolve({ project: slug, name: 'vpc' }) },
      );
      return { status: res.status, body: await res.json() };
    };
    const whole = await get(project.slug, '');
    expect(whole.status).toBe(200);
    expect(whole.body).toMatchObject({ kind: 'AddressAudit', metadata: { name: 'vpc', continue: null } });
    expect(whole.body.pools.every((p: AuditPool) => p.consistent)).toBe(true);
    const rows: string[] = [];
    let next = '';
    do {
      const page = await get(project.slug, `?limit=2${next ? `&continue=${next}` : ''}`);
      expect(page.status).toBe(200);
      rows.push(...page.body.items.map((i: AuditEntry) => `${i.pool}:${i.cidr}`));
      next = page.body.metadata.continue ?? '';
    } while (next);
    expect(rows).toEqual(whole.body.items.map((i: AuditEntry) => `${i.pool}:${i.cidr}`));
    expect((await get(project.slug, '?continue=bm9wZQ')).body).toMatchObject({ error: { code: 'ValidationFailed', field: 'continue' } });
    const other = await makeProject(db);
    const otherToken = await createApiToken(db, { projectId: other.project.id, name: 'audit' }, actor);
    expect((await get(project.slug, '', otherToken.secret)).status).toBe(404);
  });
});
