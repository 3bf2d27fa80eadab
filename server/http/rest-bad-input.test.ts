/**
 * Hostile input a client can send, pinned as named examples beside the generated ones of the REST
 * fuzz suite (rest-fuzz.test.ts): each is a coded 4xx naming the field (or a success), never a
 * 500, and writes nothing.
 */
import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { locations, machineClasses, machineProfiles, serviceAvailability } from '@/db/schema/fleet';
import { systemActor } from '@/server/audit/events';
import { createCluster } from '@/server/cni/clusters';
import { createNetwork } from '@/server/ipam/networks';
import { createApiToken } from '@/server/tenancy/tokens';
import { testDb, uniq } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { routeHandlers } from '@/test/rest';

const cniRoute = routeHandlers('/api/v1/projects/{project}/clusters/{cluster}/cni/{command}');
const leases = routeHandlers('/api/v1/projects/{project}/clusters/{cluster}/leases');
const machines = routeHandlers('/api/v1/projects/{project}/machines');
const clusterItem = routeHandlers('/api/v1/projects/{project}/clusters/{cluster}');
const ipclaims = routeHandlers('/api/v1/projects/{project}/ipclaims');
const networks = routeHandlers('/api/v1/projects/{project}/networks');
const increases = routeHandlers('/api/v1/projects/{project}/quotaincreaserequests');
const resourceclaims = routeHandlers('/api/v1/projects/{project}/resourceclaims');

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const actor = systemActor('test');

async function client() {
  const { db } = testDb();
  const { project } = await makeProject(db);
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24' }] }, actor);
  await createCluster(db, project.id, { name: 'k1', network: 'vpc' }, actor);
  const token = await createApiToken(db, { projectId: project.id, name: 'rest' }, actor);
  const call = async (handler: unknown, method: string, options: { params?: Record<string, string>; body?: string; query?: string } = {}) => {
    const res = await (handler as Handler)(
      new Request(`http://localhost/api/v1/x${options.query ?? ''}`, {
        method,
        headers: { authorization: `Bearer ${token.secret}`, ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: options.body,
      }),
      { params: Promise.resolve({ project: project.slug, ...options.params }) },
    );
    return { status: res.status, body: (await res.json()) as { error?: { code: string; field?: string; message: string } } & Record<string, unknown> };
  };
  const count = async (table: 'networks' | 'ip_claims' | 'pod_leases' | 'quota_increase_requests' | 'events') => {
    const [{ n }] = (await db.execute(sql`select count(*)::int as n from ${sql.identifier(table)} where project_id = ${project.id}`)) as unknown as {
      n: number;
    }[];
    return n;
  };
  return { call, count };
}

describe('REST v1: input PostgreSQL cannot store is a 400 naming the field', () => {
  test('a NUL in a search query parameter is a 400 naming it', async () => {
    const { call } = await client();
    for (const [handler, params] of [
      [networks.GET, {}],
      [ipclaims.GET, {}],
      [resourceclaims.GET, {}],
      [leases.GET, { cluster: 'k1' }],
    ] as const) {
      const res = await call(handler, 'GET', { params, query: '?search=a%00b' });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'ValidationFailed', field: 'search' });
    }
  });

  test('a NUL in the cluster path segment is an unknown cluster', async () => {
    const { call } = await client();
    const params = { cluster: 'a\u0000b' };
    for (const [handler, method, extra] of [
      [clusterItem.GET, 'GET', {}],
      [clusterItem.DELETE, 'DELETE', {}],
      [cniRoute.GET, 'GET', { command: 'status' }],
      [leases.GET, 'GET', {}],
    ] as const) {
      const res = await call(handler, method, { params: { ...params, ...extra } });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'NotFound', field: 'cluster' });
    }
  });

  test.each([
    ['a NUL', 'shop\\u0000'],
    ['an unpaired surrogate', '\\ud800'],
  ])('%s in a CNI ADD body: 400 naming the field, no lease and no event', async (_what, escaped) => {
    const { call, count } = await client();
    const [leasesBefore, eventsBefore] = [await count('pod_leases'), await count('events')];
    const body = `{"cniNetwork":"podnet","containerId":"c1","ifname":"eth0","node":"n1","podNamespace":"${escaped}","podName":"web"}`;
    const res = await call(cniRoute.POST, 'POST', { params: { cluster: 'k1', command: 'add' }, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'ValidationFailed', field: 'podNamespace' });
    expect([await count('pod_leases'), await count('events')]).toEqual([leasesBefore, eventsBefore]);
  });

  test('in resource bodies, keys included', async () => {
    const { call, count } = await client();
    const cases: [unknown, string, string][] = [
      [networks.POST, '{"metadata":{"name":"n2"},"spec":{"description":"a\\u0000","cidrs":[{"cidr":"198.51.100.0/24"}]}}', 'spec.description'],
      [ipclaims.POST, '{"metadata":{"name":"c1","labels":{"te\\u0000am":"x"}},"spec":{"network":"vpc","prefixLength":28}}', 'metadata.labels.te\u0000am'],
      [ipclaims.POST, '{"metadata":{"name":"c1"},"spec":{"network":"vpc","prefixLength":28,"ownerRef":{"kind":"X","name":"\\udfff"}}}', 'spec.ownerRef.name'],
      [increases.POST, '{"spec":{"resourceType":"ipam.miloapis.com/ipclaims","amount":1,"reason":"need\\u0000more"}}', 'spec.reason'],
    ];
    for (const [handler, body, field] of cases) {
      const res = await call(handler, 'POST', { body });
      expect(res.status, body).toBe(400);
      expect(res.body.error, body).toMatchObject({ code: 'ValidationFailed', field });
    }
    expect([await count('networks'), await count('ip_claims'), await count('quota_increase_requests')]).toEqual([1, 0, 0]);
  });
});

describe('REST v1: networks at the ends of the address space', () => {
  test.each(['255.255.255.0/24', '0.0.0.0/29', '::/120', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ff00/120'])(
    '%s is created, its reservations inside the address space',
    async (cidr) => {
      const { call } = await client();
      const res = await call(networks.POST, 'POST', { body: JSON.stringify({ metadata: { name: 'edge' }, spec: { cidrs: [{ cidr }] } }) });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({ spec: { cidrs: [{ cidr }] } });
      const claim = await call(ipclaims.POST, 'POST', {
        body: JSON.stringify({
          metadata: { name: 'c' },
          spec: { network: 'edge', ...(cidr.includes(':') ? { family: 'IPv6', prefixLength: 128 } : { prefixLength: 32 }) },
        }),
      });
      expect(claim.status, JSON.stringify(claim.body)).toBe(201);
    },
  );
});

describe('REST v1: machines with names at the length limit', () => {
  test('every address of a 63-character machine is its own claim with its own address', async () => {
    const { db } = testDb();
    const tag = uniq('rb');
    const [loc] = await db.insert(locations).values({ name: tag, displayName: tag }).returning({ id: locations.id });
    await db.insert(serviceAvailability).values({ locationId: loc.id, service: 'machines', status: 'Available' });
    await db.insert(machineClasses).values({ name: `${tag}.cls`, cores: 2, memoryGib: 4, arch: 'x86_64', requiresApproval: false });
    const digest = 'sha256:' + 'ef'.repeat(32);
    await db.insert(machineProfiles).values({ name: `${tag}-os`, imageRef: `example/os@${digest}`, imageDigest: digest });
    const { call, count } = await client();
    const spec = { class: `${tag}.cls`, profile: `${tag}-os`, location: tag, interfaces: [{ network: 'vpc', families: ['IPv4'], addressClasses: 3 }] };
    const addresses: string[] = [];
    for (const name of ['a'.repeat(63), `${'a'.repeat(62)}b`]) {
      const res = await call(machines.POST, 'POST', { body: JSON.stringify({ metadata: { name }, spec }) });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      addresses.push(...(res.body.status as { addresses: string[] }).addresses);
    }
    expect(addresses).toHaveLength(6);
    expect(new Set(addresses).size).toBe(6);
    expect(await count('ip_claims')).toBe(6);
  });
});
