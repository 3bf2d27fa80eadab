/**
 * Tenant isolation, enumerated from the routers themselves: every tRPC procedure and every REST
 * route is called as someone who must be refused — signed out, a member of another project, a
 * viewer where an editor is needed, a tenant on staff procedures, a revoked token, another
 * project's token, a cluster token outside its cluster, an operator token on a project route.
 * Operator routes are called with project tokens (viewer, editor, owner, another project's), cluster
 * tokens, a revoked operator token, the token of an operator who lost the role, and no token, aimed
 * at real objects so a missing guard would change them. Each must be refused with no data, and
 * nothing may change. A procedure or route without a case here fails the test.
 */
import { sql } from 'drizzle-orm';
import { type TRPCError } from '@trpc/server';
import { beforeAll, describe, expect, test } from 'vitest';
import { users } from '@/db/schema';
import { locations, machineCapacity, machineClasses, machineProfiles, serviceAvailability } from '@/db/schema/fleet';
import { apiRoutes } from '@/server/api/routes';
import type { RestRoute } from '@/server/http/declare';
import { systemActor } from '@/server/audit/events';
import { createCluster } from '@/server/cni/clusters';
import { requestMachine } from '@/server/fleet/machines';
import { setCapacityState } from '@/server/fleet/operator';
import { createClaim, deleteClaim } from '@/server/ipam/claims';
import { createNetwork } from '@/server/ipam/networks';
import { createIncreaseRequest } from '@/server/quota/increases';
import { createClaimPolicy, createGrantPolicy } from '@/server/quota/policies';
import { createRegistration } from '@/server/quota/registrations';
import type { PlatformRole, SessionUser } from '@/server/tenancy/roles';
import { createWebhookEndpoint } from '@/server/capacity/webhooks';
import { addMembership } from '@/server/tenancy/projects';
import { createApiToken, createOperatorToken, createUserToken, revokeApiToken, revokeOperatorToken, revokeUserToken } from '@/server/tenancy/tokens';
import { setUserDisabled } from '@/server/tenancy/users';
import { createCaller, appRouter } from '@/server/trpc/root';
import { testDb, uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { routeHandlers } from '@/test/rest';

const actor = systemActor('test');

interface World {
  slug: string;
  projectId: string;
  /** The victim project's organization, and a user who is a viewer there. */
  orgSlug: string;
  orgId: string;
  orgMember: SessionUser;
  owner: SessionUser;
  viewer: SessionUser;
  stranger: SessionUser;
  operator: SessionUser;
  tokens: {
    editor: string;
    viewer: string;
    owner: string;
    revoked: string;
    foreign: string;
    cluster: string;
    otherCluster: string;
    operator: string;
    operatorRevoked: string;
    operatorDemoted: string;
    /** User tokens: of the project's owner and viewer, of a stranger, revoked, of a disabled user. */
    userOwner: string;
    userViewer: string;
    userStranger: string;
    userRevoked: string;
    userDisabled: string;
    userOrgMember: string;
  };
  /** Objects the operator routes are aimed at; every name starts with `tag`. */
  tag: string;
  targets: {
    registration: string;
    grantPolicy: string;
    claimPolicy: string;
    claimKind: string;
    increase: string;
    machine: string;
    available: string;
    quarantined: string;
  };
}

type Case =
  | { access: 'public' }
  | { access: 'authed'; input?: (w: World) => unknown }
  | { access: 'project'; minRole: 'viewer' | 'editor' | 'owner'; input: (w: World) => Record<string, unknown> }
  | { access: 'platform'; roles: PlatformRole[]; input: (w: World) => unknown }
  /** Scoped to `input.organization`: strangers NOT_FOUND, organization viewers FORBIDDEN below `minRole`. */
  | { access: 'organization'; minRole: 'member' | 'owner'; input: (w: World) => Record<string, unknown> }
  /** Public, gated by a link's secret: a made-up one is refused (PRECONDITION_FAILED), signed in or not. */
  | { access: 'link'; input: () => unknown };

const p =
  (extra: Record<string, unknown> = {}) =>
  (w: World) => ({ project: w.slug, ...extra });
const uuid = '00000000-0000-4000-8000-000000000000';

/** One entry per tRPC procedure. Adding a procedure without adding it here fails the test. */
export const procedureCases: Record<string, Case> = {
  'me.get': { access: 'public' },
  'me.changePassword': { access: 'authed', input: () => ({ currentPassword: 'not-the-password', newPassword: 'a new password' }) },
  'users.list': { access: 'platform', roles: ['admin'], input: () => undefined },
  'projects.list': { access: 'authed' },
  'projects.get': { access: 'project', minRole: 'viewer', input: p() },
  'projects.deletion': { access: 'project', minRole: 'viewer', input: p() },
  'projects.delete': { access: 'project', minRole: 'owner', input: (w) => ({ project: w.slug, confirm: w.slug }) },
  'projects.update': { access: 'project', minRole: 'owner', input: (w) => ({ project: w.slug, name: 'taken over', description: 'taken over' }) },
  'projects.admin.list': { access: 'platform', roles: ['operator'], input: () => ({}) },
  'projects.create': { access: 'organization', minRole: 'member', input: (w) => ({ organization: w.orgSlug, slug: 'iso-new-project', name: 'x' }) },
  'projects.members.list': { access: 'project', minRole: 'viewer', input: p() },
  'projects.members.viaOrganization': { access: 'project', minRole: 'viewer', input: p() },
  'projects.members.add': { access: 'project', minRole: 'owner', input: (w) => ({ project: w.slug, email: w.stranger.email, role: 'owner' }) },
  'projects.members.setRole': { access: 'project', minRole: 'owner', input: (w) => ({ project: w.slug, userId: w.owner.id, role: 'viewer' }) },
  'projects.members.remove': { access: 'project', minRole: 'owner', input: (w) => ({ project: w.slug, userId: w.owner.id }) },
  // Leaving needs only membership: the viewer case would leave, so it is the stranger (NOT_FOUND) that is checked.
  'projects.members.leave': { access: 'project', minRole: 'viewer', input: p() },
  'projects.invitations.list': { access: 'project', minRole: 'owner', input: p() },
  'projects.invitations.create': { access: 'project', minRole: 'owner', input: p({ email: 'iso-invitee@example.com', role: 'owner' }) },
  'projects.invitations.revoke': { access: 'project', minRole: 'owner', input: p({ id: uuid }) },
  'organizations.list': { access: 'authed' },
  'organizations.create': { access: 'authed', input: () => ({ slug: uniq('iso-org'), name: 'mine' }) },
  'organizations.get': { access: 'organization', minRole: 'member', input: (w) => ({ organization: w.orgSlug }) },
  'organizations.rename': { access: 'organization', minRole: 'owner', input: (w) => ({ organization: w.orgSlug, name: 'taken over' }) },
  'organizations.delete': { access: 'organization', minRole: 'owner', input: (w) => ({ organization: w.orgSlug, confirm: w.orgSlug }) },
  'organizations.members.list': { access: 'organization', minRole: 'member', input: (w) => ({ organization: w.orgSlug }) },
  'organizations.members.add': {
    access: 'organization',
    minRole: 'owner',
    input: (w) => ({ organization: w.orgSlug, email: w.stranger.email, role: 'owner' }),
  },
  'organizations.members.setRole': {
    access: 'organization',
    minRole: 'owner',
    input: (w) => ({ organization: w.orgSlug, userId: w.orgMember.id, role: 'owner' }),
  },
  'organizations.members.remove': { access: 'organization', minRole: 'owner', input: (w) => ({ organization: w.orgSlug, userId: w.orgMember.id }) },
  'organizations.members.leave': { access: 'organization', minRole: 'member', input: (w) => ({ organization: w.orgSlug }) },
  'organizations.invitations.list': { access: 'organization', minRole: 'owner', input: (w) => ({ organization: w.orgSlug }) },
  'organizations.invitations.create': {
    access: 'organization',
    minRole: 'owner',
    input: (w) => ({ organization: w.orgSlug, email: 'iso@example.com', role: 'owner' }),
  },
  'organizations.invitations.revoke': { access: 'organization', minRole: 'owner', input: (w) => ({ organization: w.orgSlug, id: uuid }) },
  'invitations.preview': { access: 'link', input: () => ({ token: 'inv_made-up' }) },
  'invitations.accept': { access: 'authed', input: () => ({ token: 'inv_made-up' }) },
  'invitations.acceptNew': { access: 'link', input: () => ({ token: 'inv_made-up', name: 'N', password: 'a long password' }) },
  'users.unverified': { access: 'platform', roles: ['admin'], input: () => undefined },
  'users.verifyEmail': { access: 'platform', roles: ['admin'], input: (w) => ({ userId: w.owner.id }) },
  'users.setDisabled': { access: 'platform', roles: ['admin'], input: (w) => ({ userId: w.owner.id, disabled: true }) },
  'users.resetPassword': { access: 'platform', roles: ['admin'], input: (w) => ({ userId: w.owner.id }) },
  'users.setPlatformRoles': { access: 'platform', roles: ['admin'], input: (w) => ({ userId: w.owner.id, roles: ['admin'] }) },
  'users.delete': { access: 'platform', roles: ['admin'], input: (w) => ({ userId: w.owner.id }) },
  'users.passwordReset.preview': { access: 'link', input: () => ({ token: 'pwr_made-up' }) },
  'users.passwordReset.use': { access: 'link', input: () => ({ token: 'pwr_made-up', newPassword: 'a long password' }) },
  'tokens.user.list': { access: 'authed' },
  'tokens.user.create': { access: 'authed', input: () => ({ name: 'mine' }) },
  'tokens.user.revoke': { access: 'authed', input: () => ({ id: uuid }) },
  // Another user's sessions: only an admin may see or end them (server/tenancy/sessions.test.ts).
  'sessions.list': { access: 'authed', input: (w) => ({ userId: w.owner.id }) },
  'sessions.revoke': { access: 'authed', input: (w) => ({ userId: w.owner.id, id: uuid }) },
  'sessions.revokeAll': { access: 'authed', input: (w) => ({ userId: w.owner.id }) },
  'tokens.list': { access: 'project', minRole: 'viewer', input: p() },
  'tokens.kubeApi': { access: 'project', minRole: 'viewer', input: p() },
  'tokens.create': { access: 'project', minRole: 'owner', input: p({ name: 'x' }) },
  'tokens.revoke': { access: 'project', minRole: 'owner', input: p({ id: uuid }) },
  'tokens.operator.list': { access: 'platform', roles: ['operator'], input: () => undefined },
  'tokens.operator.create': { access: 'platform', roles: ['operator'], input: () => ({ name: 'x' }) },
  'tokens.operator.revoke': { access: 'platform', roles: ['operator'], input: () => ({ id: uuid }) },
  'audit.list': { access: 'platform', roles: ['operator', 'admin'], input: () => ({ limit: 5 }) },
  'audit.project': { access: 'project', minRole: 'viewer', input: p({ limit: 5 }) },
  // Names of actions and object kinds only; the projects list is empty unless operator or admin.
  'audit.filterChoices': { access: 'authed' },
  'ipam.networks.list': { access: 'project', minRole: 'viewer', input: p() },
  'ipam.networks.get': { access: 'project', minRole: 'viewer', input: p({ name: 'vpc' }) },
  'capacity.history': { access: 'project', minRole: 'viewer', input: p({ object: 'network', name: 'vpc', range: '24h' }) },
  'capacity.alerts': { access: 'project', minRole: 'viewer', input: p({ firingOnly: false }) },
  'capacity.operatorAlerts': { access: 'platform', roles: ['operator'], input: () => undefined },
  'capacity.fleetHistory': { access: 'platform', roles: ['operator'], input: () => ({ range: '24h' }) },
  'capacity.audit': { access: 'project', minRole: 'viewer', input: p({ network: 'vpc' }) },
  'capacity.alertRule': { access: 'project', minRole: 'viewer', input: p() },
  'capacity.setAlertRule': {
    access: 'project',
    minRole: 'editor',
    input: p({ warningPercent: 80, criticalPercent: 95, forecastDays: 7, hysteresisPercent: 5, enabled: true }),
  },
  'capacity.webhooks.list': { access: 'project', minRole: 'viewer', input: p() },
  'capacity.webhooks.create': { access: 'project', minRole: 'owner', input: p({ name: 'w9', url: 'https://8.8.8.8/x' }) },
  'capacity.webhooks.delete': { access: 'project', minRole: 'owner', input: p({ name: 'w1' }) },
  'capacity.webhooks.deliveries': { access: 'project', minRole: 'viewer', input: p({ name: 'w1' }) },
  'capacity.operatorWebhooks.list': { access: 'platform', roles: ['operator'], input: () => undefined },
  'capacity.operatorWebhooks.create': { access: 'platform', roles: ['operator'], input: () => ({ name: 'ops-w9', url: 'https://8.8.8.8/x' }) },
  'capacity.operatorWebhooks.delete': { access: 'platform', roles: ['operator'], input: () => ({ name: 'absent' }) },
  'capacity.operatorWebhooks.deliveries': { access: 'platform', roles: ['operator'], input: () => ({ name: 'absent' }) },
  'ipam.networks.create': { access: 'project', minRole: 'editor', input: p({ name: 'n2', cidrs: [{ cidr: '203.0.113.0/24' }] }) },
  'ipam.networks.delete': { access: 'project', minRole: 'editor', input: p({ name: 'vpc' }) },
  'ipam.networks.map': { access: 'project', minRole: 'viewer', input: p({ network: 'vpc' }) },
  'ipam.pools.available': { access: 'project', minRole: 'viewer', input: p({ network: 'vpc', pool: 'vpc-v4' }) },
  'ipam.pools.create': { access: 'project', minRole: 'editor', input: p({ network: 'vpc', parent: 'vpc-v4', name: 'child', prefixLength: 26 }) },
  'ipam.claims.list': { access: 'project', minRole: 'viewer', input: p() },
  'ipam.claims.get': { access: 'project', minRole: 'viewer', input: p({ name: 'c1' }) },
  'ipam.claims.preview': { access: 'project', minRole: 'editor', input: p({ name: 'c2', network: 'vpc', prefixLength: 28 }) },
  'ipam.claims.create': { access: 'project', minRole: 'editor', input: p({ name: 'c2', network: 'vpc', prefixLength: 28 }) },
  'ipam.claims.delete': { access: 'project', minRole: 'editor', input: p({ name: 'c1' }) },
  'ipam.retained.list': { access: 'project', minRole: 'viewer', input: p() },
  'ipam.retained.release': { access: 'project', minRole: 'editor', input: p({ name: 'r1' }) },
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
  'fleet.machines.cancel': { access: 'project', minRole: 'editor', input: p({ name: 'm1' }) },
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
  'fleet.operations.list': { access: 'platform', roles: ['operator'], input: () => ({}) },
  'fleet.operations.acknowledge': { access: 'platform', roles: ['operator'], input: () => ({ id: 'cleanup-x', note: 'x' }) },
  'fleet.operations.cancel': { access: 'platform', roles: ['operator'], input: () => ({ id: 'cleanup-x', reason: 'x' }) },
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
  'quota.increases.create': {
    access: 'project',
    minRole: 'editor',
    input: p({ resourceType: 'ipam.miloapis.com/ipclaims', amount: 5, reason: 'more please' }),
  },
  'quota.increases.list': { access: 'project', minRole: 'viewer', input: p() },
  'quota.admin.registrations.list': { access: 'platform', roles: ['operator'], input: () => undefined },
  'quota.admin.registrations.create': {
    access: 'platform',
    roles: ['operator'],
    input: () => ({ resourceType: 'test.example.com/things', type: 'Entity', baseUnit: 'things', displayUnit: 'things', claimingKinds: ['Thing'] }),
  },
  'quota.admin.registrations.update': {
    access: 'platform',
    roles: ['operator'],
    input: () => ({ resourceType: 'ipam.miloapis.com/ipclaims', description: 'x' }),
  },
  'quota.admin.registrations.delete': { access: 'platform', roles: ['operator'], input: () => ({ resourceType: 'ipam.miloapis.com/ipclaims' }) },
  'quota.admin.grants.list': { access: 'platform', roles: ['operator'], input: () => ({}) },
  'quota.admin.grants.create': {
    access: 'platform',
    roles: ['operator'],
    input: (w) => ({ project: w.slug, name: 'g2', allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }] }),
  },
  'quota.admin.grants.update': {
    access: 'platform',
    roles: ['operator'],
    input: (w) => ({ project: w.slug, name: `default-${w.slug}`, allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 0 }] }),
  },
  'quota.admin.grants.delete': { access: 'platform', roles: ['operator'], input: (w) => ({ project: w.slug, name: `default-${w.slug}` }) },
  'quota.admin.buckets.list': { access: 'platform', roles: ['operator'], input: () => ({}) },
  'quota.admin.policies.grant.list': { access: 'platform', roles: ['operator'], input: () => undefined },
  'quota.admin.policies.grant.create': {
    access: 'platform',
    roles: ['operator'],
    input: () => ({ name: 'gp', grantNameTemplate: 'x', allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }] }),
  },
  'quota.admin.policies.grant.update': {
    access: 'platform',
    roles: ['operator'],
    input: () => ({ name: 'default-project-quota', grantNameTemplate: 'x', allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }] }),
  },
  'quota.admin.policies.grant.delete': { access: 'platform', roles: ['operator'], input: () => ({ name: 'default-project-quota' }) },
  'quota.admin.policies.claim.list': { access: 'platform', roles: ['operator'], input: () => undefined },
  'quota.admin.policies.claim.create': {
    access: 'platform',
    roles: ['operator'],
    input: () => ({ name: 'cp', triggerKind: 'Thing', claimNameTemplate: 'x', requests: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }] }),
  },
  'quota.admin.policies.claim.update': {
    access: 'platform',
    roles: ['operator'],
    input: () => ({ name: 'ipclaims', triggerKind: 'IPClaim', claimNameTemplate: 'x', requests: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }] }),
  },
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
  if (route.includes('/retainedallocations/{name}')) params.name = 'r1';
  if (route.includes('/machines/{name}')) params.name = 'm1';
  if (route.includes('/pools/{pool}')) params.pool = 'vpc-v4';
  if (route.includes('/webhooks/{name}')) params.name = 'w1';
  return params;
}
const restBodies: Record<string, unknown> = {
  '/api/v1/projects/{project}/webhooks': { name: 'w2', url: 'https://8.8.8.8/meridian' },
  '/api/v1/projects/{project}/capacityalertrules': { warningPercent: 70 },
  '/api/v1/projects/{project}/networks': { metadata: { name: 'n2' }, spec: { cidrs: [{ cidr: '203.0.113.0/24' }] } },
  '/api/v1/projects/{project}/ipclaims': { metadata: { name: 'c2' }, spec: { network: 'vpc', prefixLength: 28 } },
  '/api/v1/projects/{project}/clusters': { name: 'k2', network: 'vpc' },
  '/api/v1/projects/{project}/machines': { metadata: { name: 'm2' }, spec: { class: 'c1.small', profile: 'ubuntu-24.04', location: 'ams1' } },
  '/api/v1/projects/{project}/clusters/{cluster}/cni/{command}': { cniNetwork: 'n', containerId: 'c', ifname: 'eth0', node: 'n1' },
  '/api/v1/projects/{project}/quotaincreaserequests': { spec: { resourceType: 'ipam.miloapis.com/ipclaims', amount: 5, reason: 'more please' } },
};

/**
 * Operator routes: path parameters and bodies aimed at real objects of the world (see beforeAll),
 * so that a route answering without its guard would change something the snapshot sees. One entry
 * per operator route in the catalog; a route without one fails the test.
 */
const operatorRouteCases: Record<string, { params?: (w: World) => Record<string, string>; body?: (w: World) => unknown }> = {
  'GET /api/v1/resourceregistrations': {},
  'GET /api/v1/capacityalerts': {},
  'GET /api/v1/webhooks': {},
  'POST /api/v1/webhooks': { body: (w) => ({ name: `${w.tag}-hook2`, url: 'https://8.8.8.8/meridian' }) },
  'DELETE /api/v1/webhooks/{name}': { params: (w) => ({ name: `${w.tag}-hook` }) },
  'GET /api/v1/webhooks/{name}/deliveries': { params: (w) => ({ name: `${w.tag}-hook` }) },
  'POST /api/v1/resourceregistrations': {
    body: (w) => ({ spec: { resourceType: `${w.tag}.example.com/others`, type: 'Entity', baseUnit: 'x', displayUnit: 'x', claimingKinds: ['Other'] } }),
  },
  'GET /api/v1/resourceregistrations/{group}/{resource}': { params: (w) => registrationParams(w) },
  'PATCH /api/v1/resourceregistrations/{group}/{resource}': { params: (w) => registrationParams(w), body: () => ({ spec: { description: 'changed' } }) },
  'DELETE /api/v1/resourceregistrations/{group}/{resource}': { params: (w) => registrationParams(w) },
  'POST /api/v1/projects/{project}/resourcegrants': {
    params: (w) => ({ project: w.slug }),
    body: () => ({ metadata: { name: 'iso-extra' }, spec: { allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 5 }] } }),
  },
  'PUT /api/v1/projects/{project}/resourcegrants/{name}': {
    params: (w) => ({ project: w.slug, name: `default-${w.slug}` }),
    body: () => ({ spec: { allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 0 }] } }),
  },
  'DELETE /api/v1/projects/{project}/resourcegrants/{name}': { params: (w) => ({ project: w.slug, name: `default-${w.slug}` }) },
  'GET /api/v1/grantcreationpolicies': {},
  'POST /api/v1/grantcreationpolicies': {
    body: (w) => ({
      metadata: { name: `${w.tag}-gp2` },
      spec: { grantNameTemplate: 'x', allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }], enabled: false },
    }),
  },
  'PUT /api/v1/grantcreationpolicies/{name}': {
    params: (w) => ({ name: w.targets.grantPolicy }),
    body: () => ({ spec: { grantNameTemplate: 'changed', allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 2 }], enabled: false } }),
  },
  'DELETE /api/v1/grantcreationpolicies/{name}': { params: (w) => ({ name: w.targets.grantPolicy }) },
  'GET /api/v1/claimcreationpolicies': {},
  'POST /api/v1/claimcreationpolicies': {
    body: (w) => ({
      metadata: { name: `${w.tag}-cp2` },
      spec: {
        triggerKind: `${w.targets.claimKind}Two`,
        claimNameTemplate: 'x',
        requests: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }],
        enabled: false,
      },
    }),
  },
  'PUT /api/v1/claimcreationpolicies/{name}': {
    params: (w) => ({ name: w.targets.claimPolicy }),
    body: (w) => ({
      spec: {
        triggerKind: w.targets.claimKind,
        claimNameTemplate: 'changed',
        requests: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 2 }],
        enabled: false,
      },
    }),
  },
  'DELETE /api/v1/claimcreationpolicies/{name}': { params: (w) => ({ name: w.targets.claimPolicy }) },
  'GET /api/v1/quotaincreaserequests': {},
  'POST /api/v1/quotaincreaserequests/{name}/approve': { params: (w) => ({ name: w.targets.increase }), body: () => ({}) },
  'POST /api/v1/quotaincreaserequests/{name}/reject': { params: (w) => ({ name: w.targets.increase }), body: () => ({ reason: 'no' }) },
  'GET /api/v1/machinerequests': {},
  'POST /api/v1/projects/{project}/machines/{name}/approve': { params: (w) => ({ project: w.slug, name: w.targets.machine }) },
  'POST /api/v1/projects/{project}/machines/{name}/reject': { params: (w) => ({ project: w.slug, name: w.targets.machine }), body: () => ({ reason: 'no' }) },
  'POST /api/v1/projects/{project}/machines/{name}/release': {
    params: (w) => ({ project: w.slug, name: w.targets.machine }),
    body: () => ({ force: true, reason: 'x' }),
  },
  'GET /api/v1/machinecapacities': {},
  'POST /api/v1/machinecapacities/{name}/quarantine': { params: (w) => ({ name: w.targets.available }), body: () => ({ reason: 'x' }) },
  'POST /api/v1/machinecapacities/{name}/return': { params: (w) => ({ name: w.targets.quarantined }), body: () => ({}) },
  'POST /api/v1/machinecapacities/{name}/retire': { params: (w) => ({ name: w.targets.available }), body: () => ({ reason: 'x' }) },
};

/**
 * User routes (user and operator tokens): path parameters and bodies aimed at the victim's
 * organization and project. `scoped`: the route addresses one of them (a stranger gets 404);
 * otherwise it lists or creates the caller's own. `minRole` owner: the project's viewer is refused.
 */
const userRouteCases: Record<string, { params: (w: World) => Record<string, string>; body?: (w: World) => unknown; scoped: boolean; minRole?: 'owner' }> = {
  'GET /api/v1/organizations': { params: () => ({}), scoped: false },
  'POST /api/v1/organizations': { params: () => ({}), body: () => ({ metadata: { name: uniq('iso-org') }, spec: { displayName: 'Mine' } }), scoped: false },
  'GET /api/v1/organizations/{organization}': { params: (w) => ({ organization: w.orgSlug }), scoped: true },
  'PATCH /api/v1/organizations/{organization}': {
    params: (w) => ({ organization: w.orgSlug }),
    body: () => ({ spec: { displayName: 'taken' } }),
    scoped: true,
    minRole: 'owner',
  },
  'DELETE /api/v1/organizations/{organization}': { params: (w) => ({ organization: w.orgSlug }), scoped: true, minRole: 'owner' },
  'GET /api/v1/organizations/{organization}/members': { params: (w) => ({ organization: w.orgSlug }), scoped: true },
  'PUT /api/v1/organizations/{organization}/members/{user}': {
    params: (w) => ({ organization: w.orgSlug, user: w.stranger.email }),
    body: () => ({ spec: { role: 'owner' } }),
    scoped: true,
    minRole: 'owner',
  },
  'DELETE /api/v1/organizations/{organization}/members/{user}': {
    params: (w) => ({ organization: w.orgSlug, user: w.orgMember.email }),
    scoped: true,
    minRole: 'owner',
  },
  'GET /api/v1/organizations/{organization}/invitations': { params: (w) => ({ organization: w.orgSlug }), scoped: true, minRole: 'owner' },
  'POST /api/v1/organizations/{organization}/invitations': {
    params: (w) => ({ organization: w.orgSlug }),
    body: () => ({ spec: { email: 'iso@example.com', role: 'owner' } }),
    scoped: true,
    minRole: 'owner',
  },
  'DELETE /api/v1/organizations/{organization}/invitations/{id}': { params: (w) => ({ organization: w.orgSlug, id: uuid }), scoped: true, minRole: 'owner' },
  'GET /api/v1/projects': { params: () => ({}), scoped: false },
  'POST /api/v1/projects': {
    params: () => ({}),
    body: (w) => ({ metadata: { name: 'iso-new-project', organization: w.orgSlug }, spec: { displayName: 'x' } }),
    scoped: true,
  },
  'GET /api/v1/projects/{project}/members': { params: (w) => ({ project: w.slug }), scoped: true },
  'PUT /api/v1/projects/{project}/members/{user}': {
    params: (w) => ({ project: w.slug, user: w.stranger.email }),
    body: () => ({ spec: { role: 'owner' } }),
    scoped: true,
    minRole: 'owner',
  },
  'DELETE /api/v1/projects/{project}/members/{user}': { params: (w) => ({ project: w.slug, user: w.owner.email }), scoped: true, minRole: 'owner' },
  'GET /api/v1/projects/{project}/invitations': { params: (w) => ({ project: w.slug }), scoped: true, minRole: 'owner' },
  'POST /api/v1/projects/{project}/invitations': {
    params: (w) => ({ project: w.slug }),
    body: () => ({ spec: { email: 'iso@example.com', role: 'owner' } }),
    scoped: true,
    minRole: 'owner',
  },
  'DELETE /api/v1/projects/{project}/invitations/{id}': { params: (w) => ({ project: w.slug, id: uuid }), scoped: true, minRole: 'owner' },
};

function registrationParams(w: World) {
  const [group, resource] = w.targets.registration.split('/');
  return { group, resource };
}

let world: World;

/**
 * The victim project's tenant tables and quota books, and the world's own platform objects
 * (registration, policies, capacity, operator tokens): "nothing changed" means these are equal.
 * Scoped to the world because other test files share the database and write concurrently.
 */
async function snapshot(projectId: string) {
  const { db } = testDb();
  const tag = `${world.tag}%`;
  const [row] = (await db.execute(sql`
    select (select count(*) from networks where project_id = ${projectId})::int as networks,
           (select count(*) from ip_pools where project_id = ${projectId})::int as pools,
           (select count(*) from ip_claims where project_id = ${projectId})::int as claims,
           (select count(*) from ip_allocations where project_id = ${projectId})::int as allocations,
           (select count(*) from clusters where project_id = ${projectId})::int as clusters,
           (select count(*) from pod_leases where project_id = ${projectId})::int as leases,
           (select count(*) from machines where project_id = ${projectId})::int as machines,
           (select count(*) from api_tokens where project_id = ${projectId} and revoked_at is null)::int as tokens,
           (select count(*) from events where project_id = ${projectId})::int as events,
           (select string_agg(name || '=' || allowances::text, ';' order by name) from resource_grants where project_id = ${projectId}) as grants,
           (select string_agg(resource_type || '=' || "limit" || '/' || allocated, ';' order by resource_type) from allowance_buckets where project_id = ${projectId}) as buckets,
           (select string_agg(id || '=' || status, ';' order by id) from quota_increase_requests where project_id = ${projectId}) as increases,
           (select string_agg(name || '=' || phase || coalesce(deletion_requested_at::text, '') || coalesce(approved_at::text, ''), ';' order by name) from machines where project_id = ${projectId}) as machinePhases,
           (select string_agg(device_ref || '=' || state, ';' order by device_ref) from machine_capacity where device_ref like ${tag}) as capacity,
           (select string_agg(resource_type || '=' || description, ';' order by resource_type) from resource_registrations where resource_type like ${tag}) as registrations,
           (select string_agg(name || '=' || generation, ';' order by name) from grant_creation_policies where name like ${tag}) as grantPolicies,
           (select string_agg(name || '=' || generation, ';' order by name) from claim_creation_policies where name like ${tag}) as claimPolicies,
           (select count(*) from api_tokens where user_id = ${world.operator.id} and revoked_at is null)::int as operatorTokens,
           (select count(*) from events where object_name like ${tag})::int as platformEvents,
           (select string_agg(user_id || '=' || role, ';' order by user_id) from memberships where project_id = ${projectId} or organization_id = ${world.orgId}) as members,
           (select count(*) from invitations where (project_id = ${projectId} or organization_id = ${world.orgId}) and revoked_at is null)::int as invitations,
           (select string_agg(slug || '=' || name, ';') from organizations where id = ${world.orgId}) as organization,
           (select count(*) from projects where organization_id = ${world.orgId})::int as orgProjects,
           (select name || '=' || description from projects where id = ${projectId}) as project,
           (select string_agg(email || '=' || platform_roles::text || (disabled_at is not null)::text, ';' order by email) from users where id in (${world.owner.id}, ${world.viewer.id}, ${world.orgMember.id})) as users,
           (select count(*) from password_resets where user_id = ${world.owner.id})::int as resets`)) as unknown as Record<string, number | string | null>[];
  return row;
}

beforeAll(async () => {
  const { db } = testDb();
  const victim = await makeProject(db);
  const other = await makeProject(db);
  await createNetwork(db, victim.project.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24' }] }, actor);
  await createClaim(db, victim.project.id, { name: 'c1', network: 'vpc', prefixLength: 28, reclaimPolicy: 'Delete' }, actor);
  // A retained allocation ("r1") for the release routes to aim at: released, it would leave the snapshot's allocations.
  await createClaim(db, victim.project.id, { name: 'r1', network: 'vpc', prefixLength: 28, reclaimPolicy: 'Retain' }, actor);
  await deleteClaim(db, victim.project.id, 'r1', actor);
  await createCluster(db, victim.project.id, { name: 'k1', network: 'vpc' }, actor);
  const owner = await makeUser(db, { projectId: victim.project.id, role: 'owner' });
  const viewer = await makeUser(db, { projectId: victim.project.id, role: 'viewer' });
  const stranger = await makeUser(db, { projectId: other.project.id, role: 'owner' });
  const orgMember = await makeUser(db);
  await addMembership(db, { userId: orgMember.id, role: 'member', organizationId: victim.org.id }, actor);
  const userToken = (userId: string) => createUserToken(db, { userId, name: 'me' }, actor);
  const userRevoked = await userToken(owner.id);
  await revokeUserToken(db, owner.id, userRevoked.id, actor);
  const disabled = await makeUser(db, { projectId: victim.project.id, role: 'owner' });
  const userDisabled = await userToken(disabled.id);
  await setUserDisabled(db, disabled.id, true, actor);
  const tok = (projectId: string, extra: { role?: 'viewer' | 'editor' | 'owner'; clusterName?: string } = {}) =>
    createApiToken(db, { projectId, name: 't', ...extra }, actor);
  const revoked = await tok(victim.project.id);
  await revokeApiToken(db, victim.project.id, revoked.id, actor);

  // Operators: one in good standing, one whose token was revoked, one who lost the role.
  const operator = await makeUser(db, { platformRoles: ['operator'] });
  const opToken = (userId: string) => createOperatorToken(db, { userId, name: 'ops' }, actor);
  const operatorRevoked = await opToken(operator.id);
  await revokeOperatorToken(db, operatorRevoked.id, actor);
  const demoted = await makeUser(db, { platformRoles: ['operator'] });
  const operatorDemoted = await opToken(demoted.id);
  await db
    .update(users)
    .set({ platformRoles: [] })
    .where(sql`id = ${demoted.id}`);

  // What the operator routes are aimed at: a registration nothing uses, disabled policies, a
  // pending increase request and a machine awaiting approval in the victim project, and capacity
  // (one Available, one Quarantined) in a location of the world's own.
  const tag = uniq('iso');
  await createWebhookEndpoint(db, { projectId: null, name: `${tag}-hook`, url: 'https://8.8.8.8/operators' }, actor, {
    allowHttp: false,
    allowList: null,
    resolve: () => Promise.reject(new Error('not resolved in tests')),
  });
  const registration = await createRegistration(
    db,
    {
      resourceType: `${tag}.example.com/things`,
      consumerKind: 'Project',
      type: 'Entity',
      description: 'isolation',
      baseUnit: 'x',
      displayUnit: 'x',
      unitConversionFactor: 1,
      claimingKinds: ['Thing'],
    },
    actor,
  );
  const grantPolicy = await createGrantPolicy(
    db,
    {
      name: `${tag}-gp`,
      description: '',
      constraints: [],
      grantNameTemplate: 'x',
      allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }],
      enabled: false,
    },
    actor,
  );
  const claimKind = `Iso${tag.replace(/[^a-z0-9]/g, '')}`;
  const claimPolicy = await createClaimPolicy(
    db,
    {
      name: `${tag}-cp`,
      description: '',
      triggerKind: claimKind,
      constraints: [],
      claimNameTemplate: 'x',
      requests: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }],
      enabled: false,
    },
    actor,
  );
  const increase = await createIncreaseRequest(
    db,
    victim.project.id,
    { resourceType: 'metal.datumapis.com/machines', amount: 2, reason: 'more machines' },
    actor,
  );
  const [loc] = await db.insert(locations).values({ name: tag, displayName: tag }).returning({ id: locations.id });
  await db.insert(serviceAvailability).values({ locationId: loc.id, service: 'machines', status: 'Available' });
  const [cls] = await db
    .insert(machineClasses)
    .values({ name: `${tag}.cls`, cores: 8, memoryGib: 32, arch: 'x86_64', requiresApproval: true })
    .returning({ id: machineClasses.id });
  const digest = 'sha256:' + 'ef'.repeat(32);
  await db.insert(machineProfiles).values({ name: `${tag}-os`, imageRef: `example/os@${digest}`, imageDigest: digest });
  const [available] = await db
    .insert(machineCapacity)
    .values({ deviceRef: `${tag}-dev-0`, classId: cls.id, locationId: loc.id })
    .returning({ id: machineCapacity.id, deviceRef: machineCapacity.deviceRef });
  const [quarantined] = await db
    .insert(machineCapacity)
    .values({ deviceRef: `${tag}-dev-1`, classId: cls.id, locationId: loc.id })
    .returning({ id: machineCapacity.id, deviceRef: machineCapacity.deviceRef });
  await setCapacityState(db, quarantined.id, 'quarantine', 'isolation', actor);
  const machine = await requestMachine(
    db,
    victim.project.id,
    { name: 'm-approve', class: `${tag}.cls`, profile: `${tag}-os`, location: tag, interfaces: [], desiredPower: 'on' },
    actor,
  );
  expect(machine.phase).toBe('AwaitingApproval');

  world = {
    slug: victim.project.slug,
    projectId: victim.project.id,
    orgSlug: victim.org.slug,
    orgId: victim.org.id,
    orgMember,
    owner,
    viewer,
    stranger,
    operator,
    tokens: {
      editor: (await tok(victim.project.id)).secret,
      viewer: (await tok(victim.project.id, { role: 'viewer' })).secret,
      owner: (await tok(victim.project.id, { role: 'owner' })).secret,
      revoked: revoked.secret,
      foreign: (await tok(other.project.id)).secret,
      cluster: (await tok(victim.project.id, { clusterName: 'k1' })).secret,
      otherCluster: (await tok(victim.project.id, { clusterName: 'k9' })).secret,
      operator: (await opToken(operator.id)).secret,
      operatorRevoked: operatorRevoked.secret,
      operatorDemoted: operatorDemoted.secret,
      userOwner: (await userToken(owner.id)).secret,
      userViewer: (await userToken(viewer.id)).secret,
      userStranger: (await userToken(stranger.id)).secret,
      userRevoked: userRevoked.secret,
      userDisabled: userDisabled.secret,
      userOrgMember: (await userToken(orgMember.id)).secret,
    },
    tag,
    targets: {
      registration: registration.resourceType,
      grantPolicy: grantPolicy!.name,
      claimPolicy: claimPolicy!.name,
      claimKind,
      increase: increase.id,
      machine: machine.name,
      available: available.deviceRef,
      quarantined: quarantined.deviceRef,
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
    } else if (c.access === 'organization') {
      const input = c.input(world);
      const out = await callProcedure(null, name, input);
      expect(out.ok ? 'answered' : out.error.code).toBe('UNAUTHORIZED');
      const foreign = await callProcedure(world.stranger, name, input);
      expect(foreign.ok ? 'answered' : foreign.error.code).toBe('NOT_FOUND');
      expect(foreign.ok ? '' : foreign.error.message).toBe(`organization "${world.orgSlug}" not found`);
      // A project owner is no member of the organization: the same.
      const projectOwner = await callProcedure(world.owner, name, input);
      expect(projectOwner.ok ? 'answered' : projectOwner.error.code).toBe('NOT_FOUND');
      if (c.minRole !== 'member') {
        const low = await callProcedure(world.orgMember, name, input);
        expect(low.ok ? 'answered' : low.error.code).toBe('FORBIDDEN');
      }
    } else if (c.access === 'link') {
      for (const user of [null, world.stranger]) {
        const r = await callProcedure(user, name, c.input());
        expect(r.ok ? 'answered' : r.error.code).toBe('PRECONDITION_FAILED');
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

type RouteHandler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

function routeHandler(route: RestRoute): RouteHandler {
  return routeHandlers(route.path)[route.method] as RouteHandler;
}

/** The least project role a route needs ('operator': operator tokens only). */
const minRole = (r: RestRoute) => ('minRole' in r.auth ? r.auth.minRole : r.auth.kind === 'operator' ? 'operator' : 'viewer');

/** Calls a route as `token` (or anonymously) with the given path parameters and body. */
function caller(route: RestRoute, handler: RouteHandler, params: Record<string, string>, body: unknown) {
  return async (token: string | null) => {
    const res = await handler(
      new Request(`http://localhost${route.path}`, {
        method: route.method,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body !== undefined && route.method !== 'GET' ? JSON.stringify(body) : undefined,
      }),
      { params: Promise.resolve(params) },
    );
    const text = await res.text();
    return { status: res.status, text };
  };
}

describe('REST isolation', () => {
  const key = (r: RestRoute) => `${r.method} ${r.path}`;
  const tenantRoutes = apiRoutes.filter((r) => r.auth.kind !== 'operator' && r.auth.kind !== 'user').map(key);
  const userRoutes = apiRoutes.filter((r) => r.auth.kind === 'user').map(key);
  const operatorRoutes = apiRoutes.filter((r) => r.auth.kind === 'operator').map(key);

  test('every operator route has an isolation case', () => {
    expect(
      operatorRoutes.filter((r) => !(r in operatorRouteCases)),
      'add these to operatorRouteCases in server/security/isolation.test.ts',
    ).toEqual([]);
    expect(
      Object.keys(operatorRouteCases).filter((r) => !operatorRoutes.includes(r)),
      'stale operatorRouteCases',
    ).toEqual([]);
  });

  test.each(tenantRoutes)('%s refuses unauthenticated, revoked, foreign, read-only, out-of-cluster and operator tokens', async (k) => {
    const route = apiRoutes.find((r) => key(r) === k)!;
    const call = caller(route, routeHandler(route), restParams(route.path, world), restBodies[route.path]);
    const before = await snapshot(world.projectId);
    const anonymous = await call(null);
    if (route.group.name === 'core' && !route.path.includes('{project}')) {
      expect(anonymous.status).toBe(401);
    } else {
      expect((await call(null)).status).toBe(401);
      expect((await call(world.tokens.revoked)).status).toBe(401);
      const foreign = await call(world.tokens.foreign);
      expect(foreign.status).toBe(404);
      expect(foreign.text).not.toContain('192.0.2');
      if (minRole(route) === 'editor' || minRole(route) === 'owner') expect((await call(world.tokens.viewer)).status).toBe(403);
      if (minRole(route) === 'owner') {
        expect((await call(world.tokens.editor)).status).toBe(403);
        expect((await call(world.tokens.cluster)).status).toBe(403);
      }
      if (route.path.includes('{cluster}')) {
        const outside = await call(world.tokens.otherCluster);
        expect(outside.status).toBe(404);
        expect(outside.text).not.toContain('192.0.2');
      }
      // An operator token is not a member of any project: refused, unless the route is a read opened to operators.
      const operator = route.auth.kind === 'projectOrOperator' ? null : await call(world.tokens.operator);
      if (!operator) {
        // A write operators may make on any project (deleting it): answered for them, so it is
        // exercised on throwaway projects (see 'project deletion is for owners and operators').
      } else if (route.auth.kind === 'projectRead') {
        expect(route.method).toBe('GET');
        expect(operator.status).toBe(200);
      } else {
        expect(operator.status).toBe(403);
        expect(operator.text).not.toContain('192.0.2');
      }
      for (const t of [world.tokens.operatorRevoked, world.tokens.operatorDemoted]) expect((await call(t)).status).toBe(401);
    }
    expect(await snapshot(world.projectId)).toEqual(before);
  });

  test.each(userRoutes)('%s refuses project tokens, strangers, members below the role, revoked and disabled users', async (k) => {
    const route = apiRoutes.find((r) => key(r) === k)!;
    const c = userRouteCases[k];
    expect(c, 'add this route to userRouteCases in server/security/isolation.test.ts').toBeDefined();
    const call = caller(route, routeHandler(route), c.params(world), c.body?.(world));
    const before = await snapshot(world.projectId);
    for (const token of [null, world.tokens.revoked, world.tokens.userRevoked, world.tokens.userDisabled]) expect((await call(token)).status).toBe(401);
    const t = world.tokens;
    for (const [who, token] of Object.entries({ editor: t.editor, owner: t.owner, viewer: t.viewer, foreign: t.foreign, cluster: t.cluster })) {
      const r = await call(token);
      expect({ who, status: r.status }).toEqual({ who, status: 403 });
      for (const secret of [world.owner.email, '192.0.2']) expect(r.text).not.toContain(secret);
    }
    const stranger = await call(t.userStranger);
    if (c.scoped) {
      expect(stranger.status).toBe(404);
      expect(stranger.text).not.toContain(world.owner.email);
    } else {
      // Lists and creates act on the stranger's own things: nothing of the victim's shows.
      expect(stranger.status).toBeLessThan(300);
      expect(stranger.text).not.toContain(world.slug);
    }
    if (c.minRole === 'owner') {
      const viewer = await call(t.userViewer);
      expect(viewer.status).toBe(c.params(world).organization ? 404 : 403);
    }
    expect(await snapshot(world.projectId)).toEqual(before);
  });

  test('user routes are answered for the members they act for: the guards are what refuse', async () => {
    for (const k of userRoutes.filter((r) => r.startsWith('GET '))) {
      const route = apiRoutes.find((r) => key(r) === k)!;
      const token = route.path.includes('{organization}') ? world.tokens.userOrgMember : world.tokens.userOwner;
      const minRole = userRouteCases[k].minRole;
      const r = await caller(route, routeHandler(route), userRouteCases[k].params(world), undefined)(token);
      // The organization's member is below the owner role its invitation list needs.
      expect({ k, status: r.status }).toEqual({ k, status: minRole === 'owner' && route.path.includes('{organization}') ? 403 : 200 });
    }
  });

  test.each(operatorRoutes)('%s refuses project, cluster, revoked and demoted-operator tokens, and anonymous calls', async (k) => {
    const route = apiRoutes.find((r) => key(r) === k)!;
    const c = operatorRouteCases[k];
    if (!c) return; // reported by the coverage test above
    const call = caller(route, routeHandler(route), c.params?.(world) ?? {}, c.body?.(world));
    const before = await snapshot(world.projectId);
    for (const token of [null, world.tokens.revoked, world.tokens.operatorRevoked, world.tokens.operatorDemoted]) {
      const r = await call(token);
      expect(r.status).toBe(401);
      expect(Object.keys(JSON.parse(r.text))).toEqual(['error']);
    }
    const t = world.tokens;
    for (const [who, token] of Object.entries({
      editor: t.editor,
      owner: t.owner,
      viewer: t.viewer,
      foreign: t.foreign,
      cluster: t.cluster,
      otherCluster: t.otherCluster,
    })) {
      const r = await call(token);
      expect({ who, status: r.status }).toEqual({ who, status: 403 });
      const body = JSON.parse(r.text) as { error: { code: string } };
      expect(Object.keys(body)).toEqual(['error']);
      expect(body.error.code).toBe('Forbidden');
      for (const secret of [world.slug, world.tag, world.targets.increase, '192.0.2']) expect(r.text).not.toContain(secret);
    }
    expect(await snapshot(world.projectId)).toEqual(before);
  });

  test('the guards are what refuse: the same calls with a valid operator token are answered', async () => {
    // Reads only (the writes' targets must stay untouched for the other cases): proves the cases
    // above are aimed at routes that work, so a refusal is the guard and not a broken request.
    for (const k of operatorRoutes.filter((r) => r.startsWith('GET '))) {
      const route = apiRoutes.find((r) => key(r) === k)!;
      const c = operatorRouteCases[k] ?? {};
      const r = await caller(route, routeHandler(route), c.params?.(world) ?? {}, undefined)(world.tokens.operator);
      expect({ k, status: r.status }).toEqual({ k, status: 200 });
    }
  });
});

describe('project deletion is for owners and operators', () => {
  const deleteRoute = apiRoutes.find((r) => r.method === 'DELETE' && r.path === '/api/v1/projects/{project}')!;
  const phaseOf = async (projectId: string) =>
    ((await testDb().db.execute(sql`select phase from projects where id = ${projectId}`)) as unknown as { phase: string }[])[0]?.phase;

  test('REST: an owner token deletes its own project, an operator token any project; editors and cluster tokens cannot', async () => {
    const { db } = testDb();
    const handler = routeHandler(deleteRoute);
    const mine = await makeProject(db);
    const theirs = await makeProject(db);
    const editor = await createApiToken(db, { projectId: mine.project.id, name: 'e', role: 'editor' }, actor);
    const clusterOwner = await createApiToken(db, { projectId: mine.project.id, name: 'k', role: 'owner', clusterName: 'k1' }, actor);
    const owner = await createApiToken(db, { projectId: mine.project.id, name: 'o', role: 'owner' }, actor);
    const call = (slug: string) => caller(deleteRoute, handler, { project: slug }, undefined);
    expect((await call(mine.project.slug)(editor.secret)).status).toBe(403);
    expect((await call(mine.project.slug)(clusterOwner.secret)).status).toBe(403);
    expect((await call(theirs.project.slug)(owner.secret)).status).toBe(404);
    expect(await phaseOf(mine.project.id)).toBe('Active');
    expect(await phaseOf(theirs.project.id)).toBe('Active');

    const byOwner = await call(mine.project.slug)(owner.secret);
    expect(byOwner.status).toBe(202);
    expect(JSON.parse(byOwner.text)).toMatchObject({ kind: 'Project', metadata: { name: mine.project.slug }, status: { phase: 'Deleting' } });
    // The token that asked is revoked with the others: the project's tokens stop at once.
    expect((await call(mine.project.slug)(owner.secret)).status).toBe(401);

    const byOperator = await call(theirs.project.slug)(world.tokens.operator);
    expect(byOperator.status).toBe(202);
    expect(await phaseOf(theirs.project.id)).toBe('Deleting');
    expect((await call('no-such-project')(world.tokens.operator)).status).toBe(404);
  });

  test('REST: a project is renamed by its owners (project or user token) and operators; editors, cluster tokens, strangers and non-owners cannot', async () => {
    const { db } = testDb();
    const patchRoute = apiRoutes.find((r) => r.method === 'PATCH' && r.path === '/api/v1/projects/{project}')!;
    const mine = await makeProject(db);
    const theirs = await makeProject(db);
    const nameOf = async () => ((await db.execute(sql`select name from projects where id = ${mine.project.id}`)) as unknown as { name: string }[])[0].name;
    const editor = await createApiToken(db, { projectId: mine.project.id, name: 'e', role: 'editor' }, actor);
    const clusterOwner = await createApiToken(db, { projectId: mine.project.id, name: 'k', role: 'owner', clusterName: 'k1' }, actor);
    const owner = await createApiToken(db, { projectId: mine.project.id, name: 'o', role: 'owner' }, actor);
    const editorUser = await makeUser(db, { projectId: mine.project.id, role: 'editor' });
    const ownerUser = await makeUser(db, { projectId: mine.project.id, role: 'owner' });
    const userToken = async (id: string) => (await createUserToken(db, { userId: id, name: 'me' }, actor)).secret;
    const call = (slug: string, displayName: string) =>
      caller(patchRoute, routeHandler(patchRoute), { project: slug }, { spec: { displayName, description: 'about' } });
    for (const t of [editor.secret, clusterOwner.secret, await userToken(editorUser.id)]) expect((await call(mine.project.slug, 'no')(t)).status).toBe(403);
    expect((await call(theirs.project.slug, 'no')(owner.secret)).status).toBe(404);
    expect((await call(mine.project.slug, 'no')(world.tokens.userStranger)).status).toBe(404);
    expect(await nameOf()).toBe(mine.project.slug);
    const byOwner = await call(mine.project.slug, 'By owner token')(owner.secret);
    expect(byOwner.status).toBe(200);
    expect(JSON.parse(byOwner.text)).toMatchObject({ kind: 'Project', spec: { displayName: 'By owner token', description: 'about' } });
    expect((await call(mine.project.slug, 'By owner user')(await userToken(ownerUser.id))).status).toBe(200);
    expect(await nameOf()).toBe('By owner user');
    expect((await call(mine.project.slug, 'By operator')(world.tokens.operator)).status).toBe(200);
    expect(await nameOf()).toBe('By operator');
  });

  test('tRPC: owners and operators delete (the slug repeated to confirm); editors are refused; the world is untouched', async () => {
    const { db } = testDb();
    const before = await snapshot(world.projectId);
    const a = await makeProject(db);
    const b = await makeProject(db);
    const editor = await makeUser(db, { projectId: a.project.id, role: 'editor' });
    const owner = await makeUser(db, { projectId: a.project.id, role: 'owner' });
    const refused = await callProcedure(editor, 'projects.delete', { project: a.project.slug, confirm: a.project.slug });
    expect(refused.ok ? 'answered' : refused.error.code).toBe('FORBIDDEN');
    const unconfirmed = await callProcedure(owner, 'projects.delete', { project: a.project.slug, confirm: 'nope' });
    expect(unconfirmed.ok ? 'answered' : unconfirmed.error.code).toBe('BAD_REQUEST');
    expect(await phaseOf(a.project.id)).toBe('Active');
    const done = await callProcedure(owner, 'projects.delete', { project: a.project.slug, confirm: a.project.slug });
    expect(done.ok && (done.data as { phase: string }).phase).toBe('Deleting');
    const byOperator = await callProcedure(world.operator, 'projects.delete', { project: b.project.slug, confirm: b.project.slug });
    expect(byOperator.ok && (byOperator.data as { phase: string }).phase).toBe('Deleting');
    expect(await snapshot(world.projectId)).toEqual(before);
  });
});
