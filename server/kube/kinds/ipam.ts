import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import {
  createClaim,
  deleteClaim,
  getClaim,
  listClaimsByKey,
  listRetainedAllocations,
  qualifiedName,
  releaseRetainedByName,
  setClaimLabels,
} from '@/server/ipam/claims';
import { createNetwork, DEFAULT_NAMESPACE, deleteNetwork, getNetwork, listNetworks, updateNetworkDescription } from '@/server/ipam/networks';
import { claimResource, networkResource, retainedAllocationResource } from '@/server/ipam/resources';
import { resourceName, rootPoolInput } from '@/server/ipam/schemas';
import { DomainError, isDomainError } from '@/server/errors';
import { declareKind, ownRow, type KindContext, type ListPage, type StoredObject } from '../declare';
import { inRolledBackTransaction } from '../dry-run';

/** The IPAM kinds of the Kubernetes API: Network, IPClaim and RetainedAllocation (ipam.miloapis.com/v1alpha1), over the domain functions REST v1 calls. */

const GROUP = 'ipam.miloapis.com';
const VERSION = 'v1alpha1';

/** The namespace a storage call addresses. */
const nsOf = (ctx: KindContext) => ctx.namespace ?? DEFAULT_NAMESPACE;

const orUndefined = async <T>(read: () => Promise<T>): Promise<T | undefined> => {
  try {
    return await read();
  } catch (e) {
    if (isDomainError(e) && e.code === 'NotFound') return undefined;
    throw e;
  }
};

// ---- Network ------------------------------------------------------------------------------------

const networkSpec = z.strictObject({
  description: z.string().max(500).optional().describe('What the network is for'),
  cidrs: z
    .array(rootPoolInput.describe('A root CIDR of the network, with the allocation rules of its pool'))
    .min(1, 'at least one root CIDR is required')
    .max(16)
    .describe('The root CIDRs (IPv4 and/or IPv6); the roots of a project never overlap. Immutable.'),
});

const networkStatus = z.object({
  pools: z.array(z.record(z.string(), z.unknown())).describe('Every pool of the network with its rules and counters'),
  utilization: z.record(z.string(), z.unknown()).describe('Per family, over the root pools'),
  claims: z.number().int().optional().describe('IP claims bound in the network'),
});

/**
 * A network's spec as a client wrote it: a root's name only when it is not the one the domain
 * gives a root left unnamed (`<network>-v4`, `<network>-v6-1`…), so that applying the manifest
 * again finds nothing to change.
 */
function storedNetwork(n: Parameters<typeof networkResource>[0] & { namespace: string }): StoredObject {
  const r = networkResource(n);
  const cidrs = r.spec.cidrs.map((c, i) => {
    const defaultName = `${n.name}-v${c.cidr.includes(':') ? 6 : 4}${i > 0 ? `-${i}` : ''}`;
    return c.name === defaultName ? { cidr: c.cidr } : c;
  });
  return { uid: r.metadata.uid, namespace: n.namespace, name: r.metadata.name, createdAt: n.createdAt, spec: { ...r.spec, cidrs }, status: r.status };
}

export const networkKind = declareKind({
  group: GROUP,
  version: VERSION,
  kind: 'Network',
  plural: 'networks',
  singular: 'network',
  shortNames: ['net'],
  categories: ['meridian', 'ipam'],
  namespaced: true,
  description: 'A tenant network (VPC): its root CIDRs are the pools IP claims are bound from.',
  spec: networkSpec,
  status: networkStatus,
  immutable: [{ path: 'spec.cidrs', value: (spec) => (Array.isArray(spec.cidrs) ? spec.cidrs.map((c: { cidr?: unknown }) => c?.cidr) : undefined) }],
  printerColumns: [
    {
      name: 'CIDRs',
      type: 'string',
      description: 'The root CIDRs',
      value: (o) => (Array.isArray(o.spec.cidrs) ? o.spec.cidrs.map((c: { cidr: string }) => c.cidr).join(',') : ''),
    },
    { name: 'Claims', type: 'integer', description: 'IP claims bound in the network', value: (o) => o.status.claims ?? 0 },
    { name: 'Description', type: 'string', description: 'What the network is for', value: (o) => o.spec.description ?? '', priority: 1 },
  ],
  fieldSelectors: {},
  watch: [{ table: 'networks', object: (r) => ownRow(r), exists: () => true }],
  fieldPath: (field) => (field === 'name' ? 'metadata.name' : `spec.${field.replace(/\.(\d+)(?=\.|$)/g, '[$1]')}`),
  storage: {
    namespacedStorage: true,
    get: async (ctx, name) => orUndefined(async () => storedNetwork(await getNetwork(ctx.db, ctx.projectId, name, nsOf(ctx)))),
    list: async ({ db, projectId }, page) =>
      (await listNetworks(db, projectId, { limit: page.limit, offset: 0, namespace: page.namespace ?? null, after: page.after })).items.map((n) =>
        storedNetwork(n),
      ),
    async create(ctx, { name, spec }, { dryRun }) {
      const input = { name, description: spec.description, cidrs: spec.cidrs };
      const create = (tx: DbOrTx) => createNetwork(tx, ctx.projectId, input, ctx.actor, nsOf(ctx));
      const created = dryRun ? await inRolledBackTransaction(ctx.db, create) : await create(ctx.db);
      return storedNetwork({ ...created, namespace: nsOf(ctx) });
    },
    async update(ctx, current, next, { dryRun }) {
      const write = (tx: DbOrTx) => updateNetworkDescription(tx, ctx.projectId, current.name, next.description ?? '', ctx.actor, nsOf(ctx));
      return dryRun ? inRolledBackTransaction(ctx.db, write) : write(ctx.db);
    },
    async delete(ctx, name, { dryRun }) {
      const { db, projectId, actor } = ctx;
      const remove = (tx: DbOrTx) => deleteNetwork(tx, projectId, name, actor, nsOf(ctx));
      await (dryRun ? inRolledBackTransaction(db, remove) : remove(db));
    },
  },
});

// ---- IPClaim ------------------------------------------------------------------------------------

const claimSpec = z.strictObject({
  network: resourceName.describe('The network the block is claimed from. Immutable.'),
  pool: resourceName.optional().describe('The pool to claim from; absent: the deepest pool of the network that fits. Immutable.'),
  family: z.enum(['IPv4', 'IPv6']).optional().describe('IPv4 (default) or IPv6. Immutable.'),
  prefixLength: z.number().int().min(0).max(128).optional().describe("The block's prefix length; absent: the pool's default. Immutable."),
  address: z.string().max(64).nullable().optional().describe('Pin an exact address or CIDR (a bare address means /32 or /128). Immutable.'),
  reclaimPolicy: z.enum(['Delete', 'Retain']).optional().describe('Delete (default): the block returns on delete; Retain: kept until released or expired.'),
  retentionSeconds: z
    .number()
    .int()
    .min(60)
    .max(365 * 24 * 3600)
    .optional()
    .describe('How long a Retain block is kept after the claim is deleted (default 7 days).'),
  ownerRef: z
    .strictObject({ kind: z.string().max(63), name: z.string().max(253) })
    .nullable()
    .optional()
    .describe('What the block is for'),
});

const claimStatus = z.object({
  phase: z.enum(['Bound', 'Preview']).describe('Bound: the block is allocated (Preview: a dry run)'),
  allocatedCIDR: z.string().describe('The block allocated to the claim'),
  pool: z.string().describe('The pool it came from'),
  allocationRef: z.string().nullable().describe("The allocation's id"),
});

function storedClaim(c: Parameters<typeof claimResource>[0], dryRun = false): StoredObject {
  const r = claimResource(c, { dryRun });
  return { uid: c.id, namespace: c.namespace, name: c.name, createdAt: c.createdAt, spec: r.spec, status: r.status, labels: c.labels };
}

const same = (path: keyof z.infer<typeof claimSpec>) => ({ path: `spec.${path}`, value: (spec: Record<string, unknown>) => spec[path] ?? undefined });

export const ipClaimKind = declareKind({
  group: GROUP,
  version: VERSION,
  kind: 'IPClaim',
  plural: 'ipclaims',
  singular: 'ipclaim',
  shortNames: ['ipc'],
  categories: ['meridian', 'ipam'],
  namespaced: true,
  description: 'A claim of an address block from a network: bound synchronously on create, or refused with nothing stored.',
  spec: claimSpec,
  status: claimStatus,
  immutable: [
    same('network'),
    same('pool'),
    same('family'),
    same('prefixLength'),
    same('address'),
    same('reclaimPolicy'),
    same('retentionSeconds'),
    same('ownerRef'),
  ],
  printerColumns: [
    { name: 'Network', type: 'string', description: 'The network', value: (o) => o.spec.network },
    { name: 'CIDR', type: 'string', description: 'The allocated block', value: (o) => o.status.allocatedCIDR },
    { name: 'Phase', type: 'string', description: 'Bound once allocated', value: (o) => o.status.phase },
    { name: 'Pool', type: 'string', description: 'The pool it came from', value: (o) => o.status.pool, priority: 1 },
    { name: 'Reclaim', type: 'string', description: 'What happens to the block on delete', value: (o) => o.spec.reclaimPolicy, priority: 1 },
  ],
  fieldSelectors: {
    'spec.network': (o) => String(o.spec.network),
    'spec.pool': (o) => String(o.spec.pool),
    'status.phase': (o) => String(o.status.phase),
  },
  watch: [{ table: 'ip_claims', object: (r) => ownRow(r), exists: () => true }],
  storage: {
    namespacedStorage: true,
    get: async (ctx, name) => orUndefined(async () => storedClaim(await getClaim(ctx.db, ctx.projectId, name, nsOf(ctx)))),
    list: async ({ db, projectId }, page) =>
      (await listClaimsByKey(db, projectId, { namespace: page.namespace ?? null, after: page.after, limit: page.limit })).map((c) => storedClaim(c)),
    async create(ctx: KindContext, { name, spec, labels }, { dryRun }) {
      const { db, projectId, actor } = ctx;
      const input = {
        name,
        network: spec.network,
        pool: spec.pool,
        family: spec.family,
        prefixLength: spec.prefixLength,
        address: spec.address ?? undefined,
        reclaimPolicy: spec.reclaimPolicy ?? 'Delete',
        retentionSeconds: spec.retentionSeconds,
        ownerRef: spec.ownerRef ?? undefined,
        labels,
      };
      const result = await createClaim(db, projectId, input, actor, { dryRun, namespace: nsOf(ctx) });
      if (!result.created && !dryRun) throw new DomainError('Conflict', `ipclaim "${name}" already exists`, 'name');
      return storedClaim(result.claim, dryRun);
    },
    relabel: (ctx, name, labels) => setClaimLabels(ctx.db, ctx.projectId, name, labels, ctx.actor, nsOf(ctx)),
    async delete(ctx, name, { dryRun }) {
      const { db, projectId, actor } = ctx;
      const remove = (tx: DbOrTx) => deleteClaim(tx, projectId, name, actor, nsOf(ctx));
      await (dryRun ? inRolledBackTransaction(db, remove) : remove(db));
    },
  },
});

// ---- RetainedAllocation -------------------------------------------------------------------------

const retainedSpec = z.strictObject({
  network: z.string().describe('The network of the block'),
  pool: z.string().describe('The pool of the block'),
  cidr: z.string().describe('The block the deleted claim held'),
});

const retainedStatus = z.object({
  addresses: z.string().describe('Addresses in the block (exact, decimal)'),
  retainedUntil: z.string().describe('When the block returns to its pool'),
});

/** A retained allocation's namespace and name, from the qualified name it is held under (claims.ts qualifiedName). */
function splitQualified(qualified: string) {
  const dot = qualified.indexOf('.');
  return dot < 0 ? { namespace: DEFAULT_NAMESPACE, name: qualified } : { namespace: qualified.slice(0, dot), name: qualified.slice(dot + 1) };
}

/** The project's retained allocations (a few: each is a deleted Retain claim), in key order. */
async function everyRetained({ db, projectId }: KindContext): Promise<StoredObject[]> {
  const out: StoredObject[] = [];
  for (let offset = 0; ; offset += 200) {
    const rows = await listRetainedAllocations(db, { projectId, limit: 200, offset });
    for (const r of rows) {
      const resource = retainedAllocationResource(r);
      const { namespace, name } = splitQualified(r.name);
      out.push({
        uid: r.id,
        namespace,
        name,
        createdAt: null,
        spec: resource.spec,
        status: { ...resource.status, retainedUntil: r.retainedUntil.toISOString() },
      });
    }
    if (rows.length < 200) {
      const key = (o: StoredObject) => `${o.namespace}\u0000${o.name}`;
      return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    }
  }
}

async function retainedPage(ctx: KindContext, page: ListPage): Promise<StoredObject[]> {
  const { after } = page;
  return (await everyRetained(ctx))
    .filter((o) => page.namespace === undefined || o.namespace === page.namespace)
    .filter((o) => !after || o.namespace! > after.namespace || (o.namespace === after.namespace && o.name > after.name))
    .slice(0, page.limit);
}

/**
 * The block a deleted `Retain` claim left, under the claim's name, until it is released (delete)
 * or expires. Made by the system: no create; its spec cannot change.
 */
export const retainedAllocationKind = declareKind({
  group: GROUP,
  version: VERSION,
  kind: 'RetainedAllocation',
  plural: 'retainedallocations',
  singular: 'retainedallocation',
  shortNames: ['ra'],
  categories: ['meridian', 'ipam'],
  namespaced: true,
  description: "The block of a deleted IP claim with reclaimPolicy Retain: still counted and holding the claim's name until released (deleted) or expired.",
  spec: retainedSpec,
  status: retainedStatus,
  immutable: [
    { path: 'spec.network', value: (spec) => spec.network },
    { path: 'spec.pool', value: (spec) => spec.pool },
    { path: 'spec.cidr', value: (spec) => spec.cidr },
  ],
  printerColumns: [
    { name: 'Network', type: 'string', description: 'The network', value: (o) => o.spec.network },
    { name: 'CIDR', type: 'string', description: 'The retained block', value: (o) => o.spec.cidr },
    { name: 'Until', type: 'string', description: 'When it returns to its pool', value: (o) => o.status.retainedUntil },
  ],
  fieldSelectors: { 'spec.network': (o) => String(o.spec.network) },
  // An allocation is a retained allocation while it has a retained name (set when its Retain claim is deleted).
  watch: [{ table: 'ip_allocations', object: (r) => (r.retained_name ? ownRow(r, r.retained_name) : null), exists: (r) => r.retained_name !== null }],
  storage: {
    namespacedStorage: true,
    get: async (ctx, name) => (await everyRetained(ctx)).find((r) => r.name === name && r.namespace === nsOf(ctx)),
    list: retainedPage,
    async delete(ctx, name, { dryRun }) {
      const { db, projectId, actor } = ctx;
      const release = (tx: DbOrTx) => releaseRetainedByName(tx, projectId, qualifiedName(nsOf(ctx), name), actor);
      await (dryRun ? inRolledBackTransaction(db, release) : release(db));
    },
  },
});
