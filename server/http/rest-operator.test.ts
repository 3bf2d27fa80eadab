/**
 * The operator REST routes, called in-process with real tokens on real PostgreSQL: an operator
 * token administers quota (registrations, grants, policies, increase requests) and the fleet
 * (approval queue, capacity) for any project; project and cluster tokens are refused; bad bodies
 * are 400 with the field and change nothing.
 */
import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { locations, machineCapacity, machineClasses, machineProfiles, serviceAvailability } from '@/db/schema/fleet';
import { users } from '@/db/schema';
import { systemActor } from '@/server/audit/events';
import { createApiToken, createOperatorToken, revokeOperatorToken, verifyApiToken } from '@/server/tenancy/tokens';
import { createCaller } from '@/server/trpc/root';
import { testDb, uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { routeHandlers } from '@/test/rest';

const machineApprove = routeHandlers('/api/v1/projects/{project}/machines/{name}/approve');
const machineReject = routeHandlers('/api/v1/projects/{project}/machines/{name}/reject');
const machineRelease = routeHandlers('/api/v1/projects/{project}/machines/{name}/release');
const machines = routeHandlers('/api/v1/projects/{project}/machines');
const capacityQuarantine = routeHandlers('/api/v1/machinecapacities/{name}/quarantine');
const capacityRetire = routeHandlers('/api/v1/machinecapacities/{name}/retire');
const capacityReturn = routeHandlers('/api/v1/machinecapacities/{name}/return');
const capacities = routeHandlers('/api/v1/machinecapacities');
const machineRequests = routeHandlers('/api/v1/machinerequests');
const claimPolicies = routeHandlers('/api/v1/claimcreationpolicies');
const claimPolicyItem = routeHandlers('/api/v1/claimcreationpolicies/{name}');
const grantPolicies = routeHandlers('/api/v1/grantcreationpolicies');
const grantPolicyItem = routeHandlers('/api/v1/grantcreationpolicies/{name}');
const buckets = routeHandlers('/api/v1/projects/{project}/allowancebuckets');
const ipclaims = routeHandlers('/api/v1/projects/{project}/ipclaims');
const tenantIncreases = routeHandlers('/api/v1/projects/{project}/quotaincreaserequests');
const grants = routeHandlers('/api/v1/projects/{project}/resourcegrants');
const grantItem = routeHandlers('/api/v1/projects/{project}/resourcegrants/{name}');
const increaseApprove = routeHandlers('/api/v1/quotaincreaserequests/{name}/approve');
const increaseReject = routeHandlers('/api/v1/quotaincreaserequests/{name}/reject');
const increaseQueue = routeHandlers('/api/v1/quotaincreaserequests');
const registrations = routeHandlers('/api/v1/resourceregistrations');
const registrationItem = routeHandlers('/api/v1/resourceregistrations/{group}/{resource}');
const whoami = routeHandlers('/api/v1/whoami');
const openapi = routeHandlers('/api/v1/openapi.json');

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const actor = systemActor('test');
const IPCLAIMS = 'ipam.miloapis.com/ipclaims';

/** Calls a route handler as `token` (or anonymously) and returns status and parsed body. */
async function call(handler: unknown, token: string | null, method: string, params: Record<string, string> = {}, body?: unknown, query = '') {
  const res = await (handler as Handler)(
    new Request(`http://localhost/api/v1/x${query}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    { params: Promise.resolve(params) },
  );
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, text };
}

/** An operator (user + token) and a tenant project with an editor token. */
async function world() {
  const { db } = testDb();
  const { project } = await makeProject(db);
  const operator = await makeUser(db, { platformRoles: ['operator'] });
  const op = await createOperatorToken(db, { userId: operator.id, name: 'automation', createdBy: operator.id }, actor);
  const editor = await createApiToken(db, { projectId: project.id, name: 'tenant' }, actor);
  return { db, project, operator, op: op.secret, opId: op.id, tenant: editor.secret };
}

const bucket = (list: { body: { items: { spec: { resourceType: string }; status: { limit: number } }[] } }, type: string) =>
  list.body.items.find((b) => b.spec.resourceType === type)?.status.limit;

describe('operator tokens', () => {
  test('issued only for active operators, shown once and stored hashed, refused once revoked, demoted or disabled', async () => {
    const { db } = testDb();
    const tenant = await makeUser(db);
    await expect(createOperatorToken(db, { userId: tenant.id, name: 'x' }, actor)).rejects.toMatchObject({ code: 'ValidationFailed', field: 'user' });
    const admin = await makeUser(db, { platformRoles: ['admin'] });
    expect(await verifyApiToken(db, (await createOperatorToken(db, { userId: admin.id, name: 'admin-automation' }, actor)).secret)).toMatchObject({
      kind: 'operator',
      userId: admin.id,
    });

    const operator = await makeUser(db, { platformRoles: ['operator', 'qa'] });
    const token = await createOperatorToken(db, { userId: operator.id, name: 'ops' }, actor);
    const [stored] = (await db.execute(sql`select token_hash, project_id, kind from api_tokens where id = ${token.id}`)) as unknown as Record<
      string,
      unknown
    >[];
    expect(stored).toMatchObject({ project_id: null, kind: 'operator' });
    expect(JSON.stringify(stored)).not.toContain(token.secret);
    expect(await verifyApiToken(db, token.secret)).toEqual({
      kind: 'operator',
      tokenId: token.id,
      tokenName: 'ops',
      userId: operator.id,
      userEmail: operator.email,
      platformRoles: ['operator', 'qa'],
    });
    const who = await call(whoami.GET, token.secret, 'GET');
    expect(who.body).toMatchObject({ project: null, operator: operator.email, token: { kind: 'operator', name: 'ops' } });

    // Losing the role (qa stays) stops the token at once; getting it back restores it.
    await db
      .update(users)
      .set({ platformRoles: ['qa'] })
      .where(sql`id = ${operator.id}`);
    expect(await verifyApiToken(db, token.secret)).toBeUndefined();
    expect((await call(registrations.GET, token.secret, 'GET')).status).toBe(401);
    await db
      .update(users)
      .set({ platformRoles: ['operator'] })
      .where(sql`id = ${operator.id}`);
    expect((await call(registrations.GET, token.secret, 'GET')).status).toBe(200);
    await db
      .update(users)
      .set({ disabledAt: new Date() })
      .where(sql`id = ${operator.id}`);
    expect((await call(registrations.GET, token.secret, 'GET')).status).toBe(401);
    await db
      .update(users)
      .set({ disabledAt: null })
      .where(sql`id = ${operator.id}`);

    await revokeOperatorToken(db, token.id, actor);
    expect((await call(registrations.GET, token.secret, 'GET')).status).toBe(401);
    // The database refuses an operator token bound to a project (kind and scope are tied).
    const { project } = await makeProject(db);
    await expect(db.execute(sql`update api_tokens set project_id = ${project.id} where id = ${token.id}`)).rejects.toThrow();
  });

  test('the console issues them for the signed-in operator; every operator sees and may revoke them; project tokens are not theirs to revoke', async () => {
    const { db } = testDb();
    const alice = await makeUser(db, { platformRoles: ['operator'] });
    const bob = await makeUser(db, { platformRoles: ['operator'] });
    const asAlice = createCaller({ db, session: { user: alice } });
    const created = await asAlice.tokens.operator.create({ name: 'alice-bot' });
    expect(await verifyApiToken(db, created.secret)).toMatchObject({ kind: 'operator', userId: alice.id });
    const listed = await createCaller({ db, session: { user: bob } }).tokens.operator.list();
    const row = listed.find((t) => t.id === created.id)!;
    expect(row).toMatchObject({ name: 'alice-bot', user: alice.email, revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    await expect(asAlice.tokens.operator.create({ name: '  ' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });

    const { project } = await makeProject(db);
    const projectToken = await createApiToken(db, { projectId: project.id, name: 'p' }, actor);
    await expect(asAlice.tokens.operator.revoke({ id: projectToken.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await verifyApiToken(db, projectToken.secret)).toMatchObject({ kind: 'project' });
    await createCaller({ db, session: { user: bob } }).tokens.operator.revoke({ id: created.id });
    expect(await verifyApiToken(db, created.secret)).toBeUndefined();
  });

  test('an operator token acts on operator routes only: project routes refuse it', async () => {
    const w = await world();
    const created = await call(
      ipclaims.POST,
      w.op,
      'POST',
      { project: w.project.slug },
      { metadata: { name: 'c1' }, spec: { network: 'vpc', prefixLength: 28 } },
    );
    expect(created).toMatchObject({ status: 403, body: { error: { code: 'Forbidden' } } });
    expect((await call(tenantIncreases.GET, w.op, 'GET', { project: w.project.slug })).status).toBe(403);
    // Reads opened to operators work for any project, and a missing project is 404.
    expect((await call(grants.GET, w.op, 'GET', { project: w.project.slug })).status).toBe(200);
    expect((await call(grants.GET, w.op, 'GET', { project: 'no-such-project' })).status).toBe(404);
  });
});

describe('REST v1 operator routes: quota', () => {
  test("an operator registers a type and grants a project more; the tenant's buckets follow; the tenant token is refused", async () => {
    const w = await world();
    const p = { project: w.project.slug };
    const type = `${uniq('w')}.example.com/widgets`;
    const [group, resource] = type.split('/');

    // A project token may not write registrations or grants, and nothing changes.
    const refused = await call(
      registrations.POST,
      w.tenant,
      'POST',
      {},
      { spec: { resourceType: type, type: 'Entity', baseUnit: 'widgets', displayUnit: 'widgets', claimingKinds: ['Widget'] } },
    );
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'Forbidden' } } });
    expect(
      (await call(grants.POST, w.tenant, 'POST', p, { metadata: { name: 'more' }, spec: { allowances: [{ resourceType: IPCLAIMS, amount: 50 }] } })).status,
    ).toBe(403);
    expect((await call(registrationItem.GET, w.op, 'GET', { group, resource })).status).toBe(404);

    const reg = await call(
      registrations.POST,
      w.op,
      'POST',
      {},
      {
        kind: 'ResourceRegistration',
        metadata: { name: type },
        spec: {
          resourceType: type,
          type: 'Entity',
          description: 'widgets a project holds',
          baseUnit: 'widgets',
          displayUnit: 'widgets',
          claimingKinds: ['Widget'],
        },
      },
    );
    expect(reg).toMatchObject({
      status: 201,
      body: {
        kind: 'ResourceRegistration',
        metadata: { name: type },
        spec: { resourceType: type, claimingKinds: ['Widget'] },
        status: { conditions: [{ type: 'Active', status: 'True' }] },
      },
    });
    expect(
      (
        await call(
          registrations.POST,
          w.op,
          'POST',
          {},
          { spec: { resourceType: type, type: 'Entity', baseUnit: 'w', displayUnit: 'w', claimingKinds: ['Widget'] } },
        )
      ).status,
    ).toBe(409);
    const patched = await call(registrationItem.PATCH, w.op, 'PATCH', { group, resource }, { spec: { description: 'widgets, counted' } });
    expect(patched).toMatchObject({ status: 200, body: { spec: { description: 'widgets, counted', baseUnit: 'widgets' } } });
    expect((await call(registrations.GET, w.op, 'GET')).body.items.map((r: { metadata: { name: string } }) => r.metadata.name)).toContain(type);

    const grant = await call(grants.POST, w.op, 'POST', p, {
      metadata: { name: 'launch' },
      spec: {
        allowances: [
          { resourceType: IPCLAIMS, amount: 25 },
          { resourceType: type, amount: 7 },
        ],
      },
    });
    expect(grant).toMatchObject({
      status: 201,
      body: {
        kind: 'ResourceGrant',
        metadata: { name: 'launch' },
        spec: { consumerRef: { name: w.project.slug } },
        status: { source: 'Operator', conditions: [{ type: 'Active', status: 'True' }] },
      },
    });
    const tenantView = await call(buckets.GET, w.tenant, 'GET', p);
    expect(bucket(tenantView, IPCLAIMS)).toBe(125);
    expect(bucket(tenantView, type)).toBe(7);
    expect(bucket(await call(buckets.GET, w.op, 'GET', p), type)).toBe(7);
    expect((await call(grants.GET, w.tenant, 'GET', p)).body.items.map((g: { metadata: { name: string } }) => g.metadata.name)).toContain('launch');

    // Update the amount: the limit follows; the registration cannot go while the grant allows it.
    const updated = await call(grantItem.PUT, w.op, 'PUT', { ...p, name: 'launch' }, { spec: { allowances: [{ resourceType: type, amount: 3 }] } });
    expect(updated).toMatchObject({ status: 200, body: { spec: { allowances: [{ resourceType: type, amount: 3 }] } } });
    const after = await call(buckets.GET, w.tenant, 'GET', p);
    expect([bucket(after, IPCLAIMS), bucket(after, type)]).toEqual([100, 3]);
    expect((await call(registrationItem.DELETE, w.op, 'DELETE', { group, resource })).body.error).toMatchObject({ code: 'Conflict', field: 'resourceType' });
    expect((await call(grantItem.DELETE, w.op, 'DELETE', { ...p, name: 'launch' })).status).toBe(200);
    expect(bucket(await call(buckets.GET, w.tenant, 'GET', p), type)).toBe(0);
    expect((await call(grantItem.DELETE, w.op, 'DELETE', { ...p, name: 'launch' })).status).toBe(404);
    expect((await call(registrationItem.DELETE, w.op, 'DELETE', { group, resource })).status).toBe(200);

    // The audit log names the operator behind the token.
    const [event] = (await w.db.execute(
      sql`select actor_type, actor_id, actor_label from events where project_id = ${w.project.id} and action = 'quota.grant.create' and object_name = 'launch'`,
    )) as unknown as Record<string, string>[];
    expect(event).toMatchObject({ actor_type: 'token', actor_id: w.opId, actor_label: `${w.operator.email} (token:automation)` });
  });

  test('bad bodies and paths are 400 with the field, and change nothing', async () => {
    const w = await world();
    const p = { project: w.project.slug };
    const count = async () => {
      const [row] = (await w.db.execute(sql`select (select count(*) from resource_grants where project_id = ${w.project.id})::int as grants,
        (select count(*) from resource_registrations)::int as registrations, (select count(*) from events where project_id = ${w.project.id})::int as events`)) as unknown as Record<
        string,
        number
      >[];
      return row;
    };
    const before = await count();
    const cases: [unknown, string, Record<string, string>, unknown, string][] = [
      [
        registrations.POST,
        'POST',
        {},
        { spec: { resourceType: 'not a type', type: 'Entity', baseUnit: 'x', displayUnit: 'x', claimingKinds: ['X'] } },
        'spec.resourceType',
      ],
      [
        registrations.POST,
        'POST',
        {},
        {
          metadata: { name: 'a.example.com/x' },
          spec: { resourceType: 'b.example.com/x', type: 'Entity', baseUnit: 'x', displayUnit: 'x', claimingKinds: ['X'] },
        },
        'metadata.name',
      ],
      [
        registrations.POST,
        'POST',
        {},
        { spec: { resourceType: 'c.example.com/x', type: 'Gadget', baseUnit: 'x', displayUnit: 'x', claimingKinds: ['X'] } },
        'spec.type',
      ],
      [
        registrationItem.PATCH,
        'PATCH',
        { group: 'ipam.miloapis.com', resource: 'ipclaims' },
        { spec: { resourceType: 'ipam.miloapis.com/other' } },
        'spec.resourceType',
      ],
      [registrationItem.PATCH, 'PATCH', { group: 'ipam.miloapis.com', resource: 'ipclaims' }, { spec: { claimingKinds: [] } }, 'spec.claimingKinds'],
      [grants.POST, 'POST', p, { metadata: { name: 'g' }, spec: { allowances: [{ resourceType: IPCLAIMS, amount: -1 }] } }, 'spec.allowances.0.amount'],
      [grants.POST, 'POST', p, { metadata: { name: 'Bad Name' }, spec: { allowances: [{ resourceType: IPCLAIMS, amount: 1 }] } }, 'metadata.name'],
      [
        grants.POST,
        'POST',
        p,
        { metadata: { name: 'g' }, spec: { consumerRef: { name: 'someone-else' }, allowances: [{ resourceType: IPCLAIMS, amount: 1 }] } },
        'spec.consumerRef.name',
      ],
      [grants.POST, 'POST', p, { metadata: { name: 'g' }, spec: { allowances: [] } }, 'spec.allowances'],
      [
        grantItem.PUT,
        'PUT',
        { ...p, name: `default-${w.project.slug}` },
        { spec: { allowances: [{ resourceType: IPCLAIMS, amount: 1.5 }] } },
        'spec.allowances.0.amount',
      ],
      [
        grantItem.PUT,
        'PUT',
        { ...p, name: `default-${w.project.slug}` },
        { metadata: { name: 'other' }, spec: { allowances: [{ resourceType: IPCLAIMS, amount: 1 }] } },
        'metadata.name',
      ],
      [grantPolicies.POST, 'POST', {}, { metadata: { name: 'x' }, spec: { allowances: [{ resourceType: IPCLAIMS, amount: 1 }] } }, 'spec.grantNameTemplate'],
      [
        claimPolicies.POST,
        'POST',
        {},
        { metadata: { name: 'x' }, spec: { triggerKind: 'lowercase', claimNameTemplate: 'x', requests: [{ resourceType: IPCLAIMS, amount: 1 }] } },
        'spec.triggerKind',
      ],
      [increaseReject.POST, 'POST', { name: 'not-a-uuid' }, { reason: 'no' }, 'name'],
      [increaseApprove.POST, 'POST', { name: '00000000-0000-4000-8000-000000000000' }, { amount: 0 }, 'amount'],
      [capacityQuarantine.POST, 'POST', { name: 'dev-x' }, { reason: 7 }, 'reason'],
      [machineRelease.POST, 'POST', { ...p, name: 'm1' }, { force: true }, 'reason'],
    ];
    for (const [handler, method, params, body, field] of cases) {
      const r = await call(handler, w.op, method, params, body);
      expect(
        { status: r.status, code: r.body?.error?.code, field: r.body?.error?.field },
        `${method} ${JSON.stringify(params)} ${JSON.stringify(body)}`,
      ).toEqual({
        status: 400,
        code: 'ValidationFailed',
        field,
      });
    }
    const malformed = await (grants.POST as Handler)(
      new Request('http://localhost/x', { method: 'POST', headers: { authorization: `Bearer ${w.op}`, 'content-type': 'application/json' }, body: '{nope' }),
      { params: Promise.resolve(p) },
    );
    expect(malformed.status).toBe(400);
    expect(await count()).toEqual(before);
  });

  test('an operator works the increase queue: rejects with a reason the tenant reads, approves with a grant', async () => {
    const w = await world();
    const p = { project: w.project.slug };
    const asked = await call(tenantIncreases.POST, w.tenant, 'POST', p, { spec: { resourceType: IPCLAIMS, amount: 20, reason: 'launch week' } });
    expect(asked.status).toBe(201);
    const id = asked.body.metadata.name as string;
    expect((await call(increaseReject.POST, w.tenant, 'POST', { name: id }, { reason: 'no' })).status).toBe(403);

    const queue = await call(increaseQueue.GET, w.op, 'GET', {}, undefined, '?limit=200');
    expect(queue.status).toBe(200);
    expect(queue.body.items.find((q: { metadata: { name: string } }) => q.metadata.name === id)).toMatchObject({
      spec: { amount: 20, consumerRef: { name: w.project.slug } },
      status: { phase: 'Pending' },
    });

    const noReason = await call(increaseReject.POST, w.op, 'POST', { name: id }, { reason: '   ' });
    expect(noReason).toMatchObject({ status: 400, body: { error: { code: 'ValidationFailed', field: 'reason' } } });
    const rejected = await call(increaseReject.POST, w.op, 'POST', { name: id }, { reason: 'not this quarter' });
    expect(rejected).toMatchObject({
      status: 200,
      body: {
        kind: 'QuotaIncreaseRequest',
        status: { phase: 'Rejected', decisionReason: 'not this quarter', decidedBy: `${w.operator.email} (token:automation)` },
      },
    });
    expect((await call(tenantIncreases.GET, w.tenant, 'GET', p)).body.items[0].status).toMatchObject({ phase: 'Rejected', decisionReason: 'not this quarter' });
    expect((await call(increaseReject.POST, w.op, 'POST', { name: id }, { reason: 'again' })).status).toBe(409);
    expect((await call(increaseApprove.POST, w.op, 'POST', { name: id })).status).toBe(409);

    const second = await call(tenantIncreases.POST, w.tenant, 'POST', p, { spec: { resourceType: IPCLAIMS, amount: 20, reason: 'really' } });
    const approved = await call(increaseApprove.POST, w.op, 'POST', { name: second.body.metadata.name });
    expect(approved).toMatchObject({ status: 200, body: { status: { phase: 'Approved', approvedAmount: 20, grantRef: { kind: 'ResourceGrant' } } } });
    expect(bucket(await call(buckets.GET, w.tenant, 'GET', p), IPCLAIMS)).toBe(120);
    expect((await call(increaseApprove.POST, w.op, 'POST', { name: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
  });

  test("policies report Ready and the CEL compiler's message; updates recompile", async () => {
    const w = await world();
    const name = uniq('gp');
    // Disabled throughout: a Ready, enabled policy would give grants to projects other tests create.
    const bad = await call(
      grantPolicies.POST,
      w.op,
      'POST',
      {},
      {
        metadata: { name },
        spec: {
          constraints: [{ expression: 'trigger.metadata.name == ' }],
          grantNameTemplate: 'x-{{trigger.metadata.name}}',
          allowances: [{ resourceType: IPCLAIMS, amount: 1 }],
          enabled: false,
        },
      },
    );
    expect(bad).toMatchObject({
      status: 201,
      body: {
        kind: 'GrantCreationPolicy',
        metadata: { name, generation: 1 },
        status: { conditions: [{ type: 'Ready', status: 'False', reason: 'CompilationFailed' }] },
      },
    });
    expect(bad.body.status.conditions[0].message).toMatch(/^constraints\[0\]\.expression: /);
    expect(
      (
        await call(
          grantPolicies.POST,
          w.op,
          'POST',
          {},
          { metadata: { name }, spec: { grantNameTemplate: 'x', allowances: [{ resourceType: IPCLAIMS, amount: 1 }] } },
        )
      ).status,
    ).toBe(409);
    const fixed = await call(
      grantPolicyItem.PUT,
      w.op,
      'PUT',
      { name },
      { spec: { ...bad.body.spec, constraints: [{ expression: 'trigger.metadata.name != ""' }] } },
    );
    expect(fixed).toMatchObject({
      status: 200,
      body: { metadata: { generation: 2 }, spec: { enabled: false }, status: { conditions: [{ status: 'True', reason: 'Compiled' }] } },
    });
    expect((await call(grantPolicies.GET, w.op, 'GET')).body.items.some((i: { metadata: { name: string } }) => i.metadata.name === name)).toBe(true);
    expect((await call(grantPolicyItem.DELETE, w.op, 'DELETE', { name })).status).toBe(200);
    expect((await call(grantPolicyItem.DELETE, w.op, 'DELETE', { name })).status).toBe(404);

    const kind = `Gadget${Math.random().toString(36).slice(2, 8).replace(/[0-9]/g, 'x')}`;
    const claim = await call(
      claimPolicies.POST,
      w.op,
      'POST',
      {},
      {
        metadata: { name: `${name}-c` },
        spec: { triggerKind: kind, claimNameTemplate: 'g-{{requestInfo.name', requests: [{ resourceType: IPCLAIMS, amount: 1 }], enabled: false },
      },
    );
    expect(claim).toMatchObject({
      status: 201,
      body: { kind: 'ClaimCreationPolicy', spec: { triggerKind: kind }, status: { conditions: [{ type: 'Ready', status: 'False' }] } },
    });
    expect(claim.body.status.conditions[0].message).toMatch(/^claimNameTemplate: /);
    const claimFixed = await call(
      claimPolicyItem.PUT,
      w.op,
      'PUT',
      { name: `${name}-c` },
      { spec: { ...claim.body.spec, claimNameTemplate: 'g-{{requestInfo.name}}' } },
    );
    expect(claimFixed.body.status.conditions[0]).toMatchObject({ status: 'True' });
    expect((await call(claimPolicies.GET, w.tenant, 'GET')).status).toBe(403);
    expect((await call(claimPolicyItem.DELETE, w.op, 'DELETE', { name: `${name}-c` })).status).toBe(200);
  });
});

describe('REST v1 operator routes: fleet', () => {
  /** A private corner of the fleet: a usable location, an approval-only class, a profile, two machines of capacity. */
  async function fleetCorner() {
    const w = await world();
    const tag = uniq('op');
    const [loc] = await w.db.insert(locations).values({ name: tag, displayName: tag }).returning({ id: locations.id });
    await w.db.insert(serviceAvailability).values({ locationId: loc.id, service: 'machines', status: 'Available' });
    const [cls] = await w.db
      .insert(machineClasses)
      .values({ name: `${tag}.big`, cores: 64, memoryGib: 512, arch: 'x86_64', requiresApproval: true })
      .returning({ id: machineClasses.id });
    const digest = 'sha256:' + 'cd'.repeat(32);
    await w.db.insert(machineProfiles).values({ name: `${tag}-os`, imageRef: `example/os@${digest}`, imageDigest: digest });
    const devices = [`dev-${tag}-0`, `dev-${tag}-1`];
    for (const deviceRef of devices) await w.db.insert(machineCapacity).values({ deviceRef, classId: cls.id, locationId: loc.id });
    return { ...w, tag, devices, spec: { class: `${tag}.big`, profile: `${tag}-os`, location: tag } };
  }

  test('an operator approves a machine request from the queue and rejects another with a reason; tenants cannot', async () => {
    const f = await fleetCorner();
    const p = { project: f.project.slug };
    const requested = await call(machines.POST, f.tenant, 'POST', p, { metadata: { name: 'db-1' }, spec: f.spec });
    expect(requested).toMatchObject({ status: 201, body: { status: { phase: 'AwaitingApproval' } } });
    expect((await call(machines.POST, f.tenant, 'POST', p, { metadata: { name: 'db-2' }, spec: f.spec })).status).toBe(201);

    const queue = await call(machineRequests.GET, f.op, 'GET', {}, undefined, '?limit=200');
    const mine = queue.body.items.filter((m: { metadata: { project: string } }) => m.metadata.project === f.project.slug);
    expect(mine.map((m: { metadata: { name: string } }) => m.metadata.name)).toEqual(['db-1', 'db-2']);
    expect(mine[0]).toMatchObject({ kind: 'Machine', spec: { class: f.spec.class, location: f.tag }, status: { phase: 'AwaitingApproval', freeCapacity: 2 } });

    expect((await call(machineApprove.POST, f.tenant, 'POST', { ...p, name: 'db-1' })).status).toBe(403);
    const approved = await call(machineApprove.POST, f.op, 'POST', { ...p, name: 'db-1' });
    expect(approved).toMatchObject({ status: 200, body: { kind: 'Machine', metadata: { name: 'db-1' } } });
    expect(approved.body.status.phase).not.toBe('AwaitingApproval');
    const [row] = (await f.db.execute(sql`select approved_by from machines where project_id = ${f.project.id} and name = 'db-1'`)) as unknown as {
      approved_by: string;
    }[];
    expect(row.approved_by).toBe(f.operator.id);
    expect((await call(machineApprove.POST, f.op, 'POST', { ...p, name: 'db-1' })).body.error).toMatchObject({ code: 'InvalidTransition' });
    expect((await call(machineApprove.POST, f.op, 'POST', { ...p, name: 'nope' })).status).toBe(404);

    expect((await call(machineReject.POST, f.op, 'POST', { ...p, name: 'db-2' }, {})).body.error).toMatchObject({ code: 'ValidationFailed', field: 'reason' });
    const rejected = await call(machineReject.POST, f.op, 'POST', { ...p, name: 'db-2' }, { reason: 'class reserved for the launch' });
    expect(rejected.status).toBe(200);
    const [ev] = (await f.db.execute(
      sql`select reason, actor_label from events where project_id = ${f.project.id} and action = 'machine.request.rejected'`,
    )) as unknown as Record<string, string>[];
    expect(ev).toEqual({ reason: 'class reserved for the launch', actor_label: `${f.operator.email} (token:automation)` });

    // Release through the operator route is the tenant's release: deletion requested, 202.
    const released = await call(machineRelease.POST, f.op, 'POST', { ...p, name: 'db-1' }, { reason: 'capacity review' });
    expect(released.status).toBe(202);
    const [del] = (await f.db.execute(
      sql`select deletion_requested_at is not null as requested from machines where project_id = ${f.project.id} and name = 'db-1'`,
    )) as unknown as { requested: boolean }[];
    expect(del.requested).toBe(true);
  });

  test('an operator quarantines, returns and retires capacity where the state allows it', async () => {
    const f = await fleetCorner();
    const [dev] = f.devices;
    const listed = await call(capacities.GET, f.op, 'GET', {}, undefined, `?location=${f.tag}`);
    expect(listed.body.items.map((c: { metadata: { name: string } }) => c.metadata.name)).toEqual(f.devices);
    expect(listed.body.items[0]).toMatchObject({ kind: 'MachineCapacity', spec: { location: f.tag }, status: { state: 'Available', boundTo: null } });

    expect((await call(capacityQuarantine.POST, f.tenant, 'POST', { name: dev }, { reason: 'x' })).status).toBe(403);
    const q = await call(capacityQuarantine.POST, f.op, 'POST', { name: dev }, { reason: 'fan noise' });
    expect(q).toMatchObject({ status: 200, body: { metadata: { name: dev }, status: { state: 'Quarantined', reason: 'fan noise' } } });
    expect((await call(capacityQuarantine.POST, f.op, 'POST', { name: dev }, {})).body.error).toMatchObject({ code: 'InvalidTransition' });
    // A return re-runs the cleanup through the provider: accepted, Cleaning until it is verified.
    const back = await call(capacityReturn.POST, f.op, 'POST', { name: dev }, { reason: 'fan replaced' });
    expect(back).toMatchObject({ status: 202, body: { status: { state: 'Cleaning', reason: expect.stringContaining('returning to the pool') } } });
    expect((await call(capacityReturn.POST, f.op, 'POST', { name: dev })).status).toBe(409);
    // A forced return needs a reason (400 naming it, nothing changed), then skips the provider.
    const other = f.devices[1];
    await call(capacityQuarantine.POST, f.op, 'POST', { name: other }, { reason: 'fan noise' });
    const unreasoned = await call(capacityReturn.POST, f.op, 'POST', { name: other }, { force: true });
    expect(unreasoned).toMatchObject({ status: 400, body: { error: { code: 'ValidationFailed', field: 'reason' } } });
    expect(
      (await call(capacities.GET, f.op, 'GET', {}, undefined, `?location=${f.tag}&state=Quarantined`)).body.items.map(
        (c: { metadata: { name: string } }) => c.metadata.name,
      ),
    ).toEqual([other]);
    expect(await call(capacityReturn.POST, f.op, 'POST', { name: other }, { force: true, reason: 'inspected on site' })).toMatchObject({
      status: 200,
      body: { status: { state: 'Available', reason: null } },
    });
    expect((await call(capacityRetire.POST, f.op, 'POST', { name: other }, { reason: 'end of life' })).body.status).toMatchObject({ state: 'Retired' });
    expect((await call(capacityReturn.POST, f.op, 'POST', { name: other })).status).toBe(409);
    expect((await call(capacityRetire.POST, f.op, 'POST', { name: 'no-such-device' })).status).toBe(404);
    expect(
      (await call(capacities.GET, f.op, 'GET', {}, undefined, `?location=${f.tag}&state=Retired`)).body.items.map(
        (c: { metadata: { name: string } }) => c.metadata.name,
      ),
    ).toEqual([other]);
  });

  test('OpenAPI marks operator routes', async () => {
    const doc = await (await openapi.GET()).json();
    expect(doc.paths['/api/v1/projects/{project}/machines/{name}/approve'].post).toMatchObject({ 'x-meridian-token': 'operator' });
    expect(doc.paths['/api/v1/projects/{project}/resourcegrants'].get).toMatchObject({ 'x-meridian-token': 'project:viewer+operator' });
  });
});
