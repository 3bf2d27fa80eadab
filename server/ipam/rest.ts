import { z } from 'zod';
import { decodeContinue, encodeContinue, jsonBody, jsonReply, pageQuery, tokenRoute, type ApiGroup, type RestRoute } from '@/server/http/declare';
import { availableBlocks } from './available';
import { createClaim, deleteClaim, getClaim, listClaims, listRetainedAllocations, releaseRetainedByName } from './claims';
import { createNetwork, deleteNetwork, getNetwork, listNetworks } from './networks';
import {
  claimDeletedOutput,
  claimListOutput,
  claimOutput,
  networkDeletedOutput,
  networkListOutput,
  networkOutput,
  retainedAllocationListOutput,
  retainedReleasedOutput,
  claimInputFromResource,
  claimResource,
  claimResourceInput,
  networkInputFromResource,
  networkResource,
  networkResourceInput,
  retainedAllocationResource,
} from './resources';
import { resourceName } from './schemas';

/** The IPAM group: networks and claims here, clusters and the CNI lease API in server/cni/rest.ts. */
export const ipamApi: ApiGroup = { name: 'ipam.miloapis.com', description: 'Networks (VPCs), pools and IP claims', module: 'ipam' };

const NETWORKS = '/api/v1/projects/{project}/networks';
const NETWORK = '/api/v1/projects/{project}/networks/{name}';
const CLAIMS = '/api/v1/projects/{project}/ipclaims';
const CLAIM = '/api/v1/projects/{project}/ipclaims/{name}';

/** The REST v1 routes of IPAM. */
export const ipamRoutes: RestRoute[] = [
  tokenRoute({
    method: 'GET',
    path: NETWORKS,
    group: ipamApi,
    summary: 'List networks with their pools and utilization',
    output: networkListOutput,
    minRole: 'viewer',
    query: z.object({ ...pageQuery(200, 50), search: z.string().max(100).optional().describe('name substring') }),
    handler: async ({ db, query, principal }) => {
      const q = query();
      const page = await listNetworks(db, principal.projectId, { limit: q.limit, offset: decodeContinue(q.continue), search: q.search });
      return { apiVersion: 'v1', kind: 'NetworkList', items: page.items.map(networkResource), metadata: { continue: encodeContinue(page.nextOffset) } };
    },
  }),
  tokenRoute({
    method: 'POST',
    path: NETWORKS,
    group: ipamApi,
    summary: 'Create a network with its root CIDRs (roots of a project never overlap: 409 Overlap)',
    output: networkOutput,
    minRole: 'editor',
    body: jsonBody(networkResourceInput),
    handler: async ({ db, body, principal, actor }) => {
      const network = await createNetwork(db, principal.projectId, networkInputFromResource(body()), actor);
      return jsonReply(networkResource(network), { status: 201 });
    },
  }),
  tokenRoute({
    method: 'GET',
    path: NETWORK,
    group: ipamApi,
    summary: 'Read a network',
    output: networkOutput,
    minRole: 'viewer',
    handler: async ({ db, params, principal }) => networkResource(await getNetwork(db, principal.projectId, resourceName.parse(params.name))),
  }),
  tokenRoute({
    method: 'DELETE',
    path: NETWORK,
    group: ipamApi,
    summary: 'Delete a network that holds no claims, retained allocations or pod addresses (409 otherwise, with the counts)',
    output: networkDeletedOutput,
    minRole: 'editor',
    handler: async ({ db, params, principal, actor }) => {
      await deleteNetwork(db, principal.projectId, resourceName.parse(params.name), actor);
      return { kind: 'Status', status: 'Success', details: { name: params.name, kind: 'Network' } };
    },
  }),

  tokenRoute({
    method: 'GET',
    path: CLAIMS,
    group: ipamApi,
    summary: 'List IP claims (filter by network, pool, family, search; sort by name, createdAt or cidr)',
    output: claimListOutput,
    minRole: 'viewer',
    query: z.object({
      ...pageQuery(500, 50),
      network: resourceName.optional().describe('network name'),
      pool: resourceName.optional().describe('pool name'),
      family: z.enum(['IPv4', 'IPv6', '4', '6']).optional().describe('IPv4 or IPv6'),
      search: z.string().max(100).optional().describe('name substring, or an address: claims containing it'),
      sort: z.enum(['name', 'createdAt', 'cidr']).default('createdAt').describe('name, createdAt or cidr'),
      order: z.enum(['asc', 'desc']).default('desc').describe('asc or desc'),
    }),
    handler: async ({ db, query, principal }) => {
      const q = query();
      const family = q.family === undefined ? undefined : q.family === 'IPv4' || q.family === '4' ? 4 : 6;
      const page = await listClaims(db, principal.projectId, {
        network: q.network,
        pool: q.pool,
        family,
        search: q.search,
        sort: q.sort,
        order: q.order,
        limit: q.limit,
        offset: decodeContinue(q.continue),
      });
      return {
        apiVersion: 'v1',
        kind: 'IPClaimList',
        items: page.items.map((c) => claimResource(c)),
        metadata: { continue: encodeContinue(page.nextOffset), total: page.total },
      };
    },
  }),
  tokenRoute({
    method: 'POST',
    path: CLAIMS,
    group: ipamApi,
    summary:
      'Create an IP claim; binds synchronously (201 Bound with allocatedCIDR) or fails with a coded error and stores nothing. Same name and spec: 200 with the existing claim. ?dryRun=true previews.',
    output: claimOutput,
    minRole: 'editor',
    query: z.object({ dryRun: z.enum(['true', 'false', 'All']).optional().describe('true (or All): return the block that would be chosen, store nothing') }),
    body: jsonBody(claimResourceInput),
    handler: async ({ db, query, body, principal, actor }) => {
      const { dryRun } = query();
      const input = body();
      const preview = dryRun === 'true' || dryRun === 'All';
      const result = await createClaim(db, principal.projectId, claimInputFromResource(input), actor, { dryRun: preview });
      return jsonReply(claimResource(result.claim, { dryRun: preview }), { status: result.created ? 201 : 200 });
    },
  }),
  tokenRoute({
    method: 'GET',
    path: CLAIM,
    group: ipamApi,
    summary: 'Read an IP claim',
    output: claimOutput,
    minRole: 'viewer',
    handler: async ({ db, params, principal }) => claimResource(await getClaim(db, principal.projectId, resourceName.parse(params.name))),
  }),
  tokenRoute({
    method: 'DELETE',
    path: CLAIM,
    group: ipamApi,
    summary: 'Delete an IP claim (Delete: block returned; Retain: kept until released or expired)',
    output: claimDeletedOutput,
    minRole: 'editor',
    handler: async ({ db, params, principal, actor }) => {
      const result = await deleteClaim(db, principal.projectId, resourceName.parse(params.name), actor);
      return {
        kind: 'Status',
        status: 'Success',
        details: { name: params.name, kind: 'IPClaim', released: result.released, retainedUntil: result.retainedUntil },
      };
    },
  }),

  tokenRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/retainedallocations',
    group: ipamApi,
    summary:
      'List retained allocations: blocks of deleted claims with reclaimPolicy Retain, still counted and holding their names until released or expired (soonest expiry first)',
    output: retainedAllocationListOutput,
    minRole: 'viewer',
    query: z.object({ ...pageQuery(200, 50), network: resourceName.optional().describe('network name') }),
    handler: async ({ db, query, principal }) => {
      const q = query();
      const offset = decodeContinue(q.continue);
      // One row more than the page says whether there is a next one.
      const rows = await listRetainedAllocations(db, { projectId: principal.projectId, network: q.network, limit: q.limit + 1, offset });
      return {
        apiVersion: 'v1',
        kind: 'RetainedAllocationList',
        items: rows.slice(0, q.limit).map(retainedAllocationResource),
        metadata: { continue: encodeContinue(rows.length > q.limit ? offset + q.limit : null) },
      };
    },
  }),
  tokenRoute({
    method: 'DELETE',
    path: '/api/v1/projects/{project}/retainedallocations/{name}',
    group: ipamApi,
    summary:
      'Release a retained allocation now: its block returns to the pool, the name can be claimed again, and an otherwise empty network can be deleted (404 when the project holds none under the name)',
    output: retainedReleasedOutput,
    minRole: 'editor',
    handler: async ({ db, params, principal, actor }) => {
      const result = await releaseRetainedByName(db, principal.projectId, resourceName.parse(params.name), actor);
      return { kind: 'Status', status: 'Success', details: { name: result.name, kind: 'RetainedAllocation', cidr: result.cidr, released: result.released } };
    },
  }),
  tokenRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/networks/{name}/pools/{pool}/available',
    group: ipamApi,
    summary:
      'Free space of a pool, from its free-block table: with prefixLength, the first free blocks of that length in address order; without, the largest free blocks. A claim gets one by naming it as spec.address (with spec.pool)',
    output: z.object({
      apiVersion: z.literal('v1'),
      kind: z.literal('AvailablePrefixList'),
      metadata: z.object({ network: z.string(), pool: z.object({ name: z.string(), cidr: z.string(), family: z.enum(['IPv4', 'IPv6']) }) }),
      spec: z.object({ prefixLength: z.number().int().nullable() }),
      items: z.array(z.object({ cidr: z.string(), size: z.string().regex(/^\d+$/) })),
    }),
    minRole: 'viewer',
    query: z.object({
      prefixLength: z.coerce.number().int().min(0).max(128).optional().describe('the block length wanted (e.g. 24); absent: the largest free blocks'),
      limit: z.coerce.number().int().min(1).max(1000).default(10).describe('how many blocks (1–1000, default 10)'),
    }),
    handler: async ({ db, params, query, principal }) => {
      const q = query();
      const answer = await availableBlocks(db, principal.projectId, resourceName.parse(params.name), resourceName.parse(params.pool), {
        prefixLength: q.prefixLength,
        limit: q.limit,
      });
      return {
        apiVersion: 'v1',
        kind: 'AvailablePrefixList',
        metadata: { network: params.name, pool: answer.pool },
        spec: { prefixLength: answer.prefixLength },
        items: answer.items,
      };
    },
  }),
];
