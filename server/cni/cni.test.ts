import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import * as cniRoute from '@/app/api/v1/projects/[project]/clusters/[cluster]/cni/[command]/route';
import { systemActor } from '@/server/audit/events';
import { createNetwork, getNetwork } from '@/server/ipam/networks';
import { createApiToken } from '@/server/tenancy/tokens';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { createCluster, findCluster } from './clusters';
import { addLease, checkLease, clusterStatus, gcLeases, listLeases, podUsage, releaseLeases, returnNodeBlockIfEmpty } from './leases';

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
    select count(*)::int as dup from (select address from pod_leases where project_id = ${projectId} group by address having count(*) > 1) d`)) as unknown as { dup: number }[];
  expect(dup).toBe(0);
}

const key = (i: number, node = 'n1') => ({ cniNetwork: 'k8s-pod-network', containerId: `ctr${i}`, ifname: 'eth0', node, podNamespace: 'default', podName: `pod-${i}` });

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
    process.env.CNI_BLOCK_GRACE_SECONDS = '0';
    try {
      await addLease(db, c, key(3), actor);
      await releaseLeases(db, c, { key: key(3) }, actor);
    } finally {
      delete process.env.CNI_BLOCK_GRACE_SECONDS;
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
    const [{ n }] = (await db.execute(sql`select count(*)::int as n from events where project_id = ${project.id} and action = 'cni.check.mismatch'`)) as unknown as { n: number }[];
    expect(n).toBe(1);
  });

  test('GC releases leases missing from the valid list, sparing young ones within the grace period', async () => {
    const { db, clusters } = await setup();
    const [c] = clusters;
    for (let i = 0; i < 5; i++) await addLease(db, c, key(i), actor);
    const valid = [{ containerID: 'ctr0', ifname: 'eth0' }, { containerID: 'ctr1', ifname: 'eth0' }];
    const spared = await gcLeases(db, c, { cniNetwork: 'k8s-pod-network', validAttachments: valid }, 3600, actor);
    expect(spared).toMatchObject({ released: [], spared: 3 });
    const result = await gcLeases(db, c, { cniNetwork: 'k8s-pod-network', validAttachments: valid }, 0, actor);
    expect(result.released.map((r) => r.containerId).sort()).toEqual(['ctr2', 'ctr3', 'ctr4']);
    expect((await listLeases(db, c.projectId, { limit: 50, offset: 0 })).total).toBe(2);
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

  test('cluster tokens act only for their own cluster', async () => {
    const { db, project, clusters } = await setup(undefined, ['a', 'b']);
    const tokenA = await createApiToken(db, { projectId: project.id, name: 'a-nodes', clusterName: 'a' }, actor);
    const call = (cluster: string) =>
      cniRoute.POST(
        new Request('http://localhost/x', { method: 'POST', headers: { authorization: `Bearer ${tokenA.secret}`, 'content-type': 'application/json' }, body: JSON.stringify(key(1)) }),
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
