import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { pgCode } from '@/server/errors';
import { initialFreeBlocks, reservationBlocks } from '@/server/ipam/blocks';
import { cidrSize, formatCidr, parseCidrOrThrow } from '@/lib/cidr';
import { createNetwork, getNetwork } from '@/server/ipam/networks';
import { createApiToken } from '@/server/tenancy/tokens';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { createCluster, findCluster } from './clusters';
import { addLease, checkLease, clusterStatus, gcLeases, listLeases, podUsage, releaseLeases, returnNodeBlockIfEmpty } from './leases';
import { overrideEnv } from '@/server/env';
import { routeHandlers } from '@/test/rest';

const cniRoute = routeHandlers('/api/v1/projects/{project}/clusters/{cluster}/cni/{command}');

const actor = systemActor('test');

async function setup(cidrs: { cidr: string }[] = [{ cidr: '198.51.100.0/22' }], clusterNames = ['c1']) {
  const { db } = testDb();
  const { project } = await makeProject(db);
  await createNetwork(db, project.id, { name: 'vpc', cidrs }, actor);
  const clusters = [];
  for (const name of clusterNames) {
    await createCluster(db, project.id, { name, network: 'vpc' }, actor);
    clusters.push(await findCluster(db, project.id, name));
  }
  return { db, project, clusters };
}

async function assertNoOverlap(projectId: string) {
  const { db } = testDb();
  const [{ n }] = (await db.execute(sql`
    select count(*)::int as n from ip_allocations a join ip_allocations b
      on a.pool_id = b.pool_id and a.id < b.id and a.cidr && b.cidr where a.project_id = ${projectId}`)) as unknown as { n: number }[];
  expect(n).toBe(0);
  const [{ dup }] = (await db.execute(sql`
    select count(*)::int as dup from (select address from pod_leases where project_id = ${projectId} group by address having count(*) > 1) d`)) as unknown as {
    dup: number;
  }[];
  expect(dup).toBe(0);
}

const key = (i: number, node = 'n1') => ({
  cniNetwork: 'k8s-pod-network',
  containerId: `ctr${i}`,
  ifname: 'eth0',
  node,
  podNamespace: 'default',
  podName: `pod-${i}`,
});

describe('CNI leases', () => {
  test('ADD is idempotent, gives a gateway and the block prefix; DEL releases and is repeatable; empty blocks return after the grace period', async () => {
    const { db, project, clusters } = await setup();
    const [c] = clusters;
    const first = await addLease(db, c, key(1), actor);
    expect(first).toHaveLength(1);
    expect(first[0].address).toMatch(/^198\.51\.10[0-3]\.\d+\/26$/);
    expect(first[0].gateway).toMatch(/\.1$/);
    expect(await addLease(db, c, key(1), actor)).toEqual(first);
    const net = await getNetwork(db, project.id, 'vpc');
    expect(net.pools.find((p) => p.kind === 'Root')!.allocated).toBe('64');
    expect(await releaseLeases(db, c, { key: key(1) }, actor)).toHaveLength(1);
    expect(await releaseLeases(db, c, { key: key(1) }, actor)).toHaveLength(0);
    // The node keeps its emptied block for the grace period; its return is a scheduled job.
    const [block] = (await getNetwork(db, project.id, 'vpc')).pools.filter((p) => p.kind === 'NodeBlock');
    expect(block).toBeDefined();
    const [job] = (await db.execute(sql`
      select extract(epoch from run_at - now())::int as due_in from graphile_worker.jobs
      where task_identifier = 'cni__return_block' and key = ${`cni-return-block:${block.id}`}`)) as unknown as { due_in: number }[];
    expect(job.due_in).toBeGreaterThan(250);
    // A pod coming back meanwhile takes an address from the same block, and the job leaves it be.
    const again = await addLease(db, c, key(2), actor);
    expect(again[0].address).toBe(first[0].address);
    expect(await returnNodeBlockIfEmpty(db, block.id)).toBe(false);
    await releaseLeases(db, c, { key: key(2) }, actor);
    expect(await returnNodeBlockIfEmpty(db, block.id)).toBe(true);
    const after = await getNetwork(db, project.id, 'vpc');
    expect(after.pools.find((p) => p.kind === 'Root')!.allocated).toBe('0');
    expect(after.pools.filter((p) => p.kind === 'NodeBlock')).toHaveLength(0);
    // With no grace period the DEL returns the block itself.
    const restore = overrideEnv({ CNI_BLOCK_GRACE_SECONDS: '0' });
    try {
      await addLease(db, c, key(3), actor);
      await releaseLeases(db, c, { key: key(3) }, actor);
    } finally {
      restore();
    }
    expect((await getNetwork(db, project.id, 'vpc')).pools.filter((p) => p.kind === 'NodeBlock')).toHaveLength(0);
  });

  test('dual-stack networks lease one address per family', async () => {
    const { db, clusters } = await setup([{ cidr: '192.0.2.0/24' }, { cidr: '2001:db8:1::/64' }]);
    const ips = await addLease(db, clusters[0], key(7), actor);
    expect(ips.map((i) => i.family)).toEqual([4, 6]);
    expect(ips[1].address).toMatch(/^2001:db8:1::[0-9a-f]+\/120$/);
  });

  test('CHECK passes on the leased address and records a mismatch event otherwise', async () => {
    const { db, project, clusters } = await setup();
    const [c] = clusters;
    const ips = await addLease(db, c, key(2), actor);
    expect(await checkLease(db, c, key(2), [{ address: ips[0].address }], actor)).toEqual({ ok: true });
    await expect(checkLease(db, c, key(2), [{ address: '198.51.100.250/26' }], actor)).rejects.toMatchObject({ code: 'CheckMismatch' });
    await expect(checkLease(db, c, key(99), [{ address: '198.51.100.250/26' }], actor)).rejects.toMatchObject({ code: 'NotFound' });
    const [{ n }] = (await db.execute(
      sql`select count(*)::int as n from events where project_id = ${project.id} and action = 'cni.check.mismatch'`,
    )) as unknown as { n: number }[];
    expect(n).toBe(1);
  });

  test('GC releases leases missing from the valid list, sparing young ones within the grace period', async () => {
    const { db, clusters } = await setup();
    const [c] = clusters;
    for (let i = 0; i < 5; i++) await addLease(db, c, key(i), actor);
    const valid = [
      { containerID: 'ctr0', ifname: 'eth0' },
      { containerID: 'ctr1', ifname: 'eth0' },
    ];
    const spared = await gcLeases(db, c, { cniNetwork: 'k8s-pod-network', node: 'n1', validAttachments: valid }, 3600, actor);
    expect(spared).toMatchObject({ released: [], spared: 3 });
    const result = await gcLeases(db, c, { cniNetwork: 'k8s-pod-network', node: 'n1', validAttachments: valid }, 0, actor);
    expect(result.released.map((r) => r.containerId).sort()).toEqual(['ctr2', 'ctr3', 'ctr4']);
    expect((await listLeases(db, c.projectId, { limit: 50, offset: 0 })).total).toBe(2);
  });

  test("GC from one node releases that node's stale leases only: another node's pods keep theirs", async () => {
    const { db, clusters } = await setup();
    const [c] = clusters;
    for (let i = 0; i < 3; i++) await addLease(db, c, key(i, 'node-a'), actor);
    for (let i = 3; i < 6; i++) await addLease(db, c, key(i, 'node-b'), actor);
    // node-a's runtime knows its own attachments only (ctr0 still runs there; ctr1 and ctr2 are gone).
    const result = await gcLeases(
      db,
      c,
      { cniNetwork: 'k8s-pod-network', node: 'node-a', validAttachments: [{ containerID: 'ctr0', ifname: 'eth0' }] },
      0,
      actor,
    );
    expect(result.released.map((r) => r.containerId).sort()).toEqual(['ctr1', 'ctr2']);
    const left = await listLeases(db, c.projectId, { limit: 50, offset: 0 });
    expect(left.items.map((l) => l.containerId).sort()).toEqual(['ctr0', 'ctr3', 'ctr4', 'ctr5']);
  });

  test('STATUS says exhausted when no address can be had', async () => {
    const { db, clusters } = await setup([{ cidr: '203.0.113.0/28' }]);
    const [c] = clusters;
    expect(await clusterStatus(db, c)).toEqual({ ready: true });
    // A /28 node block keeps 3 addresses back (network, gateway, broadcast): 13 pods fit.
    for (let i = 0; i < 13; i++) await addLease(db, c, key(i), actor);
    await expect(addLease(db, c, key(13), actor)).rejects.toMatchObject({ code: 'Exhausted' });
    expect(await clusterStatus(db, c)).toMatchObject({ ready: false, reason: 'Exhausted' });
  });

  test('2 clusters × 500 concurrent ADDs on one network: 1,000 distinct addresses, no overlap, repeats return the same', async () => {
    // 32 nodes need 32 /26 blocks: the RFC 2544 benchmarking range gives room (no documentation range is that large).
    const { db, project, clusters } = await setup([{ cidr: '198.18.0.0/20' }], ['east', 'west']);
    const jobs = clusters.flatMap((c) => Array.from({ length: 500 }, (_, i) => ({ c, k: key(i, `node-${i % 16}`) })));
    const first = await Promise.all(jobs.map(({ c, k }) => addLease(db, c, k, actor)));
    const addresses = first.map((ips) => ips[0].address.split('/')[0]);
    expect(new Set(addresses).size).toBe(1000);
    await assertNoOverlap(project.id);
    const again = await Promise.all(jobs.map(({ c, k }) => addLease(db, c, k, actor)));
    expect(again.map((ips) => ips[0].address.split('/')[0])).toEqual(addresses);
    const usage = await podUsage(db, project.id);
    expect(usage.byCluster.map((u) => u.leases)).toEqual([500, 500]);
    expect(usage.byNode.length).toBe(32);
  }, 120_000);

  test('a batch of ADDs in one cni_lease_add_many leaves what the same ADDs one by one leave', async () => {
    // Two projects with the same address space, the same history, then the same ADDs: in A as one
    // batch, in B one statement each. Small node blocks (/28, /124) so the batch spans blocks and
    // runs out of room.
    const { db } = testDb();
    const sides: { project: { id: string }; c: Awaited<ReturnType<typeof findCluster>> }[] = [];
    for (const side of ['a', 'b']) {
      const { project } = await makeProject(db);
      await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '198.51.100.0/24' }, { cidr: '2001:db8:7::/56' }] }, actor);
      await createCluster(db, project.id, { name: `c${side}`, network: 'vpc', nodeBlockPrefixV4: 28, nodeBlockPrefixV6: 124 }, actor);
      const c = await findCluster(db, project.id, `c${side}`);
      for (let i = 0; i < 11; i++) await addLease(db, c, key(i, 'n1'), actor);
      // n1's first blocks are in their last quarter: its next blocks are carved in the background,
      // before n2's first, so that both sides carve their blocks in the same order.
      await expect
        .poll(async () => (await db.execute(sql`select count(*)::int as n from node_blocks where cluster_id = ${c.id} and node = 'n1'`))[0].n, {
          timeout: 10_000,
        })
        .toBe(4);
      await addLease(db, c, key(100, 'n2'), actor);
      sides.push({ project, c });
    }
    const items = (c: (typeof sides)[number]['c']) =>
      [
        ...Array.from({ length: 20 }, (_, i) => key(11 + i, 'n1')),
        key(3, 'n1'), // leased before
        key(12, 'n1'), // twice in the batch
        ...Array.from({ length: 5 }, (_, i) => key(101 + i, 'n2')),
        key(200, 'n3'), // a node without blocks
      ].map((k) => ({
        cluster: c.id,
        project: c.projectId,
        network: c.networkId,
        ...k,
        pod: `${k.podNamespace}/${k.podName}`,
        objectName: `${c.name}/${k.containerId}/${k.ifname}`,
        actor: { type: 'system', id: null, label: 'test' },
      }));
    const [a, b] = sides;
    const [{ answers }] = (await db.execute(sql`select cni_lease_add_many(${JSON.stringify(items(a.c))}::jsonb) as answers`)) as unknown as {
      answers: Record<string, unknown>[];
    }[];
    const oneByOne: Record<string, unknown>[] = [];
    for (const item of items(b.c))
      oneByOne.push(
        ((await db.execute(sql`select cni_lease_add(${JSON.stringify(item)}::jsonb) as answer`)) as unknown as { answer: Record<string, unknown> }[])[0].answer,
      );
    const withoutHints = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'lowOnRoom'));
    expect(answers.map(withoutHints)).toEqual(oneByOne.map(withoutHints));
    expect(answers.filter((r) => 'needsBlock' in r).length).toBe(1 + 20 - 15); // n3, and n1 beyond its 2 + 13 IPv4 addresses
    expect(answers[0]).toHaveProperty('lowOnRoom');
    const state = async (projectId: string) => ({
      free: await db.execute(sql`
        select b.node, p.family, p.cidr::text as block, f.cidr::text as free from ip_free_blocks f
        join ip_pools p on p.id = f.pool_id join node_blocks b on b.pool_id = p.id where p.project_id = ${projectId} order by 1, 2, 3, 4`),
      leases: await db.execute(sql`select container_id, family, address::text, node from pod_leases where project_id = ${projectId} order by 1, 2`),
      counters: await db.execute(sql`select cidr::text, allocated::text, allocation_count from ip_pools where project_id = ${projectId} order by 1`),
      events: (await db.execute(sql`select count(*)::int as n from events where project_id = ${projectId} and action = 'cni.add'`))[0].n,
    });
    expect(await state(a.project.id)).toEqual(await state(b.project.id));
  });

  test('a carved node block holds its reservations and the free set between them, once per node', async () => {
    const { db, clusters } = await setup([{ cidr: '198.51.100.0/24' }, { cidr: '2001:db8:9::/64' }]);
    const c = clusters[0];
    for (const family of [4, 6] as const) {
      const ensure = async (mode: string) => {
        const args = {
          cluster: c.id,
          clusterName: c.name,
          project: c.projectId,
          network: c.networkId,
          node: 'n7',
          family,
          mode,
          preferredPrefix: family === 4 ? 26 : 120,
          minPrefix: family === 4 ? 28 : 124,
          reserveLeading: 2,
          reserveTrailing: family === 4 ? 1 : 0,
          blockGraceSeconds: 0,
        };
        return (
          (await db.execute(sql`select cni_node_block_ensure(${JSON.stringify(args)}::jsonb) as r`)) as unknown as {
            r: Record<string, { pool: string; cidr: string }>;
          }[]
        )[0].r;
      };
      const { carved } = await ensure('needed');
      const block = parseCidrOrThrow(carved.cidr);
      expect(block.prefix).toBe(family === 4 ? 26 : 120);
      const trailing = family === 4 ? 1n : 0n;
      const free = (await db.execute(sql`select cidr::text from ip_free_blocks where pool_id = ${carved.pool} order by cidr`)) as unknown as { cidr: string }[];
      expect(free.map((f) => f.cidr).sort()).toEqual(initialFreeBlocks(block, 2n, trailing).map(formatCidr).sort());
      const reserved = (await db.execute(
        sql`select cidr::text from ip_allocations where pool_id = ${carved.pool} and kind = 'Reservation' order by cidr`,
      )) as unknown as { cidr: string }[];
      const expected = reservationBlocks(block, 2n, trailing);
      expect(reserved.map((r) => r.cidr).sort()).toEqual([...expected.leading, ...expected.trailing].map(formatCidr).sort());
      const [pool] = (await db.execute(sql`select capacity::text, allocated::text, kind from ip_pools where id = ${carved.pool}`)) as unknown as {
        capacity: string;
        allocated: string;
        kind: string;
      }[];
      expect(pool).toEqual({ capacity: String(cidrSize(block) - 2n - trailing), allocated: '0', kind: 'NodeBlock' });
      expect(await ensure('needed')).toEqual({ room: true });
      expect(await ensure('spare')).toEqual({ room: true });
    }
  });

  test("an allocation's pool, project and network, and a lease's cluster and project, are one key each (migration 0023)", async () => {
    const { db, project, clusters } = await setup();
    const other = (await makeProject(db)).project;
    const [lease] = await addLease(db, clusters[0], key(1), actor);
    const [row] = (await db.execute(sql`
      select l.id as lease, l.allocation_id as allocation, a.pool_id as pool, a.network_id as network
      from pod_leases l join ip_allocations a on a.id = l.allocation_id where l.project_id = ${project.id}`)) as unknown as {
      lease: string;
      allocation: string;
      pool: string;
      network: string;
    }[];
    const refused = async (statement: ReturnType<typeof sql>) => expect(await db.execute(statement).then(() => null, pgCode)).toBe('23503');
    // Rows that name another project than their pool's or their cluster's are refused.
    await refused(sql`insert into ip_allocations (pool_id, project_id, network_id, cidr, kind, size)
      values (${row.pool}, ${other.id}, ${row.network}, '198.51.103.250/32', 'PodAddress', 1)`);
    await refused(sql`update pod_leases set project_id = ${other.id} where id = ${row.lease}`);
    // Deleting the cluster deletes its leases (and their allocations), as before.
    expect(lease.address).toMatch(/^198\.51\./);
    await db.execute(sql`delete from clusters where id = ${clusters[0].id}`);
    const [{ leases }] = (await db.execute(sql`select count(*)::int as leases from pod_leases where project_id = ${project.id}`)) as unknown as {
      leases: number;
    }[];
    expect(leases).toBe(0);
    // Deleting the project's network deletes its pools and so every allocation in them.
    await db.execute(sql`delete from networks where id = ${row.network}`);
    const [{ allocations }] = (await db.execute(sql`select count(*)::int as allocations from ip_allocations where project_id = ${project.id}`)) as unknown as {
      allocations: number;
    }[];
    expect(allocations).toBe(0);
  });

  test('cluster tokens act only for their own cluster', async () => {
    const { db, project, clusters } = await setup(undefined, ['a', 'b']);
    const tokenA = await createApiToken(db, { projectId: project.id, name: 'a-nodes', clusterName: 'a' }, actor);
    const call = (cluster: string) =>
      cniRoute.POST(
        new Request('http://localhost/x', {
          method: 'POST',
          headers: { authorization: `Bearer ${tokenA.secret}`, 'content-type': 'application/json' },
          body: JSON.stringify(key(1)),
        }),
        { params: Promise.resolve({ project: project.slug, cluster, command: 'add' }) },
      );
    const ok = await call('a');
    expect(ok.status).toBe(200);
    expect((await ok.json()).ips).toHaveLength(1);
    const other = await call('b');
    expect(other.status).toBe(404);
    expect((await listLeases(db, project.id, { cluster: clusters[1].name, limit: 10, offset: 0 })).total).toBe(0);
  });
});
