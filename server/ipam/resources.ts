import { z } from 'zod';
import { listOutput, resourceOutput, statusOutput, timestamp } from '@/lib/rest-outputs';
import type { ClaimView, RetainedAllocationView } from './claims';
import type { getNetwork, PoolView } from './networks';
import { claimCreateInput, type networkCreateInput, resourceName, rootPoolInput } from './schemas';

/**
 * REST v1 resource shapes (`{ apiVersion, kind, metadata, spec, status }`) and their mapping to the
 * domain's inputs and views. The domain knows nothing of this shape.
 */
export const IPAM_API_VERSION = 'ipam.miloapis.com/v1alpha1';

const metadata = z.strictObject({ name: resourceName, labels: z.record(z.string().max(63), z.string().max(253)).optional() });

export const networkResourceInput = z.strictObject({
  apiVersion: z.string().optional(),
  kind: z.literal('Network').optional(),
  metadata,
  spec: z.strictObject({
    description: z.string().max(500).optional(),
    cidrs: z.array(rootPoolInput).min(1, 'at least one root CIDR is required').max(16),
  }),
});

const claimSpec = claimCreateInput.omit({ name: true, labels: true });
export const claimResourceInput = z.strictObject({
  apiVersion: z.string().optional(),
  kind: z.literal('IPClaim').optional(),
  metadata,
  spec: claimSpec,
});

export function networkInputFromResource(body: z.infer<typeof networkResourceInput>): z.infer<typeof networkCreateInput> {
  return { name: body.metadata.name, description: body.spec.description, cidrs: body.spec.cidrs };
}

export function claimInputFromResource(body: z.infer<typeof claimResourceInput>): z.infer<typeof claimCreateInput> {
  return { ...body.spec, name: body.metadata.name, labels: body.metadata.labels };
}

type NetworkDetail = Awaited<ReturnType<typeof getNetwork>>;

function poolStatus(p: PoolView) {
  return {
    name: p.name,
    kind: p.kind,
    cidr: p.cidr,
    family: p.family === 4 ? 'IPv4' : 'IPv6',
    rules: {
      minPrefixLength: p.minPrefixLength,
      maxPrefixLength: p.maxPrefixLength,
      defaultPrefixLength: p.defaultPrefixLength,
      strategy: p.strategy,
      reserveLeading: p.reserveLeading,
      reserveTrailing: p.reserveTrailing,
    },
    capacity: p.capacity,
    reserved: p.reserved,
    allocated: p.allocated,
    available: p.available,
    utilization: p.utilization,
    phase: p.phase,
  };
}

export function networkResource(n: Pick<NetworkDetail, 'id' | 'name' | 'description' | 'createdAt' | 'pools' | 'utilization'> & { claimCount?: number }) {
  return {
    apiVersion: IPAM_API_VERSION,
    kind: 'Network',
    metadata: { name: n.name, uid: n.id, creationTimestamp: n.createdAt },
    spec: {
      description: n.description,
      cidrs: n.pools.filter((p) => p.parentPoolId === null).map((p) => ({ name: p.name, cidr: p.cidr })),
    },
    status: { pools: n.pools.map(poolStatus), utilization: n.utilization, ...(n.claimCount !== undefined ? { claims: n.claimCount } : {}) },
  };
}

export function claimResource(c: ClaimView, extra: { dryRun?: boolean } = {}) {
  return {
    apiVersion: IPAM_API_VERSION,
    kind: 'IPClaim',
    metadata: { name: c.name, uid: extra.dryRun ? null : c.id, creationTimestamp: extra.dryRun ? null : c.createdAt, labels: c.labels },
    spec: {
      network: c.network,
      pool: c.pool,
      family: c.family === 4 ? 'IPv4' : 'IPv6',
      prefixLength: c.prefixLength,
      address: c.requestedCidr,
      reclaimPolicy: c.reclaimPolicy,
      retentionSeconds: c.retentionSeconds,
      ownerRef: c.ownerRef,
    },
    status: {
      phase: extra.dryRun ? 'Preview' : c.phase,
      allocatedCIDR: c.allocatedCidr,
      pool: c.pool,
      allocationRef: extra.dryRun ? null : c.allocationId,
    },
  };
}

/** A retained allocation: the block a deleted `Retain` claim left, under the claim's name, until released or expired. */
export function retainedAllocationResource(r: RetainedAllocationView) {
  return {
    apiVersion: IPAM_API_VERSION,
    kind: 'RetainedAllocation',
    metadata: { name: r.name, uid: r.id },
    spec: { network: r.network, pool: r.pool, cidr: r.cidr },
    status: { addresses: r.size, retainedUntil: r.retainedUntil },
  };
}

// ---- What the routes answer (the routes' declared outputs) --------------------------------------

/** An address count as an exact decimal string (IPv6 counts pass 2^53). */
const addressCount = z.string().regex(/^\d+$/).describe('exact address count, decimal');
const share = z.number().min(0).max(1).describe('share of the allocatable space in use');

const poolOutput = z.object({
  name: z.string(),
  kind: z.string(),
  cidr: z.string(),
  family: z.enum(['IPv4', 'IPv6']),
  rules: z.object({
    minPrefixLength: z.number().int(),
    maxPrefixLength: z.number().int(),
    defaultPrefixLength: z.number().int(),
    strategy: z.string(),
    reserveLeading: z.string(),
    reserveTrailing: z.string(),
  }),
  capacity: addressCount,
  reserved: addressCount,
  allocated: addressCount,
  available: addressCount,
  utilization: share,
  phase: z.enum(['Ready', 'Exhausted']),
});

const familyTotalsOutput = z.object({ capacity: addressCount, reserved: addressCount, allocated: addressCount, available: addressCount, utilization: share });

export const networkOutput = resourceOutput(IPAM_API_VERSION, 'Network', {
  metadata: { name: z.string(), uid: z.uuid(), creationTimestamp: timestamp },
  spec: { description: z.string(), cidrs: z.array(z.object({ name: z.string(), cidr: z.string() })) },
  status: {
    pools: z.array(poolOutput),
    utilization: z
      .object({ IPv4: familyTotalsOutput.nullable(), IPv6: familyTotalsOutput.nullable() })
      .describe('per family, over the root pools; null: no pool of that family'),
    claims: z.number().int().nonnegative().optional(),
  },
});
export const networkListOutput = listOutput('NetworkList', networkOutput);
export const networkDeletedOutput = statusOutput('Network');

export const claimOutput = resourceOutput(IPAM_API_VERSION, 'IPClaim', {
  metadata: { name: z.string(), uid: z.uuid().nullable(), creationTimestamp: timestamp.nullable(), labels: z.record(z.string(), z.string()) },
  spec: {
    network: z.string(),
    pool: z.string(),
    family: z.enum(['IPv4', 'IPv6']),
    prefixLength: z.number().int(),
    address: z.string().nullable(),
    reclaimPolicy: z.enum(['Delete', 'Retain']),
    retentionSeconds: z.number().int(),
    ownerRef: z.unknown(),
  },
  status: { phase: z.enum(['Bound', 'Preview']), allocatedCIDR: z.string(), pool: z.string(), allocationRef: z.uuid().nullable() },
});
export const claimListOutput = listOutput('IPClaimList', claimOutput);
export const claimDeletedOutput = statusOutput('IPClaim', { released: z.boolean(), retainedUntil: timestamp.nullable() });

export const retainedAllocationOutput = resourceOutput(IPAM_API_VERSION, 'RetainedAllocation', {
  metadata: { name: z.string(), uid: z.uuid() },
  spec: { network: z.string(), pool: z.string(), cidr: z.string() },
  status: { addresses: addressCount, retainedUntil: timestamp },
});
export const retainedAllocationListOutput = listOutput('RetainedAllocationList', retainedAllocationOutput);
export const retainedReleasedOutput = statusOutput('RetainedAllocation', { cidr: z.string(), released: z.boolean() });
