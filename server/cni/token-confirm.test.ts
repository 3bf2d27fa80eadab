/**
 * The CNI ADD confirms its own token (server/cni/sql/cni_lease_add_confirmed.sql): the REST route reuses a cluster token it
 * verified a moment ago instead of reading it again, so the ADD itself must refuse to write once
 * the token is revoked, alone or in a batch with other clusters' ADDs.
 */
import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createNetwork } from '@/server/ipam/networks';
import { createApiToken, revokeApiToken, verifyApiToken } from '@/server/tenancy/tokens';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { requestProjectDeletion } from '@/server/workflows/project-deletion';
import { createCluster, deleteCluster, findCluster } from './clusters';
import { addLease } from './leases';
import { routeHandlers } from '@/test/rest';

const cniRoute = routeHandlers('/api/v1/projects/{project}/clusters/{cluster}/cni/{command}');

const actor = systemActor('test');

const key = (i: number, node = 'n1') => ({ cniNetwork: 'k8s', containerId: `ctr${i}`, ifname: 'eth0', node, podNamespace: 'default', podName: `pod-${i}` });

async function setup(clusterNames: string[]) {
  const { db } = testDb();
  const { project } = await makeProject(db);
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '10.40.0.0/16' }] }, actor);
  const clusters: Record<string, { token: { id: string; secret: string } }> = {};
  for (const name of clusterNames) {
    await createCluster(db, project.id, { name, network: 'vpc' }, actor);
    clusters[name] = { token: await createApiToken(db, { projectId: project.id, name: `${name}-nodes`, clusterName: name }, actor) };
  }
  const call = async (cluster: string, command: string, body?: unknown, secret = clusters[cluster].token.secret) => {
    const init = { headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } };
    const params = { params: Promise.resolve({ project: project.slug, cluster, command }) };
    const res =
      body === undefined
        ? await cniRoute.GET(new Request('http://localhost/x', init), params)
        : await cniRoute.POST(new Request('http://localhost/x', { ...init, method: 'POST', body: JSON.stringify(body) }), params);
    return { status: res.status, body: await res.json(), authenticate: res.headers.get('www-authenticate') };
  };
  const add = (cluster: string, body: unknown, secret?: string) => call(cluster, 'add', body, secret);
  const leases = async (cluster: string) =>
    (
      (await db.execute(sql`
        select l.container_id from pod_leases l join clusters c on c.id = l.cluster_id
        where c.project_id = ${project.id} and c.name = ${cluster} order by l.container_id`)) as unknown as { container_id: string }[]
    ).map((r) => r.container_id);
  return { db, project, clusters, call, add, leases };
}

describe('CNI ADD confirms its token', () => {
  test('an ADD with a token revoked after it was verified is refused with 401 and writes nothing', async () => {
    const { db, project, clusters, add, leases } = await setup(['k1']);
    const { token } = clusters.k1;
    expect((await add('k1', key(1))).status).toBe(200);

    // Revoked behind the route's back: the route still holds the principal it verified...
    await revokeApiToken(db, project.id, token.id, actor);
    expect(await verifyApiToken(db, token.secret, { reuseRecent: true })).toMatchObject({ tokenId: token.id, clusterName: 'k1' });
    expect(await verifyApiToken(db, token.secret)).toBeUndefined();
    // ...and the ADD, which reuses it, finds the token revoked in its own transaction.
    const refused = await add('k1', key(2));
    expect(refused).toMatchObject({
      status: 401,
      body: { error: { code: 'Unauthenticated', message: 'this token has been revoked' } },
      authenticate: 'Bearer',
    });
    // A repeat of an ADD that succeeded before the revocation is refused too.
    expect((await add('k1', key(1))).status).toBe(401);
    expect(await leases('k1')).toEqual(['ctr1']);
    // The refusal dropped the reused principal: the next call reads the token again.
    expect(await verifyApiToken(db, token.secret, { reuseRecent: true })).toBeUndefined();
  });

  test('only the ADD reuses a verified token: DEL, CHECK, GC and STATUS with a revoked one are refused and change nothing', async () => {
    const { db, project, clusters, call, leases } = await setup(['k1']);
    const { token } = clusters.k1;
    const added = await call('k1', 'add', key(1));
    expect(added.status).toBe(200);
    await revokeApiToken(db, project.id, token.id, actor);
    // The route still holds the principal, but these commands read the token again.
    expect(await verifyApiToken(db, token.secret, { reuseRecent: true })).toBeDefined();
    const { node: _node, podNamespace: _ns, podName: _pod, ...leaseKey } = key(1);
    for (const [command, body] of [
      ['del', leaseKey],
      ['check', { ...leaseKey, prevResult: { ips: added.body.ips } }],
      ['gc', { cniNetwork: 'k8s', node: 'n1', validAttachments: [] }],
      ['status', undefined],
    ] as const) {
      expect(await call('k1', command, body), command).toMatchObject({ status: 401, authenticate: 'Bearer' });
    }
    expect(await leases('k1')).toEqual(['ctr1']);
  });

  test('a reused token of a deleted cluster, or of a project being deleted, adds nothing; project-wide tokens are never reused', async () => {
    const { db, project, clusters, add, leases } = await setup(['k1', 'k2']);
    expect((await add('k1', key(1))).status).toBe(200);
    expect((await add('k2', key(1))).status).toBe(200);

    // The cluster is deleted (its tokens revoked with it) and made again under the same name.
    await deleteCluster(db, project.id, 'k1', actor);
    await createCluster(db, project.id, { name: 'k1', network: 'vpc' }, actor);
    expect(await verifyApiToken(db, clusters.k1.token.secret, { reuseRecent: true })).toBeDefined();
    expect((await add('k1', key(2))).status).toBe(401);
    expect(await leases('k1')).toEqual([]);

    // The project is being deleted: its tokens are revoked as the deletion is requested.
    await requestProjectDeletion(db, project.id, actor);
    expect(await verifyApiToken(db, clusters.k2.token.secret, { reuseRecent: true })).toBeDefined();
    expect((await add('k2', key(2))).status).toBe(401);
    expect(await leases('k2')).toEqual(['ctr1']);

    // A token for the whole project is read on every use, reuse or not.
    const other = (await makeProject(db)).project;
    const wide = await createApiToken(db, { projectId: other.id, name: 'wide' }, actor);
    expect(await verifyApiToken(db, wide.secret)).toMatchObject({ kind: 'project', clusterName: null });
    await revokeApiToken(db, other.id, wide.id, actor);
    expect(await verifyApiToken(db, wide.secret, { reuseRecent: true })).toBeUndefined();
  });

  test('in concurrent batches, only the revoked cluster token’s ADDs are refused', async () => {
    const { db, project, clusters, add, leases } = await setup(['live', 'gone']);
    // Both tokens verified (and reused from now on); both nodes have their blocks.
    for (const c of ['live', 'gone']) for (let n = 0; n < 4; n++) expect((await add(c, key(1000 + n, `n${n}`))).status).toBe(200);
    await revokeApiToken(db, project.id, clusters.gone.token.id, actor);

    const calls = Array.from({ length: 80 }, (_, i) => ({ cluster: i % 2 ? 'live' : 'gone', i, node: `n${Math.floor(i / 2) % 4}` }));
    const answers = await Promise.all(calls.map((c) => add(c.cluster, key(c.i, c.node))));
    calls.forEach((c, k) => expect(answers[k].status, `${c.cluster} ctr${c.i}`).toBe(c.cluster === 'live' ? 200 : 401));
    const addresses = answers.filter((a) => a.status === 200).map((a) => a.body.ips[0].address);
    expect(new Set(addresses).size).toBe(40);

    expect(await leases('gone')).toEqual(['ctr1000', 'ctr1001', 'ctr1002', 'ctr1003']);
    expect((await leases('live')).length).toBe(44);
  });

  test('one batch statement answers each ADD in order: refused ones change nothing, the others are written', async () => {
    const { db, project, clusters } = await setup(['live', 'gone']);
    const live = await findCluster(db, project.id, 'live');
    const gone = await findCluster(db, project.id, 'gone');
    await addLease(db, live, key(0), actor, clusters.live.token.id);
    await addLease(db, gone, key(0), actor, clusters.gone.token.id);
    await revokeApiToken(db, project.id, clusters.gone.token.id, actor);
    const item = (c: typeof live, token: string | undefined, i: number) => ({
      ...(token ? { token } : {}),
      cluster: c.id,
      project: project.id,
      network: c.networkId,
      cniNetwork: 'k8s',
      containerId: `batch${i}`,
      ifname: 'eth0',
      node: 'n1',
      podNamespace: null,
      podName: null,
      pod: null,
      objectName: `${c.name}/batch${i}/eth0`,
      actor: { type: 'system', id: null, label: 'test' },
    });
    const items = [
      item(live, clusters.live.token.id, 1),
      item(gone, clusters.gone.token.id, 2),
      item(gone, undefined, 3),
      item(live, clusters.live.token.id, 4),
    ];
    const [{ answers }] = (await db.execute(sql`select cni_lease_add_many_confirmed(${JSON.stringify(items)}::jsonb) as answers`)) as unknown as {
      answers: Record<string, unknown>[];
    }[];
    expect(answers).toHaveLength(4);
    expect(answers[0]).toHaveProperty('addresses');
    expect(answers[1]).toEqual({ tokenRevoked: true });
    // An ADD that names no token (an internal caller) is not checked.
    expect(answers[2]).toHaveProperty('addresses');
    expect(answers[3]).toHaveProperty('addresses');
    const written = (await db.execute(
      sql`select container_id from pod_leases where project_id = ${project.id} and container_id like 'batch%' order by 1`,
    )) as unknown as {
      container_id: string;
    }[];
    expect(written.map((r) => r.container_id)).toEqual(['batch1', 'batch3', 'batch4']);

    const [{ one }] = (await db.execute(
      sql`select cni_lease_add_confirmed(${JSON.stringify(item(gone, clusters.gone.token.id, 5))}::jsonb) as one`,
    )) as unknown as {
      one: unknown;
    }[];
    expect(one).toEqual({ tokenRevoked: true });
  });

  test("after its cluster is deleted, the cluster's revoked token can still DEL (nothing held: success, nothing changed) and nothing else", async () => {
    const { db, project, clusters, call, leases } = await setup(['k1', 'k2']);
    const old = clusters.k1.token;
    const { node: _node, podNamespace: _ns, podName: _pod, ...leaseKey } = key(1);
    const added = await call('k1', 'add', key(1));
    expect(added.status).toBe(200);
    await deleteCluster(db, project.id, 'k1', actor);
    const events = async () =>
      ((await db.execute(sql`select count(*)::int as n from events where project_id = ${project.id}`)) as unknown as { n: number }[])[0].n;
    const before = await events();

    // DEL of the pod the cluster had, of one it never had, and by the token's project ("-"): success.
    expect(await call('k1', 'del', leaseKey)).toMatchObject({ status: 200, body: { released: 0 } });
    expect(await call('k1', 'del', { ...leaseKey, containerId: 'never' })).toMatchObject({ status: 200, body: { released: 0 } });
    const viaDash = await cniRoute.POST(
      new Request('http://localhost/x', {
        method: 'POST',
        headers: { authorization: `Bearer ${old.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(leaseKey),
      }),
      { params: Promise.resolve({ project: '-', cluster: 'k1', command: 'del' }) },
    );
    expect(viaDash.status).toBe(200);
    // Bad input is still refused, naming the field; another cluster's path still gets the 401.
    expect(await call('k1', 'del', { ...leaseKey, ifname: 'a/b' })).toMatchObject({ status: 400, body: { error: { field: 'ifname' } } });
    expect(await call('k2', 'del', leaseKey, old.secret)).toMatchObject({ status: 401 });
    expect(await events()).toBe(before);

    // Every other call stays refused, and the token is not revived for them.
    for (const [command, body] of [
      ['add', key(2)],
      ['check', { ...leaseKey, prevResult: { ips: added.body.ips } }],
      ['gc', { cniNetwork: 'k8s', node: 'n1', validAttachments: [] }],
      ['status', undefined],
    ] as const) {
      expect(await call('k1', command, body, old.secret), command).toMatchObject({ status: 401, authenticate: 'Bearer' });
    }
    expect(await verifyApiToken(db, old.secret, { reuseRecent: true })).toBeUndefined();

    // The cluster registered again under the name: the old token's DEL leaves its pods alone.
    await createCluster(db, project.id, { name: 'k1', network: 'vpc' }, actor);
    const fresh = await createApiToken(db, { projectId: project.id, name: 'k1-again', clusterName: 'k1' }, actor);
    expect((await call('k1', 'add', key(1), fresh.secret)).status).toBe(200);
    expect(await call('k1', 'del', leaseKey, old.secret)).toMatchObject({ status: 200, body: { released: 0 } });
    expect(await leases('k1')).toEqual(['ctr1']);

    // A token revoked while its cluster lives is refused for DEL too.
    await revokeApiToken(db, project.id, fresh.id, actor);
    expect(await call('k1', 'del', leaseKey, fresh.secret)).toMatchObject({ status: 401 });
    expect(await leases('k1')).toEqual(['ctr1']);

    // A live token's DEL on a cluster that does not exist holds nothing too; another cluster's token still gets 404.
    const wide = await createApiToken(db, { projectId: project.id, name: 'wide' }, actor);
    expect(await call('nope', 'del', leaseKey, wide.secret)).toMatchObject({ status: 200, body: { released: 0 } });
    expect(await call('nope', 'del', leaseKey, clusters.k2.token.secret)).toMatchObject({ status: 404 });
  });
});
