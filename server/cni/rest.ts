import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { DomainError, isDomainError } from '@/server/errors';
import { env } from '@/server/env';
import {
  jsonBody,
  jsonBodyByParam,
  jsonReply,
  listOutput,
  timestamp,
  decodeContinue,
  encodeContinue,
  pageQuery,
  tokenRoute,
  type RestRoute,
  type TokenHandling,
} from '@/server/http/declare';
import { ipamApi } from '@/server/ipam/rest';
import { resourceName } from '@/server/ipam/schemas';
import { roleAtLeast } from '@/server/tenancy/roles';
import { revokedTokenOfGoneCluster, type GoneClusterToken, type TokenPrincipal } from '@/server/tenancy/tokens';
import { createCluster, deleteCluster, findCluster, listClusters } from './clusters';
import { addLease, checkLease, clusterStatus, gcLeases, listLeases, releaseLeases } from './leases';
import { addInput, checkInput, clusterCreateInput, gcInput, leaseKey } from './schemas';

/**
 * The cluster a CNI call acts on: it must belong to the token's project, and a cluster-scoped
 * token may act only for its own cluster (any other is NotFound, revealing nothing).
 */
export async function clusterForToken(db: DbOrTx, principal: TokenPrincipal, name: string) {
  // A name no cluster can have (the path segment is untrusted text, e.g. with a NUL that PostgreSQL
  // refuses) is simply not found: checked before any query.
  const valid = resourceName.safeParse(name).success;
  if (!valid || (principal.clusterName && principal.clusterName !== name)) throw new DomainError('NotFound', `cluster "${name}" not found`, 'cluster');
  // A cluster token's cluster came with the token (server/tenancy/tokens.ts).
  return principal.cluster?.name === name ? principal.cluster : findCluster(db, principal.projectId, name);
}

/**
 * The cluster a CNI DEL acts on, as `clusterForToken`, or null when the token may act for a
 * cluster of that name but none exists (deleted, or never registered): the DEL then holds nothing
 * and succeeds. Another cluster's token still gets NotFound.
 */
export async function clusterForDel(db: DbOrTx, principal: TokenPrincipal, name: string) {
  if (!resourceName.safeParse(name).success || (principal.clusterName && principal.clusterName !== name)) return clusterForToken(db, principal, name);
  try {
    return await clusterForToken(db, principal, name);
  } catch (e) {
    if (isDomainError(e) && e.code === 'NotFound' && e.field === 'cluster') return null;
    throw e;
  }
}

/** Seconds a lease is spared by GC after it was created (an ADD may still be in flight). */
export function gcGraceSeconds(): number {
  return env().CNI_GC_GRACE_SECONDS;
}

const unknownCommand = (command: string) => new DomainError('NotFound', `unknown CNI command "${command}"`, 'command');

/** The bodies of the CNI lease API's commands (an unknown command: its body read, then 404). */
const cniBody = jsonBodyByParam('command', { add: addInput, del: leaseKey, check: checkInput, gc: gcInput }, unknownCommand);

/**
 * The path's project of the CNI routes may be `-`: the token's own (no project slug can be "-"). A
 * plugin that holds a token for one project need not name it (the CNI plugin without `ipam.project`).
 */
const TOKEN_PROJECT = '-';

/**
 * The CNI DEL of a revoked cluster token whose cluster is gone (`cniTokenHandling`'s
 * `whenRefused`): a deleted cluster's leases were all released with it, so the attachment holds nothing and
 * the DEL succeeds (`released: 0`) — the container runtime can tear its pods down instead of
 * retrying forever. It reads only the token and the body and changes nothing. For the token's own
 * project and cluster in the path and an editor token only; anything else keeps the 401.
 */
async function delOfGoneCluster(token: GoneClusterToken, { params, body }: { params: { project: string; cluster: string }; body: (key: 'del') => unknown }) {
  const ownPath = (params.project === token.projectSlug || params.project === TOKEN_PROJECT) && params.cluster === token.clusterName;
  if (!ownPath || !roleAtLeast(token.role, 'editor')) return undefined;
  body('del');
  return { released: 0 };
}

/** `-` in the path's project names the token's own (TOKEN_PROJECT). */
const projectFromToken = <P extends { project: string }>(params: P, principal: TokenPrincipal): P =>
  params.project === TOKEN_PROJECT ? { ...params, project: principal.projectSlug } : params;

/**
 * How the CNI lease API takes its token (TokenHandling): the project may be the token's own (`-`);
 * an ADD checks its token in its own write (server/cni/sql/cni_lease_add_confirmed.sql), so a
 * recently verified cluster token is not read again first; and a DEL whose token was refused as
 * revoked is answered when the token's cluster is gone (delOfGoneCluster), so that a deleted
 * cluster's pods can still be torn down. Nothing else is granted to a revoked token.
 */
const cniTokenHandling: TokenHandling<{ project: string; cluster: string; command: string }, (key: 'del') => unknown> = {
  checkedParams: projectFromToken,
  reuseVerified: (p) => p.command === 'add',
  whenRefused: async ({ db, secret, params, body }) => {
    if (params.command !== 'del') return undefined;
    const token = await revokedTokenOfGoneCluster(db, secret);
    return token && { tokenId: token.tokenId, answer: () => delOfGoneCluster(token, { params, body }) };
  },
};

// ---- What the routes answer ---------------------------------------------------------------------

const clusterOutput = z.object({
  id: z.uuid(),
  name: z.string(),
  network: z.string(),
  description: z.string(),
  createdAt: timestamp,
  deletionTimestamp: timestamp.nullable().describe('when its deletion was asked for; the worker is releasing what is left (leases, blocks)'),
  nodeBlockPrefixV4: z.number().int(),
  nodeBlockPrefixV6: z.number().int(),
  leases: z.number().int().nonnegative(),
  nodes: z.number().int().nonnegative(),
  blocks: z.number().int().nonnegative(),
});
const clusterCreatedOutput = z.object({
  id: z.uuid(),
  name: z.string(),
  network: z.string(),
  token: z.object({ id: z.uuid(), secret: z.string().describe('shown once'), prefix: z.string() }).nullable(),
});
const leaseOutput = z.object({
  id: z.uuid(),
  cluster: z.string(),
  address: z.string(),
  family: z.union([z.literal(4), z.literal(6)]),
  node: z.string(),
  podNamespace: z.string().nullable(),
  podName: z.string().nullable(),
  containerId: z.string(),
  ifname: z.string(),
  cniNetwork: z.string(),
  createdAt: timestamp,
  checkedAt: timestamp.nullable(),
});
const leaseAddressOutput = z.object({
  family: z.union([z.literal(4), z.literal(6)]),
  address: z.string().describe("pod address with its node block's prefix length"),
  gateway: z.string(),
});
const releasedOutput = z.array(z.object({ containerId: z.string(), ifname: z.string(), address: z.string() }));
/** One schema per command (the path's {command}): add, del, check, gc. */
const cniCommandOutput = z.union([
  z.object({ ips: z.array(leaseAddressOutput) }).describe('add'),
  z.object({ released: z.number().int().nonnegative() }).describe('del'),
  z.object({ ok: z.literal(true) }).describe('check'),
  z.object({ released: releasedOutput, kept: z.number().int().nonnegative(), spared: z.number().int().nonnegative() }).describe('gc'),
]);
const cniStatusOutput = z.union([z.object({ ready: z.literal(true) }), z.object({ ready: z.literal(false), reason: z.string(), message: z.string() })]);

const CLUSTERS = '/api/v1/projects/{project}/clusters';
const CLUSTER = '/api/v1/projects/{project}/clusters/{cluster}';
const CNI = '/api/v1/projects/{project}/clusters/{cluster}/cni/{command}';

/** The REST v1 routes of clusters and the CNI lease API (group ipam.miloapis.com). */
export const cniRoutes: RestRoute[] = [
  tokenRoute({
    method: 'GET',
    path: CLUSTERS,
    group: ipamApi,
    summary: 'List clusters with lease, node and block counts',
    output: listOutput('ClusterList', clusterOutput),
    minRole: 'viewer',
    handler: async ({ db, principal }) => {
      const items = await listClusters(db, principal.projectId);
      const visible = principal.clusterName ? items.filter((c) => c.name === principal.clusterName) : items;
      return { kind: 'ClusterList', items: visible, metadata: { continue: null, total: visible.length } };
    },
  }),
  tokenRoute({
    method: 'POST',
    path: CLUSTERS,
    group: ipamApi,
    summary: 'Register a cluster attached to a network; returns a cluster-scoped token once',
    output: clusterCreatedOutput,
    minRole: 'editor',
    body: jsonBody(clusterCreateInput),
    handler: async ({ db, body, principal, actor }) => {
      if (principal.clusterName) throw new DomainError('Forbidden', 'a cluster-scoped token cannot register clusters');
      const input = body();
      return jsonReply(await createCluster(db, principal.projectId, { ...input, issueToken: true }, actor), { status: 201 });
    },
  }),
  tokenRoute({
    method: 'GET',
    path: CLUSTER,
    group: ipamApi,
    summary: 'Read a cluster',
    output: clusterOutput,
    minRole: 'viewer',
    handler: async ({ db, params, principal }) => {
      const cluster = await clusterForToken(db, principal, params.cluster);
      const [detail] = (await listClusters(db, principal.projectId)).filter((c) => c.id === cluster.id);
      return detail;
    },
  }),
  tokenRoute({
    method: 'DELETE',
    path: CLUSTER,
    group: ipamApi,
    summary:
      'Delete a cluster, revoking its tokens and releasing its leases and node blocks: 200 when done within the request, else 202 with its deletionTimestamp and what is left, finished by the worker (ADDs for it are refused from the start)',
    output: z.union([
      z.object({ name: z.string(), releasedLeases: z.number().int().nonnegative() }).describe('deleted'),
      z
        .object({
          name: z.string(),
          deletionTimestamp: timestamp,
          remaining: z.object({ leases: z.number().int().nonnegative(), blocks: z.number().int().nonnegative() }),
        })
        .describe('accepted (202): the worker finishes it'),
    ]),
    minRole: 'editor',
    handler: async ({ db, params, principal, actor }) => {
      await clusterForToken(db, principal, params.cluster);
      if (principal.clusterName) throw new DomainError('Forbidden', 'a cluster-scoped token cannot delete clusters');
      const deletion = await deleteCluster(db, principal.projectId, params.cluster, actor);
      if (deletion.done) return { name: deletion.name, releasedLeases: deletion.releasedLeases };
      return jsonReply({ name: deletion.name, deletionTimestamp: deletion.deletionTimestamp, remaining: deletion.remaining }, { status: 202 });
    },
  }),
  tokenRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/clusters/{cluster}/leases',
    group: ipamApi,
    summary: 'List pod leases (search by IP, pod, namespace, node)',
    output: listOutput('PodLeaseList', leaseOutput),
    minRole: 'viewer',
    query: z.object({ ...pageQuery(500, 100), search: z.string().max(100).optional().describe('IP, pod, namespace or node') }),
    handler: async ({ db, query, params, principal }) => {
      const q = query();
      const cluster = await clusterForToken(db, principal, params.cluster);
      const page = await listLeases(db, principal.projectId, { cluster: cluster.name, search: q.search, limit: q.limit, offset: decodeContinue(q.continue) });
      return { kind: 'PodLeaseList', items: page.items, metadata: { total: page.total, continue: encodeContinue(page.nextOffset) } };
    },
  }),

  /*
   * The CNI lease API: POST add | del | check | gc (the plugin's commands), GET status. The path's
   * project may be `-`, the token's own. An ADD is refused if its token is revoked (checked in its
   * own transaction), so the token it came with need not be read again before it. A DEL for a
   * cluster that does not exist succeeds (it holds nothing), also with the revoked token of a
   * deleted cluster: the container runtime can always tear its pods down.
   */
  tokenRoute({
    method: 'POST',
    path: CNI,
    group: ipamApi,
    summary:
      'CNI lease API for the meridian-ipam plugin: command = add | del | check | gc; project "-" is the token\'s own; del succeeds for a cluster that does not exist',
    output: cniCommandOutput,
    minRole: 'editor',
    tokenHandling: cniTokenHandling,
    body: cniBody,
    handler: async ({ db, params, body, principal, actor }) => {
      if (params.command === 'del') {
        const key = body('del');
        // A cluster that does not exist (any more) holds nothing: DEL of what is gone succeeds.
        const cluster = await clusterForDel(db, principal, params.cluster);
        return { released: cluster ? (await releaseLeases(db, cluster, { key }, actor)).length : 0 };
      }
      const cluster = await clusterForToken(db, principal, params.cluster);
      switch (params.command) {
        case 'add':
          return { ips: await addLease(db, cluster, body('add'), actor, principal.tokenId) };
        case 'check': {
          const input = body('check');
          return checkLease(db, cluster, input, input.prevResult.ips, actor);
        }
        case 'gc': {
          const result = await gcLeases(db, cluster, body('gc'), gcGraceSeconds(), actor);
          return { released: result.released, kept: result.kept, spared: result.spared };
        }
        default:
          // The body is read as for any command (400 for its content type or syntax), then 404.
          return body(params.command);
      }
    },
  }),
  tokenRoute({
    method: 'GET',
    path: CNI,
    group: ipamApi,
    summary: 'CNI STATUS (command = status): ready, or not ready with the reason',
    output: cniStatusOutput,
    minRole: 'viewer',
    tokenHandling: { checkedParams: projectFromToken },
    query: z.object({ cniNetwork: z.string().max(253).optional().describe('the CNI network asking (informational)') }),
    handler: async ({ db, query, params, principal }) => {
      if (params.command !== 'status') throw unknownCommand(params.command);
      query();
      const cluster = await clusterForToken(db, principal, params.cluster);
      return clusterStatus(db, cluster);
    },
  }),
];
