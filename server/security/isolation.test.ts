/**
 * Tenant isolation, enumerated from the routers themselves: every tRPC procedure and every REST
 * route is called as someone who must be refused — signed out, a member of another project, a
 * viewer where an editor is needed, a tenant on staff procedures, a revoked token, another
 * project's token, a cluster token outside its cluster. Each must be refused with no data, and
 * nothing may change. A procedure or route without a case here fails the test.
 */
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { TRPCError } from '@trpc/server';
import { beforeAll, describe, expect, test } from 'vitest';
import { apiRoutes } from '@/server/api/catalog';
import { systemActor } from '@/server/audit/events';
import { createCluster } from '@/server/cni/clusters';
import { createClaim } from '@/server/ipam/claims';
import { createNetwork } from '@/server/ipam/networks';
import type { PlatformRole, SessionUser } from '@/server/tenancy/roles';
import { createApiToken, revokeApiToken } from '@/server/tenancy/tokens';
import { createCaller, appRouter } from '@/server/trpc/root';
import { testDb } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';

const actor = systemActor('test');

interface World {
  slug: string;
  projectId: string;
  owner: SessionUser;
  viewer: SessionUser;
  stranger: SessionUser;
  tokens: { editor: string; viewer: string; revoked: string; foreign: string; otherCluster: string };
}

type Case =
  | { access: 'public' }
  | { access: 'authed'; input?: (w: World) => unknown }
  | { access: 'project'; minRole: 'viewer' | 'editor' | 'owner'; input: (w: World) => Record<string, unknown> }
  | { access: 'platform'; roles: PlatformRole[]; input: (w: World) => unknown };

const p = (extra: Record<string, unknown> = {}) => (w: World) => ({ project: w.slug, ...extra });
const uuid = '00000000-0000-4000-8000-000000000000';

/** One entry per tRPC procedure. Adding a procedure without adding it here fails the test. */
export const procedureCases: Record<string, Case> = {
  'me.get': { access: 'public' },
  'projects.list': { access: 'authed' },
  'projects.get': { access: 'project', minRole: 'viewer', input: p() },
  'tokens.list': { access: 'project', minRole: 'viewer', input: p() },
  'tokens.create': { access: 'project', minRole: 'owner', input: p({ name: 'x' }) },
  'tokens.revoke': { access: 'project', minRole: 'owner', input: p({ id: uuid }) },
  'audit.list': { access: 'platform', roles: ['operator', 'admin'], input: () => ({ limit: 5 }) },
  'audit.project': { access: 'project', minRole: 'viewer', input: p({ limit: 5 }) },
  'ipam.networks.list': { access: 'project', minRole: 'viewer', input: p() },
  'ipam.networks.get': { access: 'project', minRole: 'viewer', input: p({ name: 'vpc' }) },
  'ipam.networks.create': { access: 'project', minRole: 'editor', input: p({ name: 'n2', cidrs: [{ cidr: '203.0.113.0/24' }] }) },
  'ipam.networks.delete': { access: 'project', minRole: 'editor', input: p({ name: 'vpc' }) },
  'ipam.networks.map': { access: 'project', minRole: 'viewer', input: p({ network: 'vpc' }) },
  'ipam.pools.create': { access: 'project', minRole: 'editor', input: p({ network: 'vpc', parent: 'vpc-v4', name: 'child', prefixLength: 26 }) },
  'ipam.claims.list': { access: 'project', minRole: 'viewer', input: p() },
  'ipam.claims.get': { access: 'project', minRole: 'viewer', input: p({ name: 'c1' }) },
  'ipam.claims.preview': { access: 'project', minRole: 'editor', input: p({ name: 'c2', network: 'vpc', prefixLength: 28 }) },
  'ipam.claims.create': { access: 'project', minRole: 'editor', input: p({ name: 'c2', network: 'vpc', prefixLength: 28 }) },
  'ipam.claims.delete': { access: 'project', minRole: 'editor', input: p({ name: 'c1' }) },
  'ipam.admin.pools': { access: 'platform', roles: ['operator'], input: () => ({}) },
  'ipam.admin.retained': { access: 'platform', roles: ['operator'], input: () => ({}) },
  'ipam.admin.releaseRetained': { access: 'platform', roles: ['operator'], input: () => ({ allocationId: uuid }) },
  'cni.clusters.list': { access: 'project', minRole: 'viewer', input: p() },
  'cni.clusters.create': { access: 'project', minRole: 'editor', input: p({ name: 'k2', network: 'vpc' }) },
  'cni.clusters.delete': { access: 'project', minRole: 'editor', input: p({ name: 'k1' }) },
  'cni.leases.list': { access: 'project', minRole: 'viewer', input: p() },
  'cni.usage': { access: 'project', minRole: 'viewer', input: p() },
  'cni.events': { access: 'project', minRole: 'viewer', input: p() },
  'cni.admin.clusters': { access: 'platform', roles: ['operator'], input: () => ({}) },
  'fleet.catalogue': { access: 'authed' },
  'fleet.machines.list': { access: 'project', minRole: 'viewer', input: p() },
  'fleet.machines.get': { access: 'project', minRole: 'viewer', input: p({ name: 'm1' }) },
  'fleet.machines.create': { access: 'project', minRole: 'editor', input: p({ name: 'm2', class: 'c1.small', profile: 'ubuntu-24.04', location: 'ams1' }) },
  'fleet.machines.delete': { access: 'project', minRole: 'editor', input: p({ name: 'm1' }) },
  'fleet.queue.list': { access: 'platform', roles: ['operator'], input: () => ({}) },
  'fleet.queue.approve': { access: 'platform', roles: ['operator'], input: () => ({ id: uuid }) },
  'fleet.queue.approveMany': { access: 'platform', roles: ['operator'], input: () => ({ ids: [uuid] }) },
  'fleet.queue.reject': { access: 'platform', roles: ['operator'], input: () => ({ id: uuid, reason: 'no' }) },
  'fleet.inventory': { access: 'platform', roles: ['operator'], input: () => undefined },
  'fleet.capacity.list': { access: 'platform', roles: ['operator'], input: () => ({}) },
  'fleet.capacity.act': { access: 'platform', roles: ['operator'], input: () => ({ id: uuid, action: 'quarantine', reason: 'x' }) },
  'fleet.allocations.list': { access: 'platform', roles: ['operator'], input: () => ({}) },
  'fleet.allocations.release': { access: 'platform', roles: ['operator'], input: () => ({ machineId: uuid }) },
  'fleet.allocations.forceRelease': { access: 'platform', roles: ['operator'], input: () => ({ machineId: uuid, reason: 'x' }) },
  'fleet.operations': { access: 'platform', roles: ['operator'], input: () => ({}) },
  'simulator.status': { access: 'platform', roles: ['qa'], input: () => undefined },
  'simulator.assets': { access: 'platform', roles: ['qa'], input: () => ({}) },
  'simulator.operations': { access: 'platform', roles: ['qa'], input: () => ({ limit: 5 }) },
  'simulator.log': { access: 'platform', roles: ['qa'], input: () => ({ afterSeq: 0 }) },
  'simulator.setFaults': { access: 'platform', roles: ['qa'], input: () => ({ loseResponses: 1 }) },
  'simulator.clearFaults': { access: 'platform', roles: ['qa'], input: () => undefined },
  'simulator.restart': { access: 'platform', roles: ['qa'], input: () => undefined },
  'quota.resourceTypes': { access: 'authed' },
  'quota.buckets.list': { access: 'project', minRole: 'viewer', input: p() },
  'quota.claims.list': { access: 'project', minRole: 'viewer', input: p() },
  'quota.grants.list': { access: 'project', minRole: 'viewer', input: p() },
  'quota.increases.create': { access: 'project', minRole: 'editor', input: p({ resourceType: 'ipam.miloapis.com/ipclaims', amount: 5, reason: 'more please' }) },
  'quota.increases.list': { access: 'project', minRole: 'viewer', input: p() },
  'quota.admin.registrations.list': { access: 'platform', roles: ['operator'], input: () => undefined },
  'quota.admin.registrations.create': { access: 'platform', roles: ['operator'], input: () => ({ resourceType: 'test.example.com/things', type: 'Entity', baseUnit: 'things', displayUnit: 'things', claimingKinds: ['Thing'] }) },
  'quota.admin.registrations.update': { access: 'platform', roles: ['operator'], input: () => ({ resourceType: 'ipam.miloapis.com/ipclaims', description: 'x' }) },
  'quota.admin.registrations.delete': { access: 'platform', roles: ['operator'], input: () => ({ resourceType: 'ipam.miloapis.com/ipclaims' }) },
  'quota.admin.grants.list': { access: 'platform', roles: ['operator'], input: () => ({}) },
  'quota.admin.grants.create': { access: 'platform', roles: ['operator'], input: (w) => ({ project: w.slug, name: 'g2', allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }] }) },
  'quota.admin.grants.update': { access: 'platform', roles: ['operator'], input: (w) => ({ project: w.slug, name: `default-${w.slug}`, allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 0 }] }) },
  'quota.admin.grants.delete': { access: 'platform', roles: ['operator'], input: (w) => ({ project: w.slug, name: `default-${w.slug}` }) },
  'quota.admin.buckets.list': { access: 'platform', roles: ['operator'], input: () => ({}) },
  'quota.admin.policies.grant.list': { access: 'platform', roles: ['operator'], input: () => undefined },
  'quota.admin.policies.grant.create': { access: 'platform', roles: ['operator'], input: () => ({ name: 'gp', grantNameTemplate: 'x', allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }] }) },
  'quota.admin.policies.grant.update': { access: 'platform', roles: ['operator'], input: () => ({ name: 'default-project-quota', grantNameTemplate: 'x', allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }] }) },
  'quota.admin.policies.grant.delete': { access: 'platform', roles: ['operator'], input: () => ({ name: 'default-project-quota' }) },
  'quota.admin.policies.claim.list': { access: 'platform', roles: ['operator'], input: () => undefined },
  'quota.admin.policies.claim.create': { access: 'platform', roles: ['operator'], input: () => ({ name: 'cp', triggerKind: 'Thing', claimNameTemplate: 'x', requests: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }] }) },
  'quota.admin.policies.claim.update': { access: 'platform', roles: ['operator'], input: () => ({ name: 'ipclaims', triggerKind: 'IPClaim', claimNameTemplate: 'x', requests: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }] }) },
  'quota.admin.policies.claim.delete': { access: 'platform', roles: ['operator'], input: () => ({ name: 'ipclaims' }) },
  'quota.admin.increases.queue': { access: 'platform', roles: ['operator'], input: () => ({}) },
  'quota.admin.increases.approve': { access: 'platform', roles: ['operator'], input: () => ({ id: uuid }) },
  'quota.admin.increases.reject': { access: 'platform', roles: ['operator'], input: () => ({ id: uuid, reason: 'no' }) },
  'quota.admin.audit.last': { access: 'platform', roles: ['operator'], input: () => undefined },
  'quota.admin.audit.run': { access: 'platform', roles: ['operator'], input: () => undefined },
};

/** Sample path parameters and bodies for REST routes, so a refusal is never a validation error. */
function restParams(route: string, w: World): Record<string, string> {
  const params: Record<string, string> = {};
  if (route.includes('{project}')) params.project = w.slug;
  if (route.includes('{cluster}')) params.cluster = 'k1';
  if (route.includes('{command}')) params.command = route.endsWith('}') ? 'add' : 'add';
  if (route.includes('/networks/{name}')) params.name = 'vpc';
  if (route.includes('/ipclaims/{name}')) params.name = 'c1';
  if (route.includes('/machines/{name}')) params.name = 'm1';
  return params;
}
const restBodies: Record<string, unknown> = {
  '/api/v1/projects/{project}/networks': { metadata: { name: 'n2' }, spec: { cidrs: [{ cidr: '203.0.113.0/24' }] } },
  '/api/v1/projects/{project}/ipclaims': { metadata: { name: 'c2' }, spec: { network: 'vpc', prefixLength: 28 } },
  '/api/v1/projects/{project}/clusters': { name: 'k2', network: 'vpc' },
  '/api/v1/projects/{project}/machines': { metadata: { name: 'm2' }, spec: { class: 'c1.small', profile: 'ubuntu-24.04', location: 'ams1' } },
  '/api/v1/projects/{project}/clusters/{cluster}/cni/{command}': { cniNetwork: 'n', containerId: 'c', ifname: 'eth0', node: 'n1' },
  '/api/v1/projects/{project}/quotaincreaserequests': { spec: { resourceType: 'ipam.miloapis.com/ipclaims', amount: 5, reason: 'more please' } },
};

let world: World;

/** Counts of every tenant table for the victim project: "nothing changed" means these are equal. */
async function snapshot(projectId: string) {
  const { db } = testDb();
  const [row] = (await db.execute(sql`
    select (select count(*) from networks where project_id = ${projectId})::int as networks,
           (select count(*) from ip_pools where project_id = ${projectId})::int as pools,
           (select count(*) from ip_claims where project_id = ${projectId})::int as claims,
           (select count(*) from ip_allocations where project_id = ${projectId})::int as allocations,
           (select count(*) from clusters where project_id = ${projectId})::int as clusters,
           (select count(*) from pod_leases where project_id = ${projectId})::int as leases,
           (select count(*) from machines where project_id = ${projectId})::int as machines,
           (select count(*) from api_tokens where project_id = ${projectId} and revoked_at is null)::int as tokens,
           (select count(*) from events where project_id = ${projectId})::int as events`)) as unknown as Record<string, number>[];
  return row;
}

beforeAll(async () => {
  const { db } = testDb();
  const victim = await makeProject(db);
  const other = await makeProject(db);
  await createNetwork(db, victim.project.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24' }] }, actor);
  await createClaim(db, victim.project.id, { name: 'c1', network: 'vpc', prefixLength: 28, reclaimPolicy: 'Delete' }, actor);
  await createCluster(db, victim.project.id, { name: 'k1', network: 'vpc' }, actor);
  const owner = await makeUser(db, { projectId: victim.project.id, role: 'owner' });
  const viewer = await makeUser(db, { projectId: victim.project.id, role: 'viewer' });
  const stranger = await makeUser(db, { projectId: other.project.id, role: 'owner' });
  const tok = (projectId: string, extra: { role?: 'viewer' | 'editor'; clusterName?: string } = {}) => createApiToken(db, { projectId, name: 't', ...extra }, actor);
  const revoked = await tok(victim.project.id);
  await revokeApiToken(db, victim.project.id, revoked.id, actor);
  world = {
    slug: victim.project.slug,
    projectId: victim.project.id,
    owner,
    viewer,
    stranger,
    tokens: {
      editor: (await tok(victim.project.id)).secret,
      viewer: (await tok(victim.project.id, { role: 'viewer' })).secret,
      revoked: revoked.secret,
      foreign: (await tok(other.project.id)).secret,
      otherCluster: (await tok(victim.project.id, { clusterName: 'k9' })).secret,
    },
  };
});

async function callProcedure(user: SessionUser | null, name: string, input: unknown) {
  const caller = createCaller({ db: testDb().db, session: user ? { user } : null }) as unknown as Record<string, unknown>;
  const fn = name.split('.').reduce<unknown>((acc, k) => (acc as Record<string, unknown>)[k], caller) as (i: unknown) => Promise<unknown>;
  try {
    return { ok: true as const, data: await fn(input) };
  } catch (e) {
    return { ok: false as const, error: e as TRPCError };
  }
}

describe('tRPC isolation', () => {
  const procedures = Object.keys((appRouter as unknown as { _def: { procedures: Record<string, unknown> } })._def.procedures);

  test('every procedure has an isolation case', () => {
    const missing = procedures.filter((name) => !(name in procedureCases));
    expect(missing, 'add these to procedureCases in server/security/isolation.test.ts').toEqual([]);
  });

  test.each(procedures)('%s refuses whoever must be refused and changes nothing', async (name) => {
    const c = procedureCases[name];
    if (!c) return;
    const before = await snapshot(world.projectId);
    if (c.access === 'public') {
      const r = await callProcedure(null, name, undefined);
      expect(r.ok).toBe(true);
    } else if (c.access === 'authed') {
      const out = await callProcedure(null, name, c.input?.(world));
      expect(out.ok ? 'answered' : out.error.code).toBe('UNAUTHORIZED');
      const r = await callProcedure(world.stranger, name, c.input?.(world));
      expect(JSON.stringify(r)).not.toContain(world.slug);
    } else if (c.access === 'project') {
      const input = c.input(world);
      const out = await callProcedure(null, name, input);
      expect(out.ok ? 'answered' : out.error.code).toBe('UNAUTHORIZED');
      const foreign = await callProcedure(world.stranger, name, input);
      expect(foreign.ok ? 'answered' : foreign.error.code).toBe('NOT_FOUND');
      expect(foreign.ok ? '' : foreign.error.message).toBe(`project "${world.slug}" not found`);
      if (c.minRole !== 'viewer') {
        const low = await callProcedure(world.viewer, name, input);
        expect(low.ok ? 'answered' : low.error.code).toBe('FORBIDDEN');
      }
    } else {
      const input = c.input(world);
      const out = await callProcedure(null, name, input);
      expect(out.ok ? 'answered' : out.error.code).toBe('UNAUTHORIZED');
      const tenant = await callProcedure(world.owner, name, input);
      expect(tenant.ok ? 'answered' : tenant.error.code).toBe('FORBIDDEN');
    }
    expect(await snapshot(world.projectId)).toEqual(before);
  });
});

describe('REST isolation', () => {
  const routes = apiRoutes.map((r) => `${r.method} ${r.path}`);

  test.each(routes)('%s refuses unauthenticated, revoked, foreign, read-only and out-of-cluster tokens', async (key) => {
    const route = apiRoutes.find((r) => `${r.method} ${r.path}` === key)!;
    const file = path.join(process.cwd(), 'app', route.path.replace(/\{(\w+)\}/g, '[$1]'), 'route.ts');
    const mod = (await import(file)) as Record<string, (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>>;
    const handler = mod[route.method];
    expect(handler, `${key} has no handler in ${file}`).toBeTypeOf('function');
    const params = restParams(route.path, world);
    const body = restBodies[route.path];
    const call = async (token: string | null) => {
      const res = await handler(
        new Request(`http://localhost${route.path}`, {
          method: route.method,
          headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body && route.method !== 'GET' ? JSON.stringify(body) : undefined,
        }),
        { params: Promise.resolve(params) },
      );
      const text = await res.text();
      return { status: res.status, text };
    };
    const before = await snapshot(world.projectId);
    const anonymous = await call(null);
    if (route.group === 'core' && !route.path.includes('{project}')) {
      expect(anonymous.status).toBe(401);
    } else {
      expect((await call(null)).status).toBe(401);
      expect((await call(world.tokens.revoked)).status).toBe(401);
      const foreign = await call(world.tokens.foreign);
      expect(foreign.status).toBe(404);
      expect(foreign.text).not.toContain('192.0.2');
      if (route.minRole === 'editor') expect((await call(world.tokens.viewer)).status).toBe(403);
      if (route.path.includes('{cluster}')) {
        const outside = await call(world.tokens.otherCluster);
        expect(outside.status).toBe(404);
        expect(outside.text).not.toContain('192.0.2');
      }
    }
    expect(await snapshot(world.projectId)).toEqual(before);
  });
});
