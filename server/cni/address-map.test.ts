import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createClaim } from '@/server/ipam/claims';
import { getAddressMap } from '@/server/ipam/map';
import { createNetwork } from '@/server/ipam/networks';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { createCluster, findCluster } from './clusters';
import { addLease } from './leases';

const actor = systemActor('test');

describe('address map: who holds each block', () => {
  test('claims name their owner reference or creator, node blocks their cluster and node, pod addresses their pod; a node block opens to its pods', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '198.51.100.0/24' }] }, actor);
    await createClaim(db, project.id, { name: 'web', network: 'vpc', prefixLength: 26, reclaimPolicy: 'Delete' } as never, actor);
    await createClaim(
      db,
      project.id,
      { name: 'lb', network: 'vpc', prefixLength: 28, reclaimPolicy: 'Delete', ownerRef: { kind: 'LoadBalancer', name: 'edge' } } as never,
      actor,
    );
    await createCluster(db, project.id, { name: 'k1', network: 'vpc' }, actor);
    const cluster = await findCluster(db, project.id, 'k1');
    const lease = await addLease(
      db,
      cluster,
      { cniNetwork: 'k8s-pod-network', containerId: 'ctr1', ifname: 'eth0', node: 'node-a', podNamespace: 'shop', podName: 'web-1' },
      actor,
    );

    const map = await getAddressMap(db, project.id, { network: 'vpc' });
    const byLabel = (label: string) => map.segments.find((s) => s.label === label);
    expect(byLabel('web')).toMatchObject({ kind: 'claim', owner: actor.label, nodeBlock: false });
    expect(byLabel('lb')).toMatchObject({ kind: 'claim', owner: 'LoadBalancer/edge', nodeBlock: false });
    const nodeBlock = map.segments.find((s) => s.nodeBlock);
    expect(nodeBlock).toMatchObject({ kind: 'pool', owner: 'cluster k1, node node-a' });
    for (const s of map.segments.filter((x) => x.kind === 'free')) expect(s).toMatchObject({ owner: null, nodeBlock: false });

    const inside = await getAddressMap(db, project.id, { network: 'vpc', pool: nodeBlock!.label! });
    expect(inside.pool.kind).toBe('NodeBlock');
    const pods = inside.segments.filter((s) => s.kind === 'pod');
    expect(pods).toHaveLength(1);
    expect(pods[0]).toMatchObject({ cidr: `${lease[0].address.split('/')[0]}/32`, owner: 'pod shop/web-1 on node node-a', size: '1' });
  });
});
