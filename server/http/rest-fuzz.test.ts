/**
 * Property-based fuzzing of the REST v1 surface (issue 8, "Bad input"). Every route of the route table
 * (server/api/routes.ts) is called in-process with a valid editor token and generated input:
 * arbitrary JSON, near-valid bodies (a valid body with one field changed: wrong type, huge or odd
 * strings, odd numbers, malformed CIDRs, an unknown field, deep nesting), and random query strings.
 *
 * Properties, for every request:
 *  - never a 5xx (a full pool's documented 507 `Exhausted` aside);
 *  - every error is `{ error: { code, message } }` with a known code, its status from the one error
 *    table, a non-empty message and no internals;
 *  - a 2xx body is well-formed for its route;
 *  - no partial write: after a refused request (and after any dry run) the project's rows — networks,
 *    pools, claims, allocations, clusters, leases, machines, increase requests, granted quota
 *    claims, bucket totals, events — are exactly as before.
 *
 * Runs are seeded (see test/fuzz.ts): `FUZZ_SEED`, `FUZZ_PATH`, `FUZZ_RUNS` reproduce or widen a run.
 */
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { beforeAll, describe, expect, test } from 'vitest';
import { locations, machineCapacity, machineClasses, machineProfiles, serviceAvailability } from '@/db/schema/fleet';
import { systemActor } from '@/server/audit/events';
import { createCluster } from '@/server/cni/clusters';
import { errorCodes, type ErrorCode } from '@/server/errors';
import { apiRoutes } from '@/server/api/routes';
import type { RestRoute } from '@/server/http/declare';
import { encodeContinue } from '@/server/http/pagination';
import { parseCidr } from '@/lib/cidr';
import { requestMachine } from '@/server/fleet/machines';
import { createNetwork } from '@/server/ipam/networks';
import { createGrant } from '@/server/quota/grants';
import { createIncreaseRequest } from '@/server/quota/increases';
import { createClaimPolicy, createGrantPolicy } from '@/server/quota/policies';
import { createRegistration } from '@/server/quota/registrations';
import { addMembership } from '@/server/tenancy/projects';
import { createApiToken, createOperatorToken, createUserToken } from '@/server/tenancy/tokens';
import { errorTable } from '@/server/error-table';
import { testDb, uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { routeHandlers } from '@/test/rest';
import { applyMutation, checkProperty, hostileValue, mutationOf, nastyStrings, objectPaths, serializeBody } from '@/test/fuzz';

const FILE = 'server/http/rest-fuzz.test.ts';
const actor = systemActor('test');
type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

interface World {
  projectId: string;
  slug: string;
  /** A project editor token (an owner token for the routes that need the owner role), and an operator token for the operator routes. */
  token: string;
  ownerToken: string;
  /** A user token of the project's and the organization's owner, for the user routes; and a member it may change. */
  userToken: string;
  orgSlug: string;
  memberEmail: string;
  operatorToken: string;
  tokenIds: string[];
  /** When the fixtures were made: the operator's events on global objects are counted from here. */
  startedAt: string;
  cluster: string;
  catalogue: { class: string; profile: string; location: string };
  /** Fixtures of the operator routes, all private to this file ("fz…"): nothing else sees them. */
  tag: string;
  registration: string;
  grant: string;
  grantPolicy: string;
  claimPolicy: string;
  claimPolicyKind: string;
  increaseId: string;
  machine: string;
  device: string;
}
let world: World;

beforeAll(async () => {
  const { db } = testDb();
  const startedAt = new Date().toISOString();
  const { org, project } = await makeProject(db);
  const owner = await makeUser(db, { projectId: project.id, role: 'owner' });
  await addMembership(db, { userId: owner.id, role: 'owner', organizationId: org.id }, actor);
  const member = await makeUser(db, { projectId: project.id, role: 'viewer' });
  await addMembership(db, { userId: member.id, role: 'member', organizationId: org.id }, actor);
  const userToken = await createUserToken(db, { userId: owner.id, name: 'fuzz-user' }, actor);
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24' }, { cidr: '2001:db8::/48' }] }, actor);
  await createNetwork(db, project.id, { name: 'pods', cidrs: [{ cidr: '198.51.100.0/24' }] }, actor);
  await createNetwork(db, project.id, { name: 'metal', cidrs: [{ cidr: '203.0.113.0/24' }, { cidr: '2001:db8:100::/48' }] }, actor);
  const cluster = uniq('k');
  await createCluster(db, project.id, { name: cluster, network: 'pods', nodeBlockPrefixV4: 28 }, actor);
  // A private corner of the machine catalogue: a usable location, a class and a profile.
  const tag = uniq('fz');
  const [loc] = await db.insert(locations).values({ name: tag, displayName: tag }).returning({ id: locations.id });
  await db.insert(serviceAvailability).values({ locationId: loc.id, service: 'machines', status: 'Available' });
  await db.insert(machineClasses).values({ name: `${tag}.cls`, cores: 4, memoryGib: 16, arch: 'x86_64', requiresApproval: false });
  const digest = 'sha256:' + 'cd'.repeat(32);
  await db.insert(machineProfiles).values({ name: `${tag}-os`, imageRef: `example/os@${digest}`, imageDigest: digest });
  // Capacity of another class: no machine of this file is ever placed on it (a worker process of
  // another test file may reconcile this file's machines), so only the capacity routes change it.
  const [capClass] = await db
    .insert(machineClasses)
    .values({ name: `${tag}.cap`, cores: 2, memoryGib: 4, arch: 'x86_64', requiresApproval: false })
    .returning({ id: machineClasses.id });
  const device = `dev-${tag}`;
  await db.insert(machineCapacity).values({ deviceRef: device, classId: capClass.id, locationId: loc.id });
  const token = await createApiToken(db, { projectId: project.id, name: 'fuzz' }, actor);
  const ownerToken = await createApiToken(db, { projectId: project.id, name: 'fuzz-owner', role: 'owner' }, actor);
  const operator = await makeUser(db, { platformRoles: ['operator'] });
  const op = await createOperatorToken(db, { userId: operator.id, name: 'fuzz-operator', createdBy: operator.id }, actor);
  const registration = `${tag}.example.com/things`;
  const kind = `Fz${tag.replace(/[^a-z0-9]/g, '')}`;
  await createRegistration(
    db,
    {
      resourceType: registration,
      consumerKind: 'Project',
      type: 'Entity',
      description: '',
      baseUnit: 'things',
      displayUnit: 'things',
      unitConversionFactor: 1,
      claimingKinds: [kind],
    },
    actor,
  );
  await createGrant(db, { projectId: project.id, name: `${tag}-grant`, allowances: [{ resourceType: registration, amount: 5 }], source: 'Operator' }, actor);
  // Room for every create the runs make: quota is not what most requests should stop at.
  const plenty = [
    { resourceType: 'ipam.miloapis.com/ipclaims', amount: 1_000_000 },
    { resourceType: 'metal.datumapis.com/machines', amount: 1_000_000 },
  ];
  await createGrant(db, { projectId: project.id, name: `${tag}-plenty`, allowances: plenty, source: 'Operator' }, actor);
  await createGrantPolicy(db, grantPolicyInput(`${tag}-gp`, registration), actor);
  await createClaimPolicy(
    db,
    {
      name: `${tag}-cp`,
      description: '',
      triggerKind: kind,
      constraints: [],
      claimNameTemplate: 'fz',
      requests: [{ resourceType: registration, amount: 1 }],
      enabled: true,
    },
    actor,
  );
  const increase = await createIncreaseRequest(db, project.id, { resourceType: registration, amount: 3, reason: 'fuzzing' }, actor);
  const catalogue = { class: `${tag}.cls`, profile: `${tag}-os`, location: tag };
  await requestMachine(db, project.id, { name: `${tag}-m`, ...catalogue, interfaces: [], desiredPower: 'on' }, actor);
  world = {
    projectId: project.id,
    slug: project.slug,
    token: token.secret,
    userToken: userToken.secret,
    ownerToken: ownerToken.secret,
    orgSlug: org.slug,
    memberEmail: member.email,
    operatorToken: op.secret,
    tokenIds: [token.id, op.id],
    startedAt,
    cluster,
    catalogue,
    tag,
    registration,
    grant: `${tag}-grant`,
    grantPolicy: `${tag}-gp`,
    claimPolicy: `${tag}-cp`,
    claimPolicyKind: kind,
    increaseId: increase.id,
    machine: `${tag}-m`,
    device,
  };
});

/**
 * A GrantCreationPolicy applies to every project created anywhere: this file's are disabled AND
 * constrained to a project that never exists, so that no single mutation makes one apply to the
 * projects of the test files running alongside.
 */
function grantPolicyInput(name: string, resourceType: string) {
  return {
    name,
    description: '',
    enabled: false,
    constraints: [{ expression: "trigger.metadata.name == 'fz-no-such-project'" }],
    grantNameTemplate: 'fz-grant',
    allowances: [{ resourceType, amount: 1 }],
  };
}

/** Everything a request could write for the project; "nothing changed" means these are equal. */
async function snapshot() {
  const { db } = testDb();
  const p = world.projectId;
  const [row] = (await db.execute(sql`
    select (select count(*) from networks where project_id = ${p})::int as networks,
           (select count(*) from ip_pools where project_id = ${p})::int as pools,
           (select coalesce(sum(allocated), 0)::text from ip_pools where project_id = ${p}) as "poolAllocated",
           (select count(*) from ip_free_blocks f join ip_pools ip on ip.id = f.pool_id where ip.project_id = ${p})::int as "freeBlocks",
           (select count(*) from ip_claims where project_id = ${p})::int as claims,
           (select count(*) from ip_allocations where project_id = ${p})::int as allocations,
           (select count(*) from clusters where project_id = ${p})::int as clusters,
           (select count(*) from node_blocks b join clusters c on c.id = b.cluster_id where c.project_id = ${p})::int as "nodeBlocks",
           (select count(*) from pod_leases where project_id = ${p})::int as leases,
           (select count(*) from machines where project_id = ${p})::int as machines,
           (select count(*) from api_tokens where project_id = ${p})::int as tokens,
           (select count(*) from quota_increase_requests where project_id = ${p})::int as increases,
           -- Machines' quota claims are left out like their rows: a worker of another test file may
           -- finish a machine release the operator routes started, releasing its claim.
           (select count(*) from resource_claims where project_id = ${p} and status = 'Granted' and ref_kind <> 'Machine')::int as "grantedClaims",
           (select count(*) from resource_claims where project_id = ${p} and released_at is not null and ref_kind <> 'Machine')::int as "releasedClaims",
           (select count(*) from resource_claims where project_id = ${p} and status = 'Denied')::int as "deniedClaims",
           (select coalesce(sum(allocated), 0)::text || '/' || coalesce(sum(claim_count), 0)::text from allowance_buckets where project_id = ${p} and resource_type <> 'metal.datumapis.com/machines') as buckets,
           (select count(*) from resource_grants where project_id = ${p})::int as grants,
           (select coalesce(string_agg(g.name || '=' || g.allowances::text, ',' order by g.name), '') from resource_grants g where project_id = ${p}) as allowances,
           (select coalesce(string_agg(r::text, ',' order by r.resource_type), '') from resource_registrations r where r.resource_type like ${`${world.tag}%`}) as registrations,
           (select coalesce(string_agg(x::text, ',' order by x.name), '') from grant_creation_policies x where x.name like ${`${world.tag}%`}) as "grantPolicies",
           (select coalesce(string_agg(x::text, ',' order by x.name), '') from claim_creation_policies x where x.name like ${`${world.tag}%`} or x.trigger_kind like ${`${world.claimPolicyKind}%`}) as "claimPolicies",
           (select coalesce(string_agg(x.status || coalesce(x.decided_at::text, ''), ',' order by x.created_at), '') from quota_increase_requests x where project_id = ${p}) as "increaseStates",
           (select coalesce(string_agg(c.state || c.health || c.available::text, ','), '') from machine_capacity c where c.device_ref like ${`dev-${world.tag}%`}) as capacity,
           -- Machine rows and their events are left out: a worker process of another test file may reconcile them.
           (select count(*) from events where project_id = ${p} and object_type <> 'machine')::int as events,
           (select count(*) from events where at >= ${world.startedAt}::timestamptz and project_id is null and actor_id = ${world.tokenIds[1]})::int as "operatorEvents"`)) as unknown as Record<
    string,
    number | string
  >[];
  return row;
}

interface Sent {
  /** `METHOD /path` of the route (a key, so that a printed counterexample stays short). */
  key: string;
  params: Record<string, string>;
  query: string;
  body?: string;
  contentType?: string;
}

interface Answer {
  status: number;
  json: Record<string, unknown> | undefined;
  text: string;
}

const key = (r: RestRoute) => `${r.method} ${r.path}`;
const routeOf = (s: Sent) => apiRoutes.find((r) => key(r) === s.key)!;

/**
 * Owner-only project writes that leave the world usable, sent with the user token of the project's
 * owner (the project token is an editor's). Deleting the project is not one: it stays refused.
 */
const ownerWrites = new Set(['PATCH /api/v1/projects/{project}']);

async function send(s: Sent): Promise<Answer> {
  const route = routeOf(s);
  const token =
    route.auth.kind === 'operator'
      ? world.operatorToken
      : route.auth.kind === 'user' || ownerWrites.has(s.key)
        ? world.userToken
        : // Owner token routes get the owner token; the project's deletion (projectOrOperator) keeps the editor's refusal.
          route.auth.kind === 'token' && route.auth.minRole === 'owner'
          ? world.ownerToken
          : world.token;
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (s.contentType !== undefined) headers['content-type'] = s.contentType;
  const res = await (routeHandlers(route.path)[route.method] as Handler)(
    new Request(`http://localhost${route.path}${s.query}`, { method: route.method, headers, body: s.body }),
    { params: Promise.resolve({ project: world.slug, ...s.params }) },
  );
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

// ---- Generators -----------------------------------------------------------------------------

const validName = fc.constantFrom('a', 'web', 'db-1', 'x9', 'edge-proxy', 'zz');
/** Names for creates: short ones, and long ones up to the limit of 63 (names derived from them must still fit). */
const freshName = fc.oneof(
  { weight: 2, arbitrary: fc.tuple(validName, fc.nat({ max: 1_000_000 })).map(([n, i]) => `${n}-${i.toString(36)}`) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.integer({ min: 50, max: 63 }), fc.nat({ max: 1_000_000 })).map(([len, i]) => `${'l'.repeat(len)}${i.toString(36)}`.slice(-len)),
  },
);

/** Valid bodies per route (names vary so that some creates succeed and later ones collide). */
const validBodies: Record<string, (name: string) => unknown[]> = {
  'PUT /api/v1/projects/{project}/capacityalertrules': () => [
    { warningPercent: 70, criticalPercent: 90 },
    { network: 'vpc', forecastDays: 3, hysteresisPercent: 2, enabled: false },
  ],
  'POST /api/v1/projects/{project}/webhooks': (name) => [
    { name, url: 'https://8.8.8.8/meridian' },
    { name, url: 'https://8.8.4.4:8443/hook' },
  ],
  'POST /api/v1/webhooks': (name) => [{ name, url: 'https://8.8.8.8/operators' }],
  'POST /api/v1/projects/{project}/networks': (name) => [
    { metadata: { name }, spec: { cidrs: [{ cidr: '198.18.0.0/28' }] } },
    {
      apiVersion: 'ipam.miloapis.com/v1alpha1',
      kind: 'Network',
      metadata: { name, labels: { team: 'a' } },
      spec: {
        description: 'd',
        cidrs: [
          {
            cidr: '2001:db8:ff00::/56',
            minPrefixLength: 60,
            maxPrefixLength: 64,
            defaultPrefixLength: 64,
            strategy: 'BestFit',
            reserveLeading: 1,
            reserveTrailing: 1,
          },
        ],
      },
    },
    // Reservations beyond 2^53 come as decimal strings (a /64 here), exact at any size.
    { metadata: { name }, spec: { cidrs: [{ cidr: '2001:db8:fe00::/56', reserveLeading: '18446744073709551616', reserveTrailing: '18446744073709551616' }] } },
  ],
  'POST /api/v1/projects/{project}/ipclaims': (name) => [
    { metadata: { name }, spec: { network: 'vpc', prefixLength: 30 } },
    {
      apiVersion: 'ipam.miloapis.com/v1alpha1',
      kind: 'IPClaim',
      metadata: { name, labels: { app: 'web' } },
      spec: { network: 'vpc', family: 'IPv6', prefixLength: 64, reclaimPolicy: 'Retain', retentionSeconds: 3600, ownerRef: { kind: 'Thing', name: 'x' } },
    },
    { metadata: { name }, spec: { network: 'vpc', address: '192.0.2.200/32', pool: 'vpc-v4' } },
    { metadata: { name }, spec: { network: 'vpc', family: 6, address: '2001:db8:0:1::/64' } },
  ],
  'POST /api/v1/projects/{project}/clusters': (name) => [
    { name, network: 'pods' },
    { name, network: 'vpc', description: 'd', nodeBlockPrefixV4: 28, nodeBlockPrefixV6: 120 },
  ],
  'POST /api/v1/projects/{project}/quotaincreaserequests': () => [
    { spec: { resourceType: 'ipam.miloapis.com/ipclaims', amount: 5, reason: 'launch week' } },
    {
      apiVersion: 'quota.miloapis.com/v1alpha1',
      kind: 'QuotaIncreaseRequest',
      spec: { resourceType: 'metal.datumapis.com/machines', amount: 1, reason: 'more' },
    },
  ],
  'POST /api/v1/projects/{project}/machines': (name) => [
    { metadata: { name }, spec: { ...world.catalogue } },
    {
      apiVersion: 'metal.datumapis.com/v1alpha1',
      kind: 'Machine',
      metadata: { name },
      spec: { ...world.catalogue, desiredPower: 'off', interfaces: [{ network: 'metal', families: ['IPv4', 'IPv6'], addressClasses: 2 }] },
    },
    { metadata: { name }, spec: { ...world.catalogue, interfaces: [{ network: 'metal', families: ['IPv4'], addressClasses: 3 }] } },
    {
      metadata: { name },
      spec: {
        ...world.catalogue,
        interfaces: [
          { network: 'metal', families: ['IPv6'] },
          { network: 'metal', families: ['IPv6', 'IPv4'] },
        ],
      },
    },
  ],
  // Operator routes (operator token); every object named is private to this file.
  'POST /api/v1/resourceregistrations': (name) => [
    {
      spec: {
        resourceType: `${world.tag}.example.com/${name}`,
        type: 'Entity',
        baseUnit: 'things',
        displayUnit: 'things',
        claimingKinds: [world.claimPolicyKind],
      },
    },
    {
      apiVersion: 'quota.miloapis.com/v1alpha1',
      kind: 'ResourceRegistration',
      metadata: { name: `${world.tag}.example.com/${name}` },
      spec: {
        resourceType: `${world.tag}.example.com/${name}`,
        type: 'Allocation',
        description: 'd',
        baseUnit: 'B',
        displayUnit: 'GiB',
        unitConversionFactor: 1073741824,
        claimingKinds: ['FzOther'],
      },
    },
  ],
  'PATCH /api/v1/resourceregistrations/{group}/{resource}': () => [
    { spec: { description: 'patched', displayUnit: 'things', claimingKinds: [world.claimPolicyKind] } },
    { spec: { resourceType: world.registration, type: 'Entity', unitConversionFactor: 1 } },
  ],
  'POST /api/v1/projects/{project}/resourcegrants': (name) => [
    { metadata: { name: `${world.tag}-${name}` }, spec: { allowances: [{ resourceType: world.registration, amount: 5 }] } },
    {
      apiVersion: 'quota.miloapis.com/v1alpha1',
      kind: 'ResourceGrant',
      metadata: { name: `${world.tag}-${name}` },
      spec: {
        consumerRef: { name: world.slug },
        allowances: [
          { resourceType: world.registration, amount: 0 },
          { resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 },
        ],
      },
    },
  ],
  'PUT /api/v1/projects/{project}/resourcegrants/{name}': () => [
    { spec: { allowances: [{ resourceType: world.registration, amount: 7 }] } },
    {
      kind: 'ResourceGrant',
      metadata: { name: world.grant },
      spec: { consumerRef: { name: world.slug }, allowances: [{ resourceType: world.registration, amount: 5 }] },
    },
  ],
  'POST /api/v1/grantcreationpolicies': (name) => [{ metadata: { name: `${world.tag}-${name}` }, spec: specOf(grantPolicyInput('x', world.registration)) }],
  'PUT /api/v1/grantcreationpolicies/{name}': () => [
    { spec: specOf(grantPolicyInput('x', world.registration)) },
    {
      kind: 'GrantCreationPolicy',
      metadata: { name: world.grantPolicy },
      spec: { ...specOf(grantPolicyInput('x', world.registration)), description: 'd', triggerKind: 'Project' },
    },
  ],
  'POST /api/v1/claimcreationpolicies': (name) => [
    {
      metadata: { name: `${world.tag}-${name}` },
      spec: {
        triggerKind: `${world.claimPolicyKind}${name.replace(/[^a-z0-9]/g, '')}`,
        claimNameTemplate: 'fz-{{ trigger.metadata.name }}',
        requests: [{ resourceType: world.registration, amount: 1 }],
      },
    },
  ],
  'PUT /api/v1/claimcreationpolicies/{name}': () => [
    {
      spec: {
        triggerKind: world.claimPolicyKind,
        claimNameTemplate: 'fz',
        requests: [{ resourceType: world.registration, amount: '{{ 1 + 1 }}' }],
        constraints: [{ expression: 'true', message: 'm' }],
      },
    },
  ],
  'POST /api/v1/quotaincreaserequests/{name}/approve': () => [{}, { amount: 2, reason: 'ok' }],
  'POST /api/v1/quotaincreaserequests/{name}/reject': () => [{ reason: 'not now' }],
  'POST /api/v1/projects/{project}/machines/{name}/reject': () => [{ reason: 'no capacity' }],
  'POST /api/v1/projects/{project}/machines/{name}/release': () => [{}, { reason: 'r' }, { reason: 'stuck', force: true }],
  'POST /api/v1/projects/{project}/machines/{name}/cancel': () => [{}, { reason: 'ordered the wrong class' }],
  'POST /api/v1/machinecapacities/{name}/quarantine': () => [{}, { reason: 'disk' }],
  'POST /api/v1/machinecapacities/{name}/return': () => [{}, { reason: 'fixed' }],
  'POST /api/v1/machinecapacities/{name}/retire': () => [{ reason: 'old' }],
  // User routes (a user token of the project's and organization's owner).
  'POST /api/v1/organizations': (name) => [
    { metadata: { name: `fz-${name}`.slice(0, 63) }, spec: { displayName: 'Fuzz org' } },
    { apiVersion: 'v1', kind: 'Organization', metadata: { name: `fz-o-${name}`.slice(0, 63) }, spec: { displayName: 'Fuzz org' } },
  ],
  'PATCH /api/v1/projects/{project}': () => [
    { spec: { displayName: 'Renamed by fuzz' } },
    { apiVersion: 'v1', kind: 'Project', spec: { description: 'Described by fuzz' } },
    { spec: { displayName: 'Both', description: '' } },
  ],
  'PATCH /api/v1/organizations/{organization}': () => [
    { spec: { displayName: 'Renamed by fuzz' } },
    { apiVersion: 'v1', kind: 'Organization', spec: { displayName: 'Again' } },
  ],
  'POST /api/v1/projects': (name) => [
    { metadata: { name: `fz-${name}`.slice(0, 63), organization: world.orgSlug }, spec: { displayName: 'Fuzz project' } },
    {
      apiVersion: 'v1',
      kind: 'Project',
      metadata: { name: `fz-p-${name}`.slice(0, 63), organization: world.orgSlug },
      spec: { displayName: 'P', description: 'd' },
    },
  ],
  'PUT /api/v1/organizations/{organization}/members/{user}': () => [{ spec: { role: 'viewer' } }, { kind: 'Member', spec: { role: 'editor' } }],
  'PUT /api/v1/projects/{project}/members/{user}': () => [{ spec: { role: 'viewer' } }, { kind: 'Member', spec: { role: 'editor' } }],
  'POST /api/v1/organizations/{organization}/invitations': (name) => [{ spec: { email: `${name}@example.com`, role: 'viewer' } }],
  'POST /api/v1/projects/{project}/invitations': (name) => [
    { spec: { email: `${name}@example.com`, role: 'editor' } },
    { kind: 'Invitation', spec: { email: 'x@example.com', role: 'owner' } },
  ],
};

/** A policy input without its name: the `spec` of its REST body. */
function specOf<T extends { name: string }>(input: T): Omit<T, 'name'> {
  const { name: _name, ...spec } = input;
  return spec;
}

/** The fixture of this file a route's path parameter names, where there is one. */
function fixtureParam(r: RestRoute, name: string): string | undefined {
  if (name === 'cluster') return world.cluster;
  if (name === 'organization') return world.orgSlug;
  if (name === 'user') return world.memberEmail;
  if (name === 'group') return world.registration.split('/')[0];
  if (name === 'resource') return world.registration.split('/')[1];
  if (name !== 'name') return undefined;
  if (r.path.includes('/machines/')) return world.machine;
  if (r.path.includes('/resourcegrants/')) return world.grant;
  if (r.path.includes('/grantcreationpolicies/')) return world.grantPolicy;
  if (r.path.includes('/claimcreationpolicies/')) return world.claimPolicy;
  if (r.path.includes('/quotaincreaserequests/')) return world.increaseId;
  if (r.path.includes('/machinecapacities/')) return world.device;
  return undefined;
}

/** Path parameters: mostly the fixture the route acts on (so bodies reach the domain), else garbage. */
function pathParam(r: RestRoute, name: string): fc.Arbitrary<string> | undefined {
  if (!r.path.includes(`{${name}}`)) return undefined;
  if (r.method === 'DELETE') return absentName; // never a fixture (the other runs need them) nor a created object
  const value = fixtureParam(r, name);
  if (value === undefined) return name === 'name' ? nameParam : undefined;
  const fixture = fc.oneof({ weight: 4, arbitrary: fc.constant(value) }, { weight: 1, arbitrary: nameParam });
  return r.path.includes('/quotaincreaserequests/') ? fc.oneof(fixture, fc.uuid()) : fixture;
}

const containerId = fc.tuple(fc.constantFrom('c', 'ctr', 'abc123'), fc.nat({ max: 50 })).map(([c, i]) => `${c}${i}`);
const cniBodies = (cid: string) => ({
  add: { cniNetwork: 'podnet', containerId: cid, ifname: 'eth0', node: 'node-1', podNamespace: 'shop', podName: 'web-1' },
  del: { cniNetwork: 'podnet', containerId: cid, ifname: 'eth0' },
  check: {
    cniNetwork: 'podnet',
    containerId: cid,
    ifname: 'eth0',
    prevResult: { cniVersion: '1.0.0', ips: [{ address: '198.51.100.2/28', gateway: '198.51.100.1' }] },
  },
  gc: { cniNetwork: 'podnet', node: 'node-1', validAttachments: [{ containerID: cid, ifname: 'eth0' }] },
});

interface BodyCase {
  label: string;
  body?: string;
  contentType?: string;
}

/** A request body: mostly near-valid mutations, plus arbitrary JSON, non-JSON, huge and oddly typed. */
function bodyCase(valid: fc.Arbitrary<unknown>): fc.Arbitrary<BodyCase> {
  const json = 'application/json';
  return fc.oneof(
    {
      weight: 10,
      arbitrary: valid.chain((base) =>
        mutationOf(base).map((m) => ({ label: `mutated ${JSON.stringify(m).slice(0, 300)}`, body: serializeBody(applyMutation(base, m)), contentType: json })),
      ),
    },
    { weight: 4, arbitrary: valid.map((base) => ({ label: 'valid', body: serializeBody(base), contentType: json })) },
    { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => ({ label: 'arbitrary JSON', body: serializeBody(v), contentType: json })) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }).map((t) => ({ label: 'arbitrary text', body: t, contentType: json })) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('', '{', '{"a":1,}', 'nul', '\u0000', '{"metadata":', '['.repeat(5000), '1e999', '"\\ud800"', '{"a":"\\u0000"}')
        .map((t) => ({ label: 'broken JSON', body: t, contentType: json })),
    },
    {
      weight: 1,
      arbitrary: valid.chain((base) =>
        fc.constantFrom<BodyCase>(
          { label: 'no content-type', body: serializeBody(base) },
          { label: 'text/plain', body: serializeBody(base), contentType: 'text/plain' },
          { label: 'no body', contentType: json },
          { label: 'huge body', body: JSON.stringify({ ...(base as object), pad: 'x'.repeat(70 * 1024) }), contentType: json },
          { label: 'json; charset', body: serializeBody(base), contentType: 'application/json; charset=utf-16' },
        ),
      ),
    },
  );
}

/** A query string built from the route's parameters (and unknown ones) with valid and hostile values. */
function queryString(names: string[]): fc.Arbitrary<string> {
  const value = (name: string) =>
    fc.oneof(
      { weight: 3, arbitrary: validQueryValue(name) },
      { weight: 3, arbitrary: hostileValue(name).map((v) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
    );
  const pair = fc.constantFrom(...names, 'x', 'limit', 'continue', '__proto__', '').chain((k) => value(k).map((v) => [k, v] as const));
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc.array(pair, { maxLength: 5 }).map((pairs) => (pairs.length ? `?${new URLSearchParams(pairs.map(([k, v]) => [k, v])).toString()}` : '')),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '?',
        '?&&',
        '?limit',
        '?limit=%ZZ',
        '?search=%00',
        '?search=%C0%AF',
        '?continue=%FF%FE',
        '?limit=1&limit=2',
        '?a[b]=c',
        '?limit=+5',
        '?search=' + '%41'.repeat(200),
      ),
    },
  );
}

function validQueryValue(name: string): fc.Arbitrary<string> {
  switch (name) {
    case 'limit':
      return fc.oneof(fc.integer({ min: -5, max: 600 }).map(String), fc.constantFrom('1e2', '0x10', ' 5', '5.5', '05', '', 'NaN', 'Infinity', '-0', '1e309'));
    case 'continue':
      return fc.oneof(
        fc.integer({ min: -1, max: 2 ** 31 }).map((n) => encodeContinue(n) ?? ''),
        fc.constantFrom(
          'garbage',
          Buffer.from('o:-1').toString('base64url'),
          Buffer.from('o:1e3').toString('base64url'),
          Buffer.from('o:9999999999').toString('base64url'),
          Buffer.from('o:0\n').toString('base64url'),
        ),
      );
    case 'dryRun':
      return fc.constantFrom('true', 'false', 'All', 'TRUE', '1', '');
    case 'family':
      return fc.constantFrom('IPv4', 'IPv6', '4', '6', 'ipv4', '5');
    case 'sort':
      return fc.constantFrom('name', 'createdAt', 'cidr', 'id; drop', 'NAME');
    case 'order':
      return fc.constantFrom('asc', 'desc', 'ASC', 'sideways');
    case 'status':
      return fc.constantFrom('Granted', 'Denied', 'Released', 'Pending', 'Approved', 'Rejected', 'granted');
    case 'resourceType':
      return fc.constantFrom('ipam.miloapis.com/ipclaims', 'metal.datumapis.com/machines', 'a/b', 'nope', 'A/B');
    case 'network':
    case 'pool':
      return fc.constantFrom('vpc', 'pods', 'vpc-v4', 'nope', 'Bad_Name');
    case 'search':
      return fc.oneof(
        fc.constantFrom('web', '192.0.2', '192.0.2.5', '2001:db8::', '%', '_', '\\', "'", '198.51.100.0/24', '::/0'),
        fc.string({ maxLength: 20 }),
      );
    case 'phase':
      return fc.constantFrom('Pending', 'Running', 'Released', 'x'.repeat(31));
    case 'cniNetwork':
      return fc.constantFrom('podnet', '', 'x'.repeat(254));
    default:
      return fc.string({ maxLength: 10 });
  }
}

/** A path parameter: valid names, names of the fixtures' kinds that do not exist, and garbage. */
const nameParam = fc.oneof(
  { weight: 2, arbitrary: freshName },
  { weight: 2, arbitrary: fc.constantFrom(...nastyStrings) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) },
);

/**
 * For DELETE: names nothing in this file creates. Deleting a machine created by an earlier run
 * would let a worker of another test file release its addresses while a later run is watching.
 */
const absentName = fc.oneof(
  { weight: 2, arbitrary: fc.nat({ max: 1_000_000 }).map((i) => `absent-${i.toString(36)}`) },
  { weight: 2, arbitrary: fc.constantFrom(...nastyStrings) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) },
);

// ---- Per-route expectations for 2xx answers ----------------------------------------------------

type Validator = (a: Answer, s: Sent) => void;

const isCidrText = (t: unknown) => typeof t === 'string' && parseCidr(t).ok;

/** A list: `items`, and a `metadata.continue` that is a token or null where there is one. */
function expectList(): Validator {
  return (a) => {
    expect(Array.isArray(a.json?.items), 'items is a list').toBe(true);
    expect(typeof a.json?.kind === 'string' && (a.json.kind as string).endsWith('List'), 'a …List kind').toBe(true);
    const meta = a.json?.metadata as { continue?: unknown } | undefined;
    if (meta && 'continue' in meta) expect(meta.continue === null || typeof meta.continue === 'string').toBe(true);
  };
}

/** As the route reads it: the last `dryRun` wins. */
const isDryRun = (s: Sent) => ['true', 'All'].includes(new URLSearchParams(s.query).getAll('dryRun').at(-1) ?? '');

function sentBody(s: Sent): Record<string, unknown> {
  return JSON.parse(s.body ?? 'null') as Record<string, unknown>;
}

const created: Record<string, Validator> = {
  'POST /api/v1/projects/{project}/networks': (a, s) => {
    expect(a.status).toBe(201);
    expect(a.json).toMatchObject({ kind: 'Network', metadata: { name: (sentBody(s).metadata as { name: string }).name } });
    for (const c of (a.json!.spec as { cidrs: { cidr: string }[] }).cidrs) expect(isCidrText(c.cidr), c.cidr).toBe(true);
  },
  'POST /api/v1/projects/{project}/ipclaims': (a, s) => {
    const dry = isDryRun(s);
    expect(a.json).toMatchObject({
      kind: 'IPClaim',
      metadata: { name: (sentBody(s).metadata as { name: string }).name },
      status: { phase: dry ? 'Preview' : 'Bound' },
    });
    expect(isCidrText((a.json!.status as { allocatedCIDR: string }).allocatedCIDR)).toBe(true);
  },
  'POST /api/v1/projects/{project}/clusters': (a, s) => {
    expect(a.status).toBe(201);
    expect(a.json).toMatchObject({ name: sentBody(s).name });
    expect(typeof (a.json!.token as { secret: string }).secret).toBe('string');
  },
  'POST /api/v1/projects/{project}/quotaincreaserequests': (a) => {
    expect(a.status).toBe(201);
    expect(a.json).toMatchObject({ kind: 'QuotaIncreaseRequest', status: { phase: 'Pending' } });
  },
  'POST /api/v1/projects/{project}/machines': (a, s) => {
    expect(a.status).toBe(201);
    const spec = sentBody(s).spec as { interfaces?: { families: string[]; addressClasses?: number }[] };
    expect(a.json).toMatchObject({ kind: 'Machine', metadata: { name: (sentBody(s).metadata as { name: string }).name } });
    const addresses = (a.json!.status as { addresses: string[] }).addresses;
    const wanted = (spec.interfaces ?? []).reduce((n, i) => n + i.families.length * (i.addressClasses ?? 1), 0);
    expect(addresses.length, 'one address per family and address class').toBe(wanted);
    expect(new Set(addresses).size, `addresses are distinct: ${addresses.join(', ')}`).toBe(addresses.length);
    for (const address of addresses) expect(isCidrText(address), address).toBe(true);
  },
  'POST /api/v1/projects/{project}/clusters/{cluster}/cni/{command}': (a, s) => {
    const answer = a.json!;
    switch (s.params.command) {
      case 'add': {
        const ips = answer.ips as { address: string; gateway: string }[];
        expect(ips.length).toBeGreaterThan(0);
        for (const ip of ips) expect(parseCidr(ip.address, { strict: false }).ok, ip.address).toBe(true);
        break;
      }
      case 'del':
        expect(typeof answer.released).toBe('number');
        break;
      case 'check':
        expect(answer).toEqual({ ok: true });
        break;
      case 'gc':
        expect(Array.isArray(answer.released)).toBe(true);
        break;
      default:
        throw new Error(`2xx for unknown command ${s.params.command}`);
    }
  },
};

// ---- Route models ---------------------------------------------------------------------------

interface RouteModel {
  params: fc.Arbitrary<Record<string, string>>;
  query: fc.Arbitrary<string>;
  body?: fc.Arbitrary<BodyCase>;
  ok: Validator;
}

const queryNames = (r: RestRoute) => Object.keys(r.query?.shape ?? {});

function modelFor(r: RestRoute): RouteModel | undefined {
  const k = key(r);
  const params: Record<string, fc.Arbitrary<string>> = {};
  for (const name of ['cluster', 'name', 'group', 'resource', 'organization', 'user']) {
    const arb = pathParam(r, name);
    if (arb) params[name] = arb;
  }
  if (r.path.includes('{id}')) params.id = fc.oneof(fc.uuid(), nameParam);
  if (r.path.includes('{command}')) {
    params.command =
      r.method === 'GET'
        ? fc.oneof({ weight: 4, arbitrary: fc.constant('status') }, { weight: 1, arbitrary: fc.constantFrom('add', 'STATUS', '', '..') })
        : fc.constantFrom('add', 'del', 'check', 'gc', 'ADD', 'version', '');
  }
  const paramsArb = fc.record(params);

  if (r.method === 'GET') {
    const names = r.path.endsWith('{command}') ? ['cniNetwork'] : queryNames(r);
    const isList = r.summary.startsWith('List') || queryNames(r).includes('limit');
    const ok: Validator = isList
      ? expectList()
      : r.path.endsWith('{command}')
        ? (a) => expect(typeof a.json?.ready).toBe('boolean')
        : r.path === '/api/v1/whoami'
          ? (a) => expect(a.json).toMatchObject({ project: world.slug })
          : (a) => expect(a.json?.error).toBeUndefined();
    return { params: paramsArb, query: queryString(names.length ? names : ['limit', 'continue', 'search']), ok };
  }
  const answered: Validator = (a) => expect(a.json?.error).toBeUndefined();
  if (r.method === 'DELETE') return { params: paramsArb, query: queryString([]), ok: () => {} };
  if (!r.body) return { params: paramsArb, query: queryString(queryNames(r)), ok: created[k] ?? answered };
  if (k === 'POST /api/v1/projects/{project}/clusters/{cluster}/cni/{command}') {
    const body = paramsArb.chain((p) => {
      const bodies = cniBodies('c0') as Record<string, unknown>;
      const base = containerId.map((cid) => (cniBodies(cid) as Record<string, unknown>)[p.command] ?? bodies.add);
      return bodyCase(base).map((b) => ({ ...b, params: p }));
    });
    return { params: body.map((b) => b.params), query: queryString([]), body, ok: created[k] };
  }
  const bodies = validBodies[k];
  if (!bodies) return undefined;
  const valid = freshName.chain((name) => fc.constantFrom(...bodies(name)));
  return { params: paramsArb, query: queryString(queryNames(r)), body: bodyCase(valid), ok: created[k] ?? answered };
}

/** One generated request for a route. */
function requestFor(r: RestRoute, m: RouteModel): fc.Arbitrary<Sent & { label: string }> {
  if (!m.body) return fc.tuple(m.params, m.query).map(([params, query]) => ({ key: key(r), params, query, label: 'no body' }));
  // The CNI body carries the params it was generated for (its shape depends on the command).
  return fc.tuple(m.body as fc.Arbitrary<BodyCase & { params?: Record<string, string> }>, m.params, m.query).map(([b, params, query]) => ({
    key: key(r),
    params: b.params ?? params,
    query,
    body: b.body,
    contentType: b.contentType,
    label: b.label,
  }));
}

const INTERNALS = /(^|\n)\s+at |Failed query|syntax error at|violates .* constraint|ZodError|TypeError|ReferenceError|postgres/i;

/** The properties every answer must have. */
async function checkAnswer(s: Sent, a: Answer, before: Record<string, unknown>, m: RouteModel) {
  const where = `${s.key} ${JSON.stringify(s.params)}${s.query} → ${a.status} ${a.text.slice(0, 500)}`;
  const error = (a.json?.error ?? undefined) as { code?: unknown; message?: unknown; field?: unknown } | undefined;
  expect(a.json, `the answer is JSON: ${where}`).toBeDefined();
  const exhausted = a.status === 507 && error?.code === 'Exhausted';
  expect(a.status < 500 || exhausted, `no 5xx: ${where}`).toBe(true);
  if (a.status >= 400) {
    expect(typeof error?.code, `coded error: ${where}`).toBe('string');
    expect(errorCodes as readonly string[], where).toContain(error!.code);
    expect(a.status, `status from the error table: ${where}`).toBe(errorTable[error!.code as ErrorCode].http);
    expect(typeof error!.message === 'string' && error!.message.trim().length > 0, `a reason: ${where}`).toBe(true);
    expect(INTERNALS.test(error!.message as string), `no internals in the message: ${where}`).toBe(false);
    if (error!.field !== undefined) expect(typeof error!.field, where).toBe('string');
  } else {
    expect(a.status, where).toBeGreaterThanOrEqual(200);
    m.ok(a, s);
  }
  const method = routeOf(s).method;
  const dryRun = method === 'POST' && isDryRun(s);
  if (a.status >= 400 || dryRun || method === 'GET') {
    const after = await snapshot();
    const expected = { ...before };
    // Recorded on purpose although the call fails: a quota denial's claim-log row, a CHECK mismatch's event.
    if (!dryRun && (error?.code === 'QuotaExceeded' || error?.code === 'PolicyFailed')) expected.deniedClaims = after.deniedClaims;
    if (error?.code === 'CheckMismatch') expected.events = Number(before.events) + 1;
    expect(after, `no partial write: ${where}`).toEqual(expected);
  }
}

describe('REST v1 fuzz', () => {
  test('every route taking a body has a body model (and every route is fuzzed below)', () => {
    const missing = apiRoutes.filter((r) => r.body && !modelFor(r)?.body).map(key);
    expect(missing, 'add valid bodies to validBodies in server/http/rest-fuzz.test.ts').toEqual([]);
  });

  // Tenant creates get the most runs, operator actions and reads fewer: about 2,500 requests in all.
  const runsFor = (r: RestRoute) => (r.body ? (r.auth.kind === 'operator' ? 50 : 150) : r.method === 'GET' && !r.path.endsWith('}') ? 30 : 15);

  test.each(apiRoutes.map(key))('%s: no 5xx, coded 4xx, well-formed 2xx, no partial write', async (k) => {
    const route = apiRoutes.find((r) => key(r) === k)!;
    const model = modelFor(route)!;
    await checkProperty(
      `REST fuzz ${k}`,
      fc.asyncProperty(requestFor(route, model), async (s) => {
        const before = await snapshot();
        const answer = await send(s);
        try {
          await checkAnswer(s, answer, before, model);
        } catch (e) {
          (e as Error).message = `${(e as Error).message}\nrequest: ${s.label}; body ${JSON.stringify((s.body ?? '').slice(0, 400))}`;
          throw e;
        }
      }),
      { numRuns: runsFor(route), file: FILE },
    );
  });
});

/** Objects whose keys are data rather than fields (labels), and the CNI result passed through as the runtime gave it. */
const OPEN_OBJECTS = new Set(['labels', 'prevResult']);

describe('REST v1 bodies are strict', () => {
  const cni = 'POST /api/v1/projects/{project}/clusters/{cluster}/cni/{command}';
  /** Every valid body of a route (from the fuzz models above), with the fixtures its path names. */
  function validRequests(r: RestRoute): { params: Record<string, string>; body: unknown }[] {
    if (key(r) === cni) return Object.entries(cniBodies('strict')).map(([command, body]) => ({ params: { cluster: world.cluster, command }, body }));
    const params: Record<string, string> = {};
    for (const name of ['cluster', 'name', 'group', 'resource', 'organization', 'user']) {
      const value = r.path.includes(`{${name}}`) ? fixtureParam(r, name) : undefined;
      if (value !== undefined) params[name] = value;
    }
    return validBodies[key(r)]('strict-walk').map((body) => ({ params, body }));
  }

  test.each(apiRoutes.filter((r) => r.body).map(key))(
    '%s: an unknown field anywhere in a valid body is 400 ValidationFailed naming it, and nothing is written',
    async (k) => {
      const route = apiRoutes.find((r) => key(r) === k)!;
      const before = await snapshot();
      for (const { params, body } of validRequests(route)) {
        for (const at of objectPaths(body, OPEN_OBJECTS)) {
          const field = [...at, 'zzUnknown'].join('.');
          const sent = applyMutation(body, { op: 'extra', path: at, key: 'zzUnknown', value: 1 });
          const answer = await send({ key: k, params, query: '', body: serializeBody(sent), contentType: 'application/json' });
          const where = `${k} ${JSON.stringify(sent)} → ${answer.status} ${answer.text.slice(0, 300)}`;
          expect(answer.status, where).toBe(400);
          expect(answer.json?.error, where).toMatchObject({ code: 'ValidationFailed', field, message: `unknown field "${field}"` });
        }
      }
      expect(await snapshot(), 'nothing written').toEqual(before);
    },
  );
});
