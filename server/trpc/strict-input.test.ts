/**
 * Every tRPC procedure, called over the real HTTP adapter as the console calls it, refuses input it
 * does not understand with 400 `ValidationFailed` naming the field, the same rules as REST v1:
 *  - an unknown field, at the top or inside any nested object (`unknown field "cidrs.0.strategi"`);
 *  - text PostgreSQL cannot store (NUL, unpaired surrogates) in any string;
 * and nothing is written (no row of the caller's project, no event by the caller).
 *
 * The procedures are read from the router itself: one added without an entry in `validInputs`
 * fails the first test, so the walk always covers all of them.
 */
import { randomUUID } from 'node:crypto';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { sql } from 'drizzle-orm';
import superjson from 'superjson';
import { beforeAll, describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createCluster } from '@/server/cni/clusters';
import { createNetwork } from '@/server/ipam/networks';
import type { SessionUser } from '@/server/tenancy/roles';
import { testDb, uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { applyMutation, objectPaths } from '@/test/fuzz';
import { appRouter } from './root';

const actor = systemActor('test');

interface World {
  user: SessionUser;
  project: string;
  projectId: string;
  tag: string;
}
let world: World;

beforeAll(async () => {
  const { db } = testDb();
  const { project } = await makeProject(db);
  // One caller for every procedure: owner of the project and admin (holds every platform role).
  const user = await makeUser(db, { projectId: project.id, role: 'owner', platformRoles: ['admin'] });
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24' }, { cidr: '2001:db8::/48' }] }, actor);
  await createCluster(db, project.id, { name: 'k1', network: 'vpc' }, actor);
  world = { user, project: project.slug, projectId: project.id, tag: uniq('st') };
});

const id = () => randomUUID();
const allowances = [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }];

/**
 * A valid input per procedure (`undefined`: the procedure takes none). Creates name new objects,
 * so that without strict input the call would write; everything else names objects that do not
 * exist, so that nothing here can change shared state.
 */
const validInputs: Record<string, (w: World) => unknown> = {
  'me.get': () => undefined,
  'me.changePassword': () => ({ currentPassword: 'not-the-password', newPassword: 'a new password' }),
  'users.list': () => undefined,
  'projects.list': () => undefined,
  'projects.get': (w) => ({ project: w.project }),
  'projects.deletion': (w) => ({ project: w.project }),
  'projects.delete': (w) => ({ project: w.project, confirm: 'not-the-slug', reason: 'r' }),
  'projects.admin.list': () => ({ search: 'x', phase: 'Active', limit: 5 }),
  'sessions.list': (w) => ({ userId: w.user.id }),
  'sessions.revoke': (w) => ({ userId: w.user.id, id: id() }),
  'sessions.revokeAll': () => ({ userId: id() }),
  'tokens.list': (w) => ({ project: w.project }),
  'tokens.create': (w) => ({ project: w.project, name: 'ci', cluster: 'k1', role: 'viewer' }),
  'tokens.revoke': (w) => ({ project: w.project, id: id() }),
  'tokens.operator.list': () => undefined,
  'tokens.operator.create': () => ({ name: 'op' }),
  'tokens.operator.revoke': () => ({ id: id() }),
  // `direction` is what the console's infinite query adds to every page's input.
  'audit.list': () => ({ action: 'x', search: 'y', limit: 5, direction: 'forward' }),
  'audit.project': (w) => ({ project: w.project, actor: 'a', search: 'y', limit: 5, direction: 'forward' }),
  'ipam.networks.list': (w) => ({ project: w.project, search: 'v', limit: 5 }),
  'ipam.networks.get': (w) => ({ project: w.project, name: 'vpc' }),
  'ipam.networks.create': (w) => ({ project: w.project, name: 'n2', description: 'd', cidrs: [{ cidr: '198.51.100.0/24', strategy: 'BestFit' }] }),
  'ipam.networks.delete': (w) => ({ project: w.project, name: 'absent' }),
  'ipam.networks.map': (w) => ({ project: w.project, network: 'vpc' }),
  'ipam.pools.create': (w) => ({ project: w.project, network: 'vpc', parent: 'vpc-v4', name: 'child', prefixLength: 26 }),
  'ipam.claims.list': (w) => ({ project: w.project, network: 'vpc', search: '192.0.2' }),
  'ipam.claims.get': (w) => ({ project: w.project, name: 'absent' }),
  'ipam.claims.preview': (w) => ({ project: w.project, network: 'vpc', name: 'c1', ownerRef: { kind: 'Thing', name: 'x' }, labels: { app: 'web' } }),
  'ipam.claims.create': (w) => ({ project: w.project, network: 'vpc', name: 'c1', ownerRef: { kind: 'Thing', name: 'x' }, labels: { app: 'web' } }),
  'ipam.claims.delete': (w) => ({ project: w.project, name: 'absent' }),
  'ipam.retained.list': (w) => ({ project: w.project, network: 'vpc', limit: 5 }),
  'ipam.retained.release': (w) => ({ project: w.project, name: 'absent' }),
  'ipam.admin.pools': () => ({ search: 'x' }),
  'ipam.admin.retained': () => ({ limit: 5 }),
  'ipam.admin.releaseRetained': () => ({ allocationId: id() }),
  'quota.resourceTypes': () => undefined,
  'quota.buckets.list': (w) => ({ project: w.project }),
  'quota.claims.list': (w) => ({ project: w.project, status: 'Granted', search: 'x' }),
  'quota.grants.list': (w) => ({ project: w.project }),
  'quota.increases.create': (w) => ({ project: w.project, resourceType: 'ipam.miloapis.com/ipclaims', amount: 5, reason: 'launch week' }),
  'quota.increases.list': (w) => ({ project: w.project, status: 'Pending' }),
  'quota.admin.registrations.list': () => undefined,
  'quota.admin.registrations.create': (w) => ({ resourceType: `${w.tag}.example.com/things`, type: 'Entity', baseUnit: 'things', displayUnit: 'things', claimingKinds: ['Thing'] }),
  'quota.admin.registrations.update': (w) => ({ resourceType: `${w.tag}.example.com/absent`, description: 'd' }),
  'quota.admin.registrations.delete': (w) => ({ resourceType: `${w.tag}.example.com/absent` }),
  'quota.admin.grants.list': (w) => ({ project: w.project, search: 'x' }),
  'quota.admin.grants.create': (w) => ({ project: w.project, name: 'g1', allowances }),
  'quota.admin.grants.update': (w) => ({ project: w.project, name: 'absent', allowances }),
  'quota.admin.grants.delete': (w) => ({ project: w.project, name: 'absent' }),
  'quota.admin.buckets.list': () => ({ search: 'x', flagged: true }),
  'quota.admin.policies.grant.list': () => undefined,
  // Disabled and constrained to a project that never exists: harmless to any other test if written.
  'quota.admin.policies.grant.create': (w) => ({
    name: `${w.tag}-gp`,
    enabled: false,
    constraints: [{ expression: "trigger.metadata.name == 'st-no-such-project'", message: 'm' }],
    grantNameTemplate: 'g',
    allowances,
  }),
  'quota.admin.policies.grant.update': (w) => ({ name: `${w.tag}-absent`, enabled: false, grantNameTemplate: 'g', allowances }),
  'quota.admin.policies.grant.delete': (w) => ({ name: `${w.tag}-absent` }),
  'quota.admin.policies.claim.list': () => undefined,
  'quota.admin.policies.claim.create': (w) => ({ name: `${w.tag}-cp`, enabled: false, triggerKind: 'StrictThing', claimNameTemplate: 'c', requests: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }] }),
  'quota.admin.policies.claim.update': (w) => ({ name: `${w.tag}-absent`, triggerKind: 'StrictThing', claimNameTemplate: 'c', requests: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }] }),
  'quota.admin.policies.claim.delete': (w) => ({ name: `${w.tag}-absent` }),
  'quota.admin.increases.queue': () => ({ status: 'Pending' }),
  'quota.admin.increases.approve': () => ({ id: id(), reason: 'ok', amount: 1 }),
  'quota.admin.increases.reject': () => ({ id: id(), reason: 'no' }),
  'quota.admin.audit.last': () => undefined,
  'quota.admin.audit.run': () => undefined,
  'cni.clusters.list': (w) => ({ project: w.project }),
  'cni.clusters.create': (w) => ({ project: w.project, name: 'k2', network: 'vpc', description: 'd', nodeBlockPrefixV4: 28 }),
  'cni.clusters.delete': (w) => ({ project: w.project, name: 'absent' }),
  'cni.leases.list': (w) => ({ project: w.project, cluster: 'k1', search: 'web' }),
  'cni.usage': (w) => ({ project: w.project, network: 'vpc' }),
  'cni.events': (w) => ({ project: w.project }),
  'cni.admin.clusters': () => ({ limit: 5 }),
  'simulator.status': () => undefined,
  'simulator.assets': () => ({ limit: 5 }),
  'simulator.operations': () => ({ state: 'Running', limit: 5 }),
  'simulator.log': () => ({ afterSeq: 0 }),
  'simulator.setFaults': () => ({ latencyMs: 0, failOperations: { count: 1 } }),
  'simulator.clearFaults': () => undefined,
  'simulator.restart': () => undefined,
  'fleet.catalogue': () => undefined,
  'fleet.machines.list': (w) => ({ project: w.project, phase: 'Pending', search: 'm' }),
  'fleet.machines.get': (w) => ({ project: w.project, name: 'absent' }),
  'fleet.machines.create': (w) => ({ project: w.project, name: 'm1', class: 'absent.cls', profile: 'absent-os', location: 'absent', interfaces: [{ network: 'vpc', families: ['IPv4'] }] }),
  'fleet.machines.delete': (w) => ({ project: w.project, name: 'absent' }),
  'fleet.queue.list': () => ({ limit: 5 }),
  'fleet.queue.approve': () => ({ id: id() }),
  'fleet.queue.approveMany': () => ({ ids: [id()] }),
  'fleet.queue.reject': () => ({ id: id(), reason: 'no capacity' }),
  'fleet.inventory': () => undefined,
  'fleet.capacity.list': () => ({ state: 'Available', location: 'x', search: 'y' }),
  'fleet.capacity.act': () => ({ id: id(), action: 'retire', reason: 'old' }),
  'fleet.allocations.list': () => ({ limit: 5 }),
  'fleet.allocations.release': () => ({ machineId: id(), reason: 'r' }),
  'fleet.allocations.forceRelease': () => ({ machineId: id(), reason: 'stuck' }),
  'fleet.operations.list': () => ({ limit: 5 }),
  'fleet.operations.acknowledge': () => ({ id: 'op-absent', note: 'seen' }),
};

const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { type: 'query' | 'mutation' | 'subscription' } }>;
const paths = Object.keys(procedures).sort();

interface Answer {
  status: number;
  error?: { message: string; data: { domainCode: string | null; field: string | null; httpStatus: number } };
}

/** One call through tRPC's fetch adapter (the console's transport), as the world's user. */
async function call(path: string, input: unknown): Promise<Answer> {
  const payload = JSON.stringify(superjson.serialize(input));
  const url = `http://localhost/api/trpc/${path}`;
  const req =
    procedures[path]._def.type === 'query'
      ? new Request(`${url}?input=${encodeURIComponent(payload)}`)
      : new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload });
  const res = await fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    createContext: () => ({ db: testDb().db, session: { user: world.user } }),
  });
  const body = (await res.json()) as { error?: { json: Answer['error'] } };
  return { status: res.status, error: body.error?.json };
}

/** What any of these calls could write: the project's rows and anything recorded by the caller. */
async function snapshot() {
  const { db } = testDb();
  const p = world.projectId;
  const [row] = (await db.execute(sql`
    select (select count(*) from networks where project_id = ${p})::int as networks,
           (select count(*) from ip_pools where project_id = ${p})::int as pools,
           (select count(*) from ip_claims where project_id = ${p})::int as claims,
           (select count(*) from clusters where project_id = ${p})::int as clusters,
           (select count(*) from api_tokens where project_id = ${p} or user_id = ${world.user.id})::int as tokens,
           (select count(*) from quota_increase_requests where project_id = ${p})::int as increases,
           (select count(*) from resource_grants where project_id = ${p})::int as grants,
           (select count(*) from resource_registrations where resource_type like ${`${world.tag}%`})::int as registrations,
           (select count(*) from grant_creation_policies where name like ${`${world.tag}%`})::int as "grantPolicies",
           (select count(*) from claim_creation_policies where name like ${`${world.tag}%`})::int as "claimPolicies",
           (select count(*) from events where actor_id = ${world.user.id} or project_id = ${p})::int as events`)) as unknown as Record<string, number>[];
  return row;
}

type Path = (string | number)[];
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Free-form maps whose keys are data, not fields (a claim's labels): an extra key there is a label. */
const MAPS = new Set(['labels']);

/** Every string in the input, with its path. */
function stringPaths(value: unknown, at: Path = []): Path[] {
  if (typeof value === 'string') return [at];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringPaths(v, [...at, i]));
  if (isObject(value)) return Object.entries(value).flatMap(([k, v]) => stringPaths(v, [...at, k]));
  return [];
}

function expectRefused(a: Answer, field: string, where: string) {
  expect(a.status, `${where}: ${JSON.stringify(a.error)}`).toBe(400);
  expect(a.error?.data.domainCode, `${where}: ${JSON.stringify(a.error)}`).toBe('ValidationFailed');
  expect(a.error?.data.field, where).toBe(field);
  expect(a.error?.message, where).toContain(field);
  expect(a.error?.message, `${where}: no SQL`).not.toMatch(/Failed query|params:|\bselect\b/i);
}

describe('tRPC input is strict', () => {
  test('every procedure has a valid input in this file', () => {
    expect(paths.filter((p) => !validInputs[p]), 'add them to validInputs').toEqual([]);
    expect(Object.keys(validInputs).filter((p) => !procedures[p]), 'procedures that no longer exist').toEqual([]);
  });

  test.each(paths)('%s: an unknown field anywhere is 400 ValidationFailed naming it, and nothing is written', async (path) => {
    const input = validInputs[path](world);
    const before = await snapshot();
    for (const at of objectPaths(input ?? {}, MAPS)) {
      const field = [...at, 'zzUnknown'].join('.');
      const sent = applyMutation(input ?? {}, { op: 'extra', path: at, key: 'zzUnknown', value: 1 });
      const answer = await call(path, sent);
      expectRefused(answer, field, `${path} ${JSON.stringify(sent)}`);
      expect(answer.error?.message).toBe(`unknown field "${field}"`);
    }
    expect(await snapshot(), 'nothing written').toEqual(before);
  });

  // Which inputs hold strings depends on their shape only, not on the world's values.
  const shape: World = { user: {} as SessionUser, project: 'p', projectId: '', tag: 't' };
  test.each(paths.filter((p) => stringPaths(validInputs[p]?.(shape)).length > 0))(
    '%s: NUL or an unpaired surrogate in any string is 400 ValidationFailed naming it, and nothing is written',
    async (path) => {
      const input = validInputs[path](world);
      const before = await snapshot();
      for (const at of stringPaths(input)) {
        for (const bad of ['a\u0000b', 'a\ud800b', '\udc00']) {
          const sent = applyMutation(input, { op: 'set', path: at, value: bad });
          expectRefused(await call(path, sent), at.join('.'), `${path} ${JSON.stringify(sent)}`);
        }
      }
      expect(await snapshot(), 'nothing written').toEqual(before);
    },
  );
});
