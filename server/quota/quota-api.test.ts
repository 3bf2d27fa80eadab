import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createNetwork } from '@/server/ipam/networks';
import type { SessionUser } from '@/server/tenancy/roles';
import { createApiToken } from '@/server/tenancy/tokens';
import { createCaller } from '@/server/trpc/root';
import { testDb } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { overrideEnv } from '@/server/env';
import { routeHandlers } from '@/test/rest';

const buckets = routeHandlers('/api/v1/projects/{project}/allowancebuckets');
const ipclaims = routeHandlers('/api/v1/projects/{project}/ipclaims');
const increases = routeHandlers('/api/v1/projects/{project}/quotaincreaserequests');
const claims = routeHandlers('/api/v1/projects/{project}/resourceclaims');
const grants = routeHandlers('/api/v1/projects/{project}/resourcegrants');
const discovery = routeHandlers('/api/v1');
const openapi = routeHandlers('/api/v1/openapi.json');

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const actor = systemActor('test');
const IPCLAIMS = 'ipam.miloapis.com/ipclaims';

async function client(role: 'editor' | 'viewer' = 'editor') {
  const { db } = testDb();
  const { project } = await makeProject(db);
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '198.51.100.0/24' }] }, actor);
  const token = await createApiToken(db, { projectId: project.id, name: 'rest', role }, actor);
  const call = async (handler: Handler, method: string, body?: unknown, query = '') => {
    const res = await handler(
      new Request(`http://localhost/api/v1/x${query}`, {
        method,
        headers: { authorization: `Bearer ${token.secret}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
      { params: Promise.resolve({ project: project.slug }) },
    );
    return { status: res.status, body: await res.json() };
  };
  return { db, project, call };
}

describe('REST v1 quota', () => {
  test('a tenant creating one IP claim sees limit 100, allocated 1, available 99, and the claim in the log', async () => {
    const { call } = await client();
    expect((await call(ipclaims.POST as Handler, 'POST', { metadata: { name: 'web' }, spec: { network: 'vpc', prefixLength: 28 } })).status).toBe(201);
    const list = await call(buckets.GET as Handler, 'GET');
    expect(list.status).toBe(200);
    expect(list.body.items.find((b: { spec: { resourceType: string } }) => b.spec.resourceType === IPCLAIMS)).toMatchObject({
      kind: 'AllowanceBucket',
      status: { limit: 100, allocated: 1, available: 99, flag: 'Ok' },
    });
    const log = await call(claims.GET as Handler, 'GET', undefined, '?limit=10');
    expect(log.body.items[0]).toMatchObject({
      kind: 'ResourceClaim',
      metadata: { name: 'ipclaim-web' },
      spec: { requests: [{ resourceType: IPCLAIMS, amount: 1 }], resourceRef: { kind: 'IPClaim', name: 'web' } },
      status: { phase: 'Granted', conditions: [{ type: 'Granted', status: 'True', reason: 'QuotaAvailable' }] },
    });
    const g = await call(grants.GET as Handler, 'GET');
    expect(g.body.items[0]).toMatchObject({ kind: 'ResourceGrant', status: { conditions: [{ type: 'Active', status: 'True' }] } });
  });

  test('a denied IP claim is 403 QuotaExceeded with requested/available/limit, and is in the log; increase requests round-trip', async () => {
    const { db, project, call } = await client();
    const operator = await makeUser(db, { platformRoles: ['operator'] });
    const op = createCaller({ db, session: { user: operator } });
    await op.quota.admin.grants.update({ project: project.slug, name: `default-${project.slug}`, allowances: [{ resourceType: IPCLAIMS, amount: 0 }] });
    const denied = await call(ipclaims.POST as Handler, 'POST', { metadata: { name: 'web' }, spec: { network: 'vpc', prefixLength: 28 } });
    expect(denied).toMatchObject({
      status: 403,
      body: {
        error: {
          code: 'QuotaExceeded',
          message: 'requested 1 ipam.miloapis.com/ipclaims, available 0, limit 0',
          details: { requested: 1, available: 0, limit: 0 },
        },
      },
    });
    const log = await call(claims.GET as Handler, 'GET', undefined, '?status=Denied');
    expect(log.body.items[0].status).toMatchObject({
      phase: 'Denied',
      conditions: [{ status: 'False', reason: 'QuotaExceeded', message: 'requested 1 ipam.miloapis.com/ipclaims, available 0, limit 0' }],
    });

    const bad = await call(increases.POST as Handler, 'POST', { spec: { resourceType: IPCLAIMS, amount: 0, reason: 'x' } });
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'ValidationFailed' } } });
    const created = await call(increases.POST as Handler, 'POST', {
      kind: 'QuotaIncreaseRequest',
      spec: { resourceType: IPCLAIMS, amount: 5, reason: 'launch week' },
    });
    expect(created).toMatchObject({ status: 201, body: { kind: 'QuotaIncreaseRequest', status: { phase: 'Pending' } } });
    expect((await call(increases.POST as Handler, 'POST', { spec: { resourceType: IPCLAIMS, amount: 5, reason: 'again!' } })).status).toBe(409);
    await op.quota.admin.increases.approve({ id: created.body.metadata.name });
    const listed = await call(increases.GET as Handler, 'GET');
    expect(listed.body.items[0].status).toMatchObject({ phase: 'Approved', approvedAmount: 5, grantRef: { kind: 'ResourceGrant' } });
    expect((await call(ipclaims.POST as Handler, 'POST', { metadata: { name: 'web' }, spec: { network: 'vpc', prefixLength: 28 } })).status).toBe(201);
  });

  test('read-only tokens read but cannot request increases; the group is discoverable and in OpenAPI', async () => {
    const { call } = await client('viewer');
    expect((await call(buckets.GET as Handler, 'GET')).status).toBe(200);
    expect((await call(increases.POST as Handler, 'POST', { spec: { resourceType: IPCLAIMS, amount: 5, reason: 'more' } })).status).toBe(403);
    const groups = await (await discovery.GET()).json();
    expect(groups.groups.map((g: { name: string }) => g.name)).toContain('quota.miloapis.com');
    const doc = await (await openapi.GET()).json();
    expect(doc.paths['/api/v1/projects/{project}/allowancebuckets']?.get).toBeDefined();
    const restore = overrideEnv({ MERIDIAN_DISABLED_MODULES: 'quota' });
    try {
      expect((await call(buckets.GET as Handler, 'GET')).status).toBe(404);
      const off = await (await openapi.GET()).json();
      expect(Object.keys(off.paths).some((p) => p.includes('allowancebuckets'))).toBe(false);
    } finally {
      restore();
    }
  });
});

describe('tRPC quota', () => {
  const caller = (user: SessionUser) => createCaller({ db: testDb().db, session: { user } });

  test('tenants read their buckets and log and ask for more; operator procedures need the operator role', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const owner = await makeUser(db, { projectId: project.id, role: 'owner' });
    const viewer = await makeUser(db, { projectId: project.id, role: 'viewer' });
    const stranger = await makeUser(db);
    const operator = await makeUser(db, { platformRoles: ['operator'] });

    expect((await caller(viewer).quota.buckets.list({ project: project.slug })).map((b) => b.resourceType)).toEqual([IPCLAIMS, 'metal.datumapis.com/machines']);
    await expect(caller(stranger).quota.buckets.list({ project: project.slug })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(caller(viewer).quota.increases.create({ project: project.slug, resourceType: IPCLAIMS, amount: 5, reason: 'more' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    const req = await caller(owner).quota.increases.create({ project: project.slug, resourceType: IPCLAIMS, amount: 5, reason: 'more' });
    await expect(caller(owner).quota.admin.increases.approve({ id: req.id })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(caller(owner).quota.admin.registrations.list()).rejects.toMatchObject({ code: 'FORBIDDEN' });

    const queue = await caller(operator).quota.admin.increases.queue({ status: 'Pending', limit: 200 });
    expect(queue.items.some((q) => q.id === req.id)).toBe(true);
    await expect(caller(operator).quota.admin.increases.reject({ id: req.id, reason: '' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await caller(operator).quota.admin.increases.reject({ id: req.id, reason: 'not this quarter' });
    expect((await caller(viewer).quota.increases.list({ project: project.slug })).items[0]).toMatchObject({
      status: 'Rejected',
      decisionReason: 'not this quarter',
    });

    // Policies come back with their Ready condition and the compiler's message.
    const p = await caller(operator).quota.admin.policies.grant.create({
      name: `${project.slug}-bad`,
      constraints: [{ expression: 'trigger.metadata.name == ' }],
      grantNameTemplate: 'x',
      allowances: [{ resourceType: IPCLAIMS, amount: 1 }],
    });
    expect(p).toMatchObject({ ready: false, readyReason: 'CompilationFailed' });
    expect(p.readyMessage).toMatch(/^constraints\[0\]\.expression: /);
    await caller(operator).quota.admin.policies.grant.delete({ name: `${project.slug}-bad` });
    await expect(
      caller(operator).quota.admin.policies.claim.create({
        name: `${project.slug}-dup`,
        triggerKind: 'IPClaim',
        claimNameTemplate: 'x-{{requestInfo.name}}',
        requests: [{ resourceType: IPCLAIMS, amount: 1 }],
      }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });

    const audit = await caller(operator).quota.admin.audit.run();
    expect(audit.bucketsChecked).toBeGreaterThan(0);
    expect((await caller(operator).quota.admin.audit.last())?.at).toBe(audit.at);
  });
});

describe('tRPC registration updates', () => {
  test('an update changes only the fields it names', async () => {
    const { db } = testDb();
    const operator = await makeUser(db, { platformRoles: ['operator'] });
    const op = createCaller({ db, session: { user: operator } });
    const type = `test.example.com/gadgets-${Math.random().toString(36).slice(2, 8)}`;
    await op.quota.admin.registrations.create({
      resourceType: type,
      type: 'Allocation',
      baseUnit: 'bytes',
      displayUnit: 'GiB',
      unitConversionFactor: 1073741824,
      claimingKinds: ['Gadget'],
      description: 'storage',
    });
    const updated = await op.quota.admin.registrations.update({ resourceType: type, claimingKinds: ['Gadget', 'Widget'] });
    expect(updated).toMatchObject({
      claimingKinds: ['Gadget', 'Widget'],
      description: 'storage',
      unitConversionFactor: 1073741824,
      displayUnit: 'GiB',
      type: 'Allocation',
    });
    await op.quota.admin.registrations.delete({ resourceType: type });
  });
});
