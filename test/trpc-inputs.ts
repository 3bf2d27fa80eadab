/**
 * A valid input for every tRPC procedure, for the suites that call each of them (strict input,
 * error bodies). A procedure added without an entry here fails those suites' first test.
 */
import { randomUUID } from 'node:crypto';
import type { SessionUser } from '@/server/tenancy/roles';

/** What the inputs name: the caller, its project and a tag private to the calling suite. */
export interface World {
  user: SessionUser;
  project: string;
  projectId: string;
  tag: string;
}

const id = () => randomUUID();
const allowances = [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }];

/**
 * A valid input per procedure (`undefined`: the procedure takes none). Creates name new objects,
 * so that without strict input the call would write; everything else names objects that do not
 * exist, so that nothing here can change shared state.
 */
export const validInputs: Record<string, (w: World) => unknown> = {
  'me.get': () => undefined,
  'me.changePassword': () => ({ currentPassword: 'not-the-password', newPassword: 'a new password' }),
  'users.list': () => undefined,
  'sessions.list': (w) => ({ userId: w.user.id }),
  'sessions.revoke': (w) => ({ userId: w.user.id, id: id() }),
  'sessions.revokeAll': () => ({ userId: id() }),
  'projects.list': () => undefined,
  'projects.get': (w) => ({ project: w.project }),
  'projects.deletion': (w) => ({ project: w.project }),
  'projects.delete': (w) => ({ project: w.project, confirm: 'not-the-slug', reason: 'r' }),
  'projects.admin.list': () => ({ search: 'x', phase: 'Active', limit: 5 }),
  'tokens.list': (w) => ({ project: w.project }),
  'tokens.create': (w) => ({ project: w.project, name: 'ci', cluster: 'k1', role: 'viewer' }),
  'tokens.revoke': (w) => ({ project: w.project, id: id() }),
  'tokens.operator.list': () => undefined,
  'tokens.operator.create': () => ({ name: 'op' }),
  'tokens.operator.revoke': () => ({ id: id() }),
  // `direction` is what the console's infinite query adds to every page's input.
  'audit.list': () => ({ action: 'x', search: 'y', since: new Date(0), until: new Date(), cursor: '1.1', limit: 5, direction: 'forward' }),
  'audit.filterChoices': () => undefined,
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
  'quota.admin.registrations.create': (w) => ({
    resourceType: `${w.tag}.example.com/things`,
    type: 'Entity',
    baseUnit: 'things',
    displayUnit: 'things',
    claimingKinds: ['Thing'],
  }),
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
  'quota.admin.policies.claim.create': (w) => ({
    name: `${w.tag}-cp`,
    enabled: false,
    triggerKind: 'StrictThing',
    claimNameTemplate: 'c',
    requests: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }],
  }),
  'quota.admin.policies.claim.update': (w) => ({
    name: `${w.tag}-absent`,
    triggerKind: 'StrictThing',
    claimNameTemplate: 'c',
    requests: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 1 }],
  }),
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
  'fleet.machines.create': (w) => ({
    project: w.project,
    name: 'm1',
    class: 'absent.cls',
    profile: 'absent-os',
    location: 'absent',
    interfaces: [{ network: 'vpc', families: ['IPv4'] }],
  }),
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
