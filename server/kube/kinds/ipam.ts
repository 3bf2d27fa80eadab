import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { createClaim, deleteClaim, getClaim, listClaims, listRetainedAllocations, releaseRetainedByName, setClaimLabels } from '@/server/ipam/claims';
import { createNetwork, deleteNetwork, getNetwork, listNetworks, updateNetworkDescription } from '@/server/ipam/networks';
import { claimResource, networkResource, retainedAllocationResource } from '@/server/ipam/resources';
import { resourceName, rootPoolInput } from '@/server/ipam/schemas';
import { DomainError, isDomainError } from '@/server/errors';
import type { FeedRow } from '@/server/changes/feed';
import { declareKind, type KindContext, type StoredObject, type WatchRef } from '../declare';
import { inRolledBackTransaction } from '../dry-run';

/** The IPAM kinds of the Kubernetes API: Network, IPClaim and RetainedAllocation (ipam.miloapis.com/v1alpha1), over the domain functions REST v1 calls. */

const GROUP = 'ipam.miloapis.com';
const VERSION = 'v1alpha1';

/** Every page of a domain list, in order (the API filters and pages what it serves itself). */
async function everyPage<T>(page: (offset: number) => Promise<{ items: T[]; nextOffset: number | null }>): Promise<T[]> {
  const out: T[] = [];
  for (let offset: number | null = 0; offset !== null;) {
    const p: { items: T[]; nextOffset: number | null } = await page(offset);
    out.push(...p.items);
    offset = p.nextOffset;
  }
  return out;
}

const orUndefined = async <T>(read: () => Promise<T>): Promise<T | undefined> => {
  try {
    return await read();
  } catch (e) {
    if (isDomainError(e) && e.code === 'NotFound') return undefined;
    throw e;
  }
};

/** The object a row of a kind's own table is: its project, id and name columns. */
const ownRow = (r: FeedRow, name = r.name): WatchRef | null => (r.project_id && r.id && name ? { projectId: r.project_id, uid: r.id, name } : null);

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
function storedNetwork(n: Parameters<typeof networkResource>[0]): StoredObject {
  const r = networkResource(n);
  const cidrs = r.spec.cidrs.map((c, i) => {
    const defaultName = `${n.name}-v${c.cidr.includes(':') ? 6 : 4}${i > 0 ? `-${i}` : ''}`;
    return c.name === defaultName ? { cidr: c.cidr } : c;
  });
  return { uid: r.metadata.uid, name: r.metadata.name, createdAt: n.createdAt, spec: { ...r.spec, cidrs }, status: r.status };
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
    get: async ({ db, projectId }, name) => orUndefined(async () => storedNetwork(await getNetwork(db, projectId, name))),
    list: async ({ db, projectId }) => (await everyPage((offset) => listNetworks(db, projectId, { limit: 200, offset }))).map((n) => storedNetwork(n)),
    async create({ db, projectId, actor }, { name, spec }, { dryRun }) {
      const input = { name, description: spec.description, cidrs: spec.cidrs };
      const create = (tx: DbOrTx) => createNetwork(tx, projectId, input, actor);
      return storedNetwork(dryRun ? await inRolledBackTransaction(db, create) : await create(db));
    },
    async update({ db, projectId, actor }, current, next, { dryRun }) {
      const write = (tx: DbOrTx) => updateNetworkDescription(tx, projectId, current.name, next.description ?? '', actor);
      return dryRun ? inRolledBackTransaction(db, write) : write(db);
    },
    async delete({ db, projectId, actor }, name, { dryRun }) {
      const remove = (tx: DbOrTx) => deleteNetwork(tx, projectId, name, actor);
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
  return { uid: c.id, name: c.name, createdAt: c.createdAt, spec: r.spec, status: r.status, labels: c.labels };
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
    get: async ({ db, projectId }, name) => orUndefined(async () => storedClaim(await getClaim(db, projectId, name))),
    list: async ({ db, projectId }) =>
      (await everyPage((offset) => listClaims(db, projectId, { sort: 'name', order: 'asc', limit: 500, offset }))).map((c) => storedClaim(c)),
    async create({ db, projectId, actor }: KindContext, { name, spec, labels }, { dryRun }) {
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
      const result = await createClaim(db, projectId, input, actor, { dryRun });
      if (!result.created && !dryRun) throw new DomainError('Conflict', `ipclaim "${name}" already exists`, 'name');
      return storedClaim(result.claim, dryRun);
    },
    relabel: ({ db, projectId, actor }, name, labels) => setClaimLabels(db, projectId, name, labels, actor),
    async delete({ db, projectId, actor }, name, { dryRun }) {
      const remove = (tx: DbOrTx) => deleteClaim(tx, projectId, name, actor);
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

async function everyRetained({ db, projectId }: KindContext): Promise<StoredObject[]> {
  const out: StoredObject[] = [];
  for (let offset = 0; ; offset += 200) {
    const rows = await listRetainedAllocations(db, { projectId, limit: 200, offset });
    for (const r of rows) {
      const resource = retainedAllocationResource(r);
      out.push({ uid: r.id, name: r.name, createdAt: null, spec: resource.spec, status: { ...resource.status, retainedUntil: r.retainedUntil.toISOString() } });
    }
    if (rows.length < 200) return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
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
    get: async (ctx, name) => (await everyRetained(ctx)).find((r) => r.name === name),
    list: everyRetained,
    async delete({ db, projectId, actor }, name, { dryRun }) {
      const release = (tx: DbOrTx) => releaseRetainedByName(tx, projectId, name, actor);
      await (dryRun ? inRolledBackTransaction(db, release) : release(db));
    },
  },
});
