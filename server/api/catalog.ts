import { z } from 'zod';
import { moduleEnabled } from './modules';
import { addInput, checkInput, clusterCreateInput, gcInput, leaseKey } from '@/server/cni/schemas';
import { machinePhases } from '@/server/fleet/phases';
import { capacityActionInput, capacityReturnInput, machineRejectInput, machineReleaseInput, machineResourceInput } from '@/server/fleet/resources';
import { claimResourceInput, networkResourceInput } from '@/server/ipam/resources';
import {
  claimPolicyReplaceInput,
  claimPolicyResourceInput,
  grantPolicyReplaceInput,
  grantPolicyResourceInput,
  grantReplaceInput,
  grantResourceInput,
  increaseApproveInput,
  increaseRejectInput,
  increaseResourceInput,
  registrationPatchInput,
  registrationResourceInput,
} from '@/server/quota/resources';

/**
 * The REST v1 surface in one table: every route, its group and its contract. `GET /api/v1`
 * advertises the groups served, `GET /api/v1/openapi.json` is generated from this table, and the
 * isolation tests enumerate it (and check every route file under app/api/v1 appears here).
 */
export interface ApiRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** OpenAPI-style path, e.g. `/api/v1/projects/{project}/networks/{name}`. */
  path: string;
  group: string;
  summary: string;
  /**
   * Who may call it: a project token of the path's project holding at least this role
   * (`viewer`, `editor`, `owner`), or `operator`: an operator token only (project and cluster tokens 403).
   */
  minRole: 'viewer' | 'editor' | 'owner' | 'operator';
  /** A project read that operator tokens may also make, for any project (project-token rules unchanged). */
  operatorReadable?: boolean;
  /** A project write that operator tokens may also make, for any project (e.g. deleting it; project-token rules unchanged). */
  operatorAllowed?: boolean;
  /** JSON schema of the request body, where there is one. */
  requestBody?: Record<string, unknown>;
  query?: { name: string; description: string; schema: Record<string, unknown> }[];
}

export interface ApiGroup {
  name: string;
  description: string;
  /** Whether this deployment serves the group (a module switched off by configuration is absent). */
  enabled: () => boolean;
}

export const apiGroups: ApiGroup[] = [
  { name: 'core', description: 'Identity of the calling token; the project (read its phase, delete it)', enabled: () => true },
  { name: 'ipam.miloapis.com', description: 'Networks (VPCs), pools and IP claims', enabled: () => moduleEnabled('ipam') },
  {
    name: 'quota.miloapis.com',
    description:
      'Allowance buckets, resource claims (grant/deny log), grants and increase requests of the token\'s project; with an operator token: registrations, grants of any project, grant and claim creation policies, and the increase-request queue.',
    enabled: () => moduleEnabled('quota'),
  },
  {
    name: 'metal.datumapis.com',
    description: 'Bare-metal machines: request, follow, release; with an operator token: the approval queue (approve, reject), release, and capacity (quarantine, return, retire)',
    enabled: () => moduleEnabled('fleet'),
  },
];


const json = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
const listQuery = [
  { name: 'limit', description: 'page size', schema: { type: 'integer', minimum: 1, maximum: 500 } },
  { name: 'continue', description: 'token from the previous page', schema: { type: 'string' } },
  { name: 'search', description: 'name substring, or an address: claims containing it', schema: { type: 'string' } },
];

export const apiRoutes: ApiRoute[] = [
  { method: 'GET', path: '/api/v1/whoami', group: 'core', summary: 'The project (and cluster) a project token acts for, or the operator an operator token acts for', minRole: 'viewer' },
  {
    method: 'GET',
    path: '/api/v1/projects/{project}',
    group: 'core',
    summary: 'Read the project: its phase (Active or Deleting) and, while Deleting, what is left and which objects wait on which dependency (attempts, next attempt, last error). Operator tokens may read any project.',
    minRole: 'viewer',
    operatorReadable: true,
  },
  {
    method: 'DELETE',
    path: '/api/v1/projects/{project}',
    group: 'core',
    summary:
      'Delete the project (202): phase Deleting at once (creates in it answer 409 ProjectDeleting, reads still work), every token of the project revoked, then its claims, leases, clusters, machines (verified provider cleanup), quota claims, grants and networks released by the worker; what waits on the provider is retried with capped backoff and shown in status. An owner-role project token, or an operator token for any project. Idempotent.',
    minRole: 'owner',
    operatorAllowed: true,
  },
  { method: 'GET', path: '/api/v1/projects/{project}/networks', group: 'ipam.miloapis.com', summary: 'List networks with their pools and utilization', minRole: 'viewer', query: listQuery },
  { method: 'POST', path: '/api/v1/projects/{project}/networks', group: 'ipam.miloapis.com', summary: 'Create a network with its root CIDRs (roots of a project never overlap: 409 Overlap)', minRole: 'editor', requestBody: json(networkResourceInput) },
  { method: 'GET', path: '/api/v1/projects/{project}/networks/{name}', group: 'ipam.miloapis.com', summary: 'Read a network', minRole: 'viewer' },
  { method: 'DELETE', path: '/api/v1/projects/{project}/networks/{name}', group: 'ipam.miloapis.com', summary: 'Delete a network that holds no claims, retained allocations or pod addresses (409 otherwise, with the counts)', minRole: 'editor' },
  {
    method: 'GET',
    path: '/api/v1/projects/{project}/ipclaims',
    group: 'ipam.miloapis.com',
    summary: 'List IP claims (filter by network, pool, family, search; sort by name, createdAt or cidr)',
    minRole: 'viewer',
    query: [
      ...listQuery,
      { name: 'network', description: 'network name', schema: { type: 'string' } },
      { name: 'pool', description: 'pool name', schema: { type: 'string' } },
      { name: 'family', description: 'IPv4 or IPv6', schema: { type: 'string', enum: ['IPv4', 'IPv6'] } },
      { name: 'sort', description: 'name, createdAt or cidr', schema: { type: 'string', enum: ['name', 'createdAt', 'cidr'] } },
      { name: 'order', description: 'asc or desc', schema: { type: 'string', enum: ['asc', 'desc'] } },
    ],
  },
  {
    method: 'POST',
    path: '/api/v1/projects/{project}/ipclaims',
    group: 'ipam.miloapis.com',
    summary: 'Create an IP claim; binds synchronously (201 Bound with allocatedCIDR) or fails with a coded error and stores nothing. Same name and spec: 200 with the existing claim. ?dryRun=true previews.',
    minRole: 'editor',
    requestBody: json(claimResourceInput),
    query: [{ name: 'dryRun', description: 'true: return the block that would be chosen, store nothing', schema: { type: 'string', enum: ['true', 'false'] } }],
  },
  { method: 'GET', path: '/api/v1/projects/{project}/ipclaims/{name}', group: 'ipam.miloapis.com', summary: 'Read an IP claim', minRole: 'viewer' },
  { method: 'GET', path: '/api/v1/projects/{project}/clusters', group: 'ipam.miloapis.com', summary: 'List clusters with lease, node and block counts', minRole: 'viewer' },
  { method: 'POST', path: '/api/v1/projects/{project}/clusters', group: 'ipam.miloapis.com', summary: 'Register a cluster attached to a network; returns a cluster-scoped token once', minRole: 'editor', requestBody: json(clusterCreateInput) },
  { method: 'GET', path: '/api/v1/projects/{project}/clusters/{cluster}', group: 'ipam.miloapis.com', summary: 'Read a cluster', minRole: 'viewer' },
  { method: 'DELETE', path: '/api/v1/projects/{project}/clusters/{cluster}', group: 'ipam.miloapis.com', summary: 'Delete a cluster, releasing its leases and node blocks and revoking its tokens', minRole: 'editor' },
  { method: 'GET', path: '/api/v1/projects/{project}/clusters/{cluster}/leases', group: 'ipam.miloapis.com', summary: 'List pod leases (search by IP, pod, namespace, node)', minRole: 'viewer', query: listQuery },
  {
    method: 'POST',
    path: '/api/v1/projects/{project}/clusters/{cluster}/cni/{command}',
    group: 'ipam.miloapis.com',
    summary: 'CNI lease API for the meridian-ipam plugin: command = add | del | check | gc; project "-" is the token\'s own; del succeeds for a cluster that does not exist',
    minRole: 'editor',
    requestBody: { oneOf: [json(addInput), json(leaseKey), json(checkInput), json(gcInput)] },
  },
  { method: 'GET', path: '/api/v1/projects/{project}/clusters/{cluster}/cni/{command}', group: 'ipam.miloapis.com', summary: 'CNI STATUS (command = status): ready, or not ready with the reason', minRole: 'viewer' },
  { method: 'DELETE', path: '/api/v1/projects/{project}/ipclaims/{name}', group: 'ipam.miloapis.com', summary: 'Delete an IP claim (Delete: block returned; Retain: kept until released or expired)', minRole: 'editor' },
  {
    method: 'GET',
    path: '/api/v1/projects/{project}/retainedallocations',
    group: 'ipam.miloapis.com',
    summary: 'List retained allocations: blocks of deleted claims with reclaimPolicy Retain, still counted and holding their names until released or expired (soonest expiry first)',
    minRole: 'viewer',
    query: [
      { name: 'limit', description: 'page size', schema: { type: 'integer', minimum: 1, maximum: 200 } },
      { name: 'continue', description: 'token from the previous page', schema: { type: 'string' } },
      { name: 'network', description: 'network name', schema: { type: 'string' } },
    ],
  },
  {
    method: 'DELETE',
    path: '/api/v1/projects/{project}/retainedallocations/{name}',
    group: 'ipam.miloapis.com',
    summary: 'Release a retained allocation now: its block returns to the pool, the name can be claimed again, and an otherwise empty network can be deleted (404 when the project holds none under the name)',
    minRole: 'editor',
  },
  {
    method: 'GET',
    path: '/api/v1/projects/{project}/allowancebuckets',
    group: 'quota.miloapis.com',
    summary: 'List the project\'s allowance buckets: limit (sum of active grants), allocated (sum of live granted claims), available = max(0, limit − allocated), flag (Ok, Near ≥ 80 %, Full, Over). Operator tokens may read any project\'s.',
    minRole: 'viewer',
    operatorReadable: true,
  },
  {
    method: 'GET',
    path: '/api/v1/projects/{project}/resourceclaims',
    group: 'quota.miloapis.com',
    summary: 'The claim log, newest first: Granted (QuotaAvailable), Released, Denied (QuotaExceeded with requested/available/limit, or ValidationFailed), with the object that caused each',
    minRole: 'viewer',
    query: [
      { name: 'limit', description: 'page size', schema: { type: 'integer', minimum: 1, maximum: 500 } },
      { name: 'continue', description: 'token from the previous page', schema: { type: 'string' } },
      { name: 'status', description: 'Granted (live), Released or Denied', schema: { type: 'string', enum: ['Granted', 'Released', 'Denied'] } },
      { name: 'resourceType', description: 'e.g. ipam.miloapis.com/ipclaims', schema: { type: 'string' } },
      { name: 'search', description: 'claim or object name substring', schema: { type: 'string' } },
    ],
  },
  {
    method: 'GET',
    path: '/api/v1/projects/{project}/resourcegrants',
    group: 'quota.miloapis.com',
    summary: 'List the grants of the project with their Active condition. Operator tokens may read any project\'s.',
    minRole: 'viewer',
    operatorReadable: true,
    query: [
      { name: 'limit', description: 'page size', schema: { type: 'integer', minimum: 1, maximum: 200 } },
      { name: 'continue', description: 'token from the previous page', schema: { type: 'string' } },
    ],
  },
  {
    method: 'GET',
    path: '/api/v1/projects/{project}/quotaincreaserequests',
    group: 'quota.miloapis.com',
    summary: 'List the project\'s quota increase requests and their outcome (Pending, Approved with the grant created, Rejected with the reason)',
    minRole: 'viewer',
    query: [
      { name: 'limit', description: 'page size', schema: { type: 'integer', minimum: 1, maximum: 200 } },
      { name: 'continue', description: 'token from the previous page', schema: { type: 'string' } },
      { name: 'status', description: 'Pending, Approved or Rejected', schema: { type: 'string', enum: ['Pending', 'Approved', 'Rejected'] } },
    ],
  },
  {
    method: 'POST',
    path: '/api/v1/projects/{project}/quotaincreaserequests',
    group: 'quota.miloapis.com',
    summary: 'Ask for more of a registered resource type, with a reason (one pending request per type: 409 otherwise); an operator approves or rejects it',
    minRole: 'editor',
    requestBody: json(increaseResourceInput),
  },
  {
    method: 'GET',
    path: '/api/v1/projects/{project}/machines',
    group: 'metal.datumapis.com',
    summary: 'List the live machines with phase, allocation, addresses and last operation; phase=Released lists the released ones (their names may be in use again)',
    minRole: 'viewer',
    query: [...listQuery, { name: 'phase', description: 'only this phase; Released lists released machines, which the default list leaves out', schema: { type: 'string', enum: [...machinePhases] } }],
  },
  {
    method: 'POST',
    path: '/api/v1/projects/{project}/machines',
    group: 'metal.datumapis.com',
    summary: 'Request a machine (quota-checked in the same transaction; 412 LocationUnavailable fails closed with the reason)',
    minRole: 'editor',
    requestBody: json(machineResourceInput),
  },
  { method: 'GET', path: '/api/v1/projects/{project}/machines/{name}', group: 'metal.datumapis.com', summary: 'Read a machine: phase, reason, allocation (binding, device, epoch), addresses, last provider operation (the live machine of that name, else the newest released one)', minRole: 'viewer' },
  { method: 'DELETE', path: '/api/v1/projects/{project}/machines/{name}', group: 'metal.datumapis.com', summary: 'Release a machine (202): verified cleanup, then Released', minRole: 'editor' },

  // ---- Operator routes: an operator token only (project and cluster tokens are refused with 403) ----
  { method: 'GET', path: '/api/v1/resourceregistrations', group: 'quota.miloapis.com', summary: 'List ResourceRegistrations with their Active condition', minRole: 'operator' },
  {
    method: 'POST',
    path: '/api/v1/resourceregistrations',
    group: 'quota.miloapis.com',
    summary: 'Register a resource type (201); grants waiting for it turn Active and their buckets\' limits follow in the same transaction. 409 if already registered.',
    minRole: 'operator',
    requestBody: json(registrationResourceInput),
  },
  { method: 'GET', path: '/api/v1/resourceregistrations/{group}/{resource}', group: 'quota.miloapis.com', summary: 'Read the registration of <group>/<resource>', minRole: 'operator' },
  {
    method: 'PATCH',
    path: '/api/v1/resourceregistrations/{group}/{resource}',
    group: 'quota.miloapis.com',
    summary: 'Change the fields named in spec (description, units, type, claiming kinds); the resource type is immutable',
    minRole: 'operator',
    requestBody: json(registrationPatchInput),
  },
  { method: 'DELETE', path: '/api/v1/resourceregistrations/{group}/{resource}', group: 'quota.miloapis.com', summary: 'Unregister a type (409 while any grant allows it or any live claim holds it)', minRole: 'operator' },
  {
    method: 'POST',
    path: '/api/v1/projects/{project}/resourcegrants',
    group: 'quota.miloapis.com',
    summary: 'Give any project a grant (201, source Operator); its buckets\' limits follow in the same transaction. 409 if the name exists.',
    minRole: 'operator',
    requestBody: json(grantResourceInput),
  },
  {
    method: 'PUT',
    path: '/api/v1/projects/{project}/resourcegrants/{name}',
    group: 'quota.miloapis.com',
    summary: 'Replace a grant\'s allowances; shrinking below what is allocated revokes nothing (the bucket shows Over and new claims are denied)',
    minRole: 'operator',
    requestBody: json(grantReplaceInput),
  },
  { method: 'DELETE', path: '/api/v1/projects/{project}/resourcegrants/{name}', group: 'quota.miloapis.com', summary: 'Delete a grant; limits drop in the same transaction (claims are not revoked)', minRole: 'operator' },
  { method: 'GET', path: '/api/v1/grantcreationpolicies', group: 'quota.miloapis.com', summary: 'List GrantCreationPolicies with their Ready condition (the CEL compiler\'s message when not Ready)', minRole: 'operator' },
  {
    method: 'POST',
    path: '/api/v1/grantcreationpolicies',
    group: 'quota.miloapis.com',
    summary: 'Create a GrantCreationPolicy (trigger: Project created). Expressions that do not compile are stored not Ready with the compiler\'s message, and never applied.',
    minRole: 'operator',
    requestBody: json(grantPolicyResourceInput),
  },
  { method: 'PUT', path: '/api/v1/grantcreationpolicies/{name}', group: 'quota.miloapis.com', summary: 'Replace a GrantCreationPolicy\'s spec (recompiled; generation bumped)', minRole: 'operator', requestBody: json(grantPolicyReplaceInput) },
  { method: 'DELETE', path: '/api/v1/grantcreationpolicies/{name}', group: 'quota.miloapis.com', summary: 'Delete a GrantCreationPolicy (grants it made stay)', minRole: 'operator' },
  { method: 'GET', path: '/api/v1/claimcreationpolicies', group: 'quota.miloapis.com', summary: 'List ClaimCreationPolicies (one per kind) with their Ready condition', minRole: 'operator' },
  {
    method: 'POST',
    path: '/api/v1/claimcreationpolicies',
    group: 'quota.miloapis.com',
    summary: 'Create a ClaimCreationPolicy for a kind (409 if the kind has one). A policy that is not Ready fails creates of its kind (fail closed).',
    minRole: 'operator',
    requestBody: json(claimPolicyResourceInput),
  },
  { method: 'PUT', path: '/api/v1/claimcreationpolicies/{name}', group: 'quota.miloapis.com', summary: 'Replace a ClaimCreationPolicy\'s spec (recompiled; generation bumped)', minRole: 'operator', requestBody: json(claimPolicyReplaceInput) },
  { method: 'DELETE', path: '/api/v1/claimcreationpolicies/{name}', group: 'quota.miloapis.com', summary: 'Delete a ClaimCreationPolicy: its kind stops being quota-managed (live claims stay until released)', minRole: 'operator' },
  {
    method: 'GET',
    path: '/api/v1/quotaincreaserequests',
    group: 'quota.miloapis.com',
    summary: 'The increase-request queue of every project: Pending oldest first (default), or the Approved/Rejected history newest first; each with the project\'s bucket now',
    minRole: 'operator',
    query: [
      { name: 'limit', description: 'page size', schema: { type: 'integer', minimum: 1, maximum: 200 } },
      { name: 'continue', description: 'token from the previous page', schema: { type: 'string' } },
      { name: 'status', description: 'Pending (default), Approved or Rejected', schema: { type: 'string', enum: ['Pending', 'Approved', 'Rejected'] } },
    ],
  },
  {
    method: 'POST',
    path: '/api/v1/quotaincreaserequests/{name}/approve',
    group: 'quota.miloapis.com',
    summary: 'Approve a pending request (body optional: amount, reason): a grant is created in the same transaction and the bucket\'s limit grows at once. 409 if already decided.',
    minRole: 'operator',
    requestBody: json(increaseApproveInput),
  },
  {
    method: 'POST',
    path: '/api/v1/quotaincreaserequests/{name}/reject',
    group: 'quota.miloapis.com',
    summary: 'Reject a pending request with the reason the tenant reads. 409 if already decided.',
    minRole: 'operator',
    requestBody: json(increaseRejectInput),
  },
  {
    method: 'GET',
    path: '/api/v1/machinerequests',
    group: 'metal.datumapis.com',
    summary: 'The approval queue: machines of every project awaiting approval, oldest first, with the free capacity matching each',
    minRole: 'operator',
    query: [
      { name: 'limit', description: 'page size', schema: { type: 'integer', minimum: 1, maximum: 200 } },
      { name: 'continue', description: 'token from the previous page', schema: { type: 'string' } },
    ],
  },
  { method: 'POST', path: '/api/v1/projects/{project}/machines/{name}/approve', group: 'metal.datumapis.com', summary: 'Approve a machine awaiting approval (409 in any other phase); it goes on to allocation', minRole: 'operator' },
  {
    method: 'POST',
    path: '/api/v1/projects/{project}/machines/{name}/reject',
    group: 'metal.datumapis.com',
    summary: 'Reject a machine awaiting approval with a reason; the request ends and its quota and addresses are returned',
    minRole: 'operator',
    requestBody: json(machineRejectInput),
  },
  {
    method: 'POST',
    path: '/api/v1/projects/{project}/machines/{name}/release',
    group: 'metal.datumapis.com',
    summary: 'Release any project\'s machine (202, verified cleanup); force: true with a reason ends the binding without the provider and quarantines the capacity',
    minRole: 'operator',
    requestBody: json(machineReleaseInput),
  },
  {
    method: 'GET',
    path: '/api/v1/machinecapacities',
    group: 'metal.datumapis.com',
    summary: 'List capacity (named by device reference) with state, health, evidence and the machine bound to it',
    minRole: 'operator',
    query: [
      { name: 'limit', description: 'page size', schema: { type: 'integer', minimum: 1, maximum: 200 } },
      { name: 'continue', description: 'token from the previous page', schema: { type: 'string' } },
      { name: 'state', description: 'Available, Bound, Cleaning, Quarantined or Retired', schema: { type: 'string', enum: ['Available', 'Bound', 'Cleaning', 'Quarantined', 'Retired'] } },
      { name: 'location', description: 'location name', schema: { type: 'string' } },
      { name: 'search', description: 'device reference substring', schema: { type: 'string' } },
    ],
  },
  { method: 'POST', path: '/api/v1/machinecapacities/{name}/quarantine', group: 'metal.datumapis.com', summary: 'Quarantine Available capacity (409 otherwise, e.g. while Bound)', minRole: 'operator', requestBody: json(capacityActionInput) },
  { method: 'POST', path: '/api/v1/machinecapacities/{name}/return', group: 'metal.datumapis.com', summary: 'Return Quarantined capacity to the pool (202): the provider cleans it again and the cleanup is verified before it is Available (a failed cleanup quarantines it again); force: true with a reason returns it at once, audited. A request waiting for it is woken', minRole: 'operator', requestBody: json(capacityReturnInput) },
  { method: 'POST', path: '/api/v1/machinecapacities/{name}/retire', group: 'metal.datumapis.com', summary: 'Retire Available or Quarantined capacity', minRole: 'operator', requestBody: json(capacityActionInput) },
];

export function servedGroups(): ApiGroup[] {
  return apiGroups.filter((g) => g.enabled());
}

export function servedRoutes(): ApiRoute[] {
  const served = new Set(servedGroups().map((g) => g.name));
  return apiRoutes.filter((r) => served.has(r.group));
}
