import { z } from 'zod';
import { moduleEnabled } from './modules';
import { addInput, checkInput, clusterCreateInput, gcInput, leaseKey } from '@/server/cni/schemas';
import { machineResourceInput } from '@/server/fleet/resources';
import { claimResourceInput, networkResourceInput } from '@/server/ipam/resources';
import { increaseResourceInput } from '@/server/quota/resources';

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
  /** Minimum token role. */
  minRole: 'viewer' | 'editor';
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
  { name: 'core', description: 'Identity of the calling token', enabled: () => true },
  { name: 'ipam.miloapis.com', description: 'Networks (VPCs), pools and IP claims', enabled: () => moduleEnabled('ipam') },
  {
    name: 'quota.miloapis.com',
    description: 'Allowance buckets, resource claims (grant/deny log), grants and increase requests of the token\'s project. Registrations, grants and policies are written by operators in the console.',
    enabled: () => moduleEnabled('quota'),
  },
  { name: 'metal.datumapis.com', description: 'Bare-metal machines: request, follow, release', enabled: () => moduleEnabled('fleet') },
];


const json = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
const listQuery = [
  { name: 'limit', description: 'page size', schema: { type: 'integer', minimum: 1, maximum: 500 } },
  { name: 'continue', description: 'token from the previous page', schema: { type: 'string' } },
  { name: 'search', description: 'name substring, or an address: claims containing it', schema: { type: 'string' } },
];

export const apiRoutes: ApiRoute[] = [
  { method: 'GET', path: '/api/v1/whoami', group: 'core', summary: 'The project (and cluster) the presented token acts for', minRole: 'viewer' },
  { method: 'GET', path: '/api/v1/projects/{project}/networks', group: 'ipam.miloapis.com', summary: 'List networks with their pools and utilization', minRole: 'viewer', query: listQuery },
  { method: 'POST', path: '/api/v1/projects/{project}/networks', group: 'ipam.miloapis.com', summary: 'Create a network with its root CIDRs (roots of a project never overlap: 409 Overlap)', minRole: 'editor', requestBody: json(networkResourceInput) },
  { method: 'GET', path: '/api/v1/projects/{project}/networks/{name}', group: 'ipam.miloapis.com', summary: 'Read a network', minRole: 'viewer' },
  { method: 'DELETE', path: '/api/v1/projects/{project}/networks/{name}', group: 'ipam.miloapis.com', summary: 'Delete a network that holds no claims (409 otherwise)', minRole: 'editor' },
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
    summary: 'CNI lease API for the meridian-ipam plugin: command = add | del | check | gc',
    minRole: 'editor',
    requestBody: { oneOf: [json(addInput), json(leaseKey), json(checkInput), json(gcInput)] },
  },
  { method: 'GET', path: '/api/v1/projects/{project}/clusters/{cluster}/cni/{command}', group: 'ipam.miloapis.com', summary: 'CNI STATUS (command = status): ready, or not ready with the reason', minRole: 'viewer' },
  { method: 'DELETE', path: '/api/v1/projects/{project}/ipclaims/{name}', group: 'ipam.miloapis.com', summary: 'Delete an IP claim (Delete: block returned; Retain: kept until released or expired)', minRole: 'editor' },
  {
    method: 'GET',
    path: '/api/v1/projects/{project}/allowancebuckets',
    group: 'quota.miloapis.com',
    summary: 'List the project\'s allowance buckets: limit (sum of active grants), allocated (sum of live granted claims), available = max(0, limit − allocated), flag (Ok, Near ≥ 80 %, Full, Over)',
    minRole: 'viewer',
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
    summary: 'List the grants of the project with their Active condition',
    minRole: 'viewer',
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
  { method: 'GET', path: '/api/v1/projects/{project}/machines', group: 'metal.datumapis.com', summary: 'List machines with phase, allocation, addresses and last operation', minRole: 'viewer', query: listQuery },
  {
    method: 'POST',
    path: '/api/v1/projects/{project}/machines',
    group: 'metal.datumapis.com',
    summary: 'Request a machine (quota-checked in the same transaction; 412 LocationUnavailable fails closed with the reason)',
    minRole: 'editor',
    requestBody: json(machineResourceInput),
  },
  { method: 'GET', path: '/api/v1/projects/{project}/machines/{name}', group: 'metal.datumapis.com', summary: 'Read a machine: phase, reason, allocation (binding, device, epoch), addresses, last provider operation', minRole: 'viewer' },
  { method: 'DELETE', path: '/api/v1/projects/{project}/machines/{name}', group: 'metal.datumapis.com', summary: 'Release a machine (202): verified cleanup, then Released', minRole: 'editor' },
];

export function servedGroups(): ApiGroup[] {
  return apiGroups.filter((g) => g.enabled());
}

export function servedRoutes(): ApiRoute[] {
  const served = new Set(servedGroups().map((g) => g.name));
  return apiRoutes.filter((r) => served.has(r.group));
}
