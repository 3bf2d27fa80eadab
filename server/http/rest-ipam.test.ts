import { existsSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createApiToken } from '@/server/tenancy/tokens';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { apiRoutes } from '@/server/api/routes';
import { overrideEnv } from '@/server/env';
import { routeHandlers } from '@/test/rest';

const claimItem = routeHandlers('/api/v1/projects/{project}/ipclaims/{name}');
const claims = routeHandlers('/api/v1/projects/{project}/ipclaims');
const networkItem = routeHandlers('/api/v1/projects/{project}/networks/{name}');
const networks = routeHandlers('/api/v1/projects/{project}/networks');
const discovery = routeHandlers('/api/v1');
const openapi = routeHandlers('/api/v1/openapi.json');

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

async function client() {
  const { db } = testDb();
  const { project } = await makeProject(db);
  const token = await createApiToken(db, { projectId: project.id, name: 'rest' }, systemActor('test'));
  const call = async (handler: Handler, method: string, params: Record<string, string>, body?: unknown, query = '') => {
    const res = await handler(
      new Request(`http://localhost/api/v1/x${query}`, {
        method,
        headers: { authorization: `Bearer ${token.secret}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      }),
      { params: Promise.resolve({ project: project.slug, ...params }) },
    );
    return { status: res.status, body: await res.json() };
  };
  return { db, project, call };
}

const network = (name: string, cidr: string) => ({ metadata: { name }, spec: { cidrs: [{ cidr }] } });
const claim = (name: string, spec: Record<string, unknown>) => ({ metadata: { name }, spec: { network: 'vpc', ...spec } });

describe('REST v1 IPAM', () => {
  test('networks and claims round-trip as resources', async () => {
    const { call, db, project } = await client();
    const created = await call(networks.POST as Handler, 'POST', {}, network('vpc', '192.0.2.0/24'));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kind: 'Network', metadata: { name: 'vpc' }, status: { utilization: { IPv4: { capacity: '256', allocated: '0' } } } });

    const bound = await call(claims.POST as Handler, 'POST', {}, claim('web', { prefixLength: 28 }));
    expect(bound.status).toBe(201);
    expect(bound.body).toMatchObject({ kind: 'IPClaim', metadata: { name: 'web' }, status: { phase: 'Bound', allocatedCIDR: '192.0.2.0/28' } });
    const replay = await call(claims.POST as Handler, 'POST', {}, claim('web', { prefixLength: 28 }));
    expect(replay.status).toBe(200);
    expect(replay.body.status.allocatedCIDR).toBe('192.0.2.0/28');

    const preview = await call(claims.POST as Handler, 'POST', {}, claim('next', { prefixLength: 28 }), '?dryRun=true');
    expect(preview).toMatchObject({ status: 200, body: { status: { phase: 'Preview', allocatedCIDR: '192.0.2.16/28' } } });
    expect((await call(claimItem.GET as Handler, 'GET', { name: 'next' })).status).toBe(404);

    const list = await call(claims.GET as Handler, 'GET', {}, undefined, '?limit=1&sort=name&order=asc');
    expect(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['web']);
    expect(list.body.metadata.continue).toBeNull();

    expect((await call(claimItem.DELETE as Handler, 'DELETE', { name: 'web' })).body).toMatchObject({ status: 'Success', details: { released: true } });
    expect((await call(networkItem.GET as Handler, 'GET', { name: 'vpc' })).body.status.utilization.IPv4.allocated).toBe('0');
    expect((await call(networkItem.DELETE as Handler, 'DELETE', { name: 'vpc' })).status).toBe(200);
    const [{ n }] = (await db.execute(sql`select count(*)::int as n from networks where project_id = ${project.id}`)) as unknown as { n: number }[];
    expect(n).toBe(0);
  });

  test('every error is a coded 4xx with the field, and changes nothing', async () => {
    const { call, db, project } = await client();
    await call(networks.POST as Handler, 'POST', {}, network('vpc', '192.0.2.0/28'));
    const cases: [unknown, number, string, string | null][] = [
      [network('bad', '192.0.2.1/24'), 400, 'InvalidCidr', 'cidrs.0.cidr'],
      [network('bad', '300.0.0.0/8'), 400, 'InvalidCidr', 'cidrs.0.cidr'],
      [network('bad', '192.0.2.0/40'), 400, 'InvalidCidr', 'cidrs.0.cidr'],
      [network('dup', '192.0.2.0/25'), 409, 'Overlap', 'cidrs.0.cidr'],
      [network('vpc', '203.0.113.0/24'), 409, 'Conflict', 'name'],
      [{ metadata: { name: 'Bad_Name' }, spec: { cidrs: [{ cidr: '203.0.113.0/24' }] } }, 400, 'ValidationFailed', 'metadata.name'],
      [{ metadata: { name: 'x' }, spec: { cidrs: [] } }, 400, 'ValidationFailed', 'spec.cidrs'],
      ['{not json', 400, 'ValidationFailed', 'body'],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await call(networks.POST as Handler, 'POST', {}, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error.code, JSON.stringify(res.body)).toBe(code);
      if (field) expect(res.body.error.field).toBe(field);
    }
    const claimCases: [unknown, number, string, string | null, string?][] = [
      [claim('a', { prefixLength: 33 }), 400, 'ValidationFailed', 'prefixLength'],
      [claim('a', { prefixLength: 24 }), 400, 'PrefixLengthRejected', 'prefixLength'],
      [claim('a', { family: 'IPv6' }), 400, 'NoOfferingPool', 'family'],
      [claim('a', { network: 'nope' }), 404, 'NotFound', 'network'],
      [claim('a', { address: '192.0.2.3/30' }), 400, 'InvalidCidr', 'address'],
      [claim('a', { prefixLength: 'big' }), 400, 'ValidationFailed', 'spec.prefixLength'],
      [claim('a', { reclaimPolicy: 'Keep' }), 400, 'ValidationFailed', 'spec.reclaimPolicy'],
    ];
    for (const [body, status, code, field] of claimCases) {
      const res = await call(claims.POST as Handler, 'POST', {}, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error.code, JSON.stringify(res.body)).toBe(code);
      if (field) expect(res.body.error.field).toBe(field);
    }
    await call(claims.POST as Handler, 'POST', {}, claim('all', { prefixLength: 28 }));
    const exhausted = await call(claims.POST as Handler, 'POST', {}, claim('more', { prefixLength: 30 }));
    expect(exhausted).toMatchObject({ status: 507, body: { error: { code: 'Exhausted' } } });
    const exists = await call(claims.POST as Handler, 'POST', {}, claim('all', { prefixLength: 29 }));
    expect(exists).toMatchObject({ status: 409, body: { error: { code: 'ClaimExists' } } });
    const badQuery = await call(claims.GET as Handler, 'GET', {}, undefined, '?limit=0');
    expect(badQuery).toMatchObject({ status: 400, body: { error: { code: 'ValidationFailed', field: 'limit' } } });
    const badContinue = await call(claims.GET as Handler, 'GET', {}, undefined, '?continue=garbage');
    expect(badContinue).toMatchObject({ status: 400, body: { error: { field: 'continue' } } });
    const [{ n }] = (await db.execute(sql`select count(*)::int as n from ip_claims where project_id = ${project.id}`)) as unknown as { n: number }[];
    expect(n).toBe(1);
  });

  test('unknown fields are refused by name, and a prefix length beyond its family is ValidationFailed on both families; nothing is allocated', async () => {
    const { call, db, project } = await client();
    const dual = { metadata: { name: 'vpc' }, spec: { cidrs: [{ cidr: '192.0.2.0/24' }, { cidr: '2001:db8::/48' }] } };
    expect((await call(networks.POST as Handler, 'POST', {}, dual)).status).toBe(201);
    const cases: [unknown, string, string, string][] = [
      // A misspelt field is not the default /28; a field of another API is not ignored.
      [claim('a', { prefixLenght: 24 }), 'ValidationFailed', 'spec.prefixLenght', 'unknown field "spec.prefixLenght"'],
      [claim('a', { ipFamily: 'IPv6' }), 'ValidationFailed', 'spec.ipFamily', 'unknown field "spec.ipFamily"'],
      [{ ...claim('a', {}), status: { phase: 'Bound' } }, 'ValidationFailed', 'status', 'unknown field "status"'],
      [{ metadata: { name: 'a', namespace: 'x' }, spec: { network: 'vpc' } }, 'ValidationFailed', 'metadata.namespace', 'unknown field "metadata.namespace"'],
      [claim('a', { ownerRef: { kind: 'Pod', name: 'p', uid: 'u' } }), 'ValidationFailed', 'spec.ownerRef.uid', 'unknown field "spec.ownerRef.uid"'],
      // The misspelling is named even when it leaves a required field missing.
      [{ metadata: { name: 'a' }, spec: { netwrok: 'vpc' } }, 'ValidationFailed', 'spec.netwrok', 'unknown field "spec.netwrok"'],
      [claim('a', { family: 'IPv4', prefixLength: 33 }), 'ValidationFailed', 'prefixLength', '/33 is not a valid IPv4 prefix length (0–32)'],
      [claim('a', { family: 'IPv6', prefixLength: 129 }), 'ValidationFailed', 'spec.prefixLength', 'spec.prefixLength: Too big: expected number to be <=128'],
      // A valid length the pools' rules refuse keeps its own code.
      [claim('a', { family: 'IPv4', prefixLength: 23 }), 'PrefixLengthRejected', 'prefixLength', "/23 is outside pool vpc-v4's rules (/24–/32)"],
    ];
    for (const [body, code, field, message] of cases) {
      const res = await call(claims.POST as Handler, 'POST', {}, body);
      expect(res, JSON.stringify(body)).toMatchObject({ status: 400, body: { error: { code, field, message } } });
    }
    const network = await call(
      networks.POST as Handler,
      'POST',
      {},
      { metadata: { name: 'n2' }, spec: { cidrs: [{ cidr: '198.51.100.0/24', maxPrefix: 28 }] } },
    );
    expect(network).toMatchObject({
      status: 400,
      body: { error: { code: 'ValidationFailed', field: 'spec.cidrs.0.maxPrefix', message: 'unknown field "spec.cidrs.0.maxPrefix"' } },
    });
    const [counts] = await db.execute(sql`select (select count(*) from ip_claims where project_id = ${project.id})::int as claims,
      (select count(*) from ip_allocations where project_id = ${project.id})::int as allocations, (select count(*) from networks where project_id = ${project.id})::int as networks`);
    expect(counts).toEqual({ claims: 0, allocations: 0, networks: 1 });
  });

  test('retained names answer 409 AllocationRetained naming the allocation', async () => {
    const { call } = await client();
    await call(networks.POST as Handler, 'POST', {}, network('vpc', '198.51.100.0/24'));
    const c = await call(claims.POST as Handler, 'POST', {}, claim('db', { prefixLength: 28, reclaimPolicy: 'Retain' }));
    await call(claimItem.DELETE as Handler, 'DELETE', { name: 'db' });
    const again = await call(claims.POST as Handler, 'POST', {}, claim('db', { prefixLength: 28 }));
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'AllocationRetained', details: { allocationId: c.body.status.allocationRef } });
  });

  test('discovery and OpenAPI list exactly the declared routes, with the query and body each route reads; no route file is left for Next', async () => {
    const groups = await (await discovery.GET()).json();
    expect(groups.groups.map((g: { name: string }) => g.name)).toEqual(expect.arrayContaining(['core', 'ipam.miloapis.com']));
    const declared = apiRoutes.map((r) => `${r.method} ${r.path}`).sort();
    expect(groups.groups.flatMap((g: { routes: string[] }) => g.routes).sort()).toEqual(declared);
    const doc = await (await openapi.GET()).json();
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(declared);
    for (const r of apiRoutes) {
      const op = doc.paths[r.path][r.method.toLowerCase()] as { parameters: { name: string; in: string }[]; requestBody?: unknown };
      const where = `${r.method} ${r.path}`;
      expect(
        op.parameters.filter((p) => p.in === 'query').map((p) => p.name),
        where,
      ).toEqual(Object.keys(r.query?.shape ?? {}));
      expect(op.requestBody !== undefined, where).toBe(r.body !== undefined);
    }

    // Every /api/v1 request is answered by the REST server before Next: a route file there would never run.
    expect(existsSync(path.join(process.cwd(), 'app/api/v1')), 'app/api/v1 holds no route files').toBe(false);
  });

  test('a disabled module is absent from discovery and OpenAPI', async () => {
    const restore = overrideEnv({ MERIDIAN_DISABLED_MODULES: 'ipam' });
    try {
      const groups = await (await discovery.GET()).json();
      expect(groups.groups.map((g: { name: string }) => g.name)).not.toContain('ipam.miloapis.com');
      const doc = await (await openapi.GET()).json();
      expect(Object.keys(doc.paths).some((p) => p.includes('ipclaims'))).toBe(false);
      const { call } = await client();
      expect((await call(claims.GET as Handler, 'GET', {})).status).toBe(404);
    } finally {
      restore();
    }
  });
});
