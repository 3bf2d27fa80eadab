import { z } from 'zod';

/** Input contracts shared by the REST API and tRPC (validated at every edge). */
export const resourceName = z
  .string()
  .min(1, 'is required')
  .max(63, 'must be at most 63 characters')
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'must be lower-case letters, digits and dashes, starting and ending with a letter or digit');

export const strategy = z.enum(['FirstFit', 'BestFit']);

/**
 * A number of addresses, exact at any size: a JSON number while it is exact (up to 2^53 − 1), or a
 * decimal string (an IPv6 pool may reserve 2^64 and more). Whether it fits is the pool's to say.
 */
export const addressCount = z.union([z.number(), z.string()]).superRefine((v, ctx) => {
  const problem =
    typeof v === 'number'
      ? !Number.isInteger(v)
        ? 'must be a whole number of addresses'
        : v < 0
          ? 'must not be negative'
          : !Number.isSafeInteger(v)
            ? 'is beyond 2^53 − 1, where JSON numbers are not exact: give it as a decimal string'
            : undefined
      : !/^\d{1,39}$/.test(v)
        ? 'must be a decimal string of at most 39 digits (a whole, non-negative number of addresses)'
        : undefined;
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const poolRules = z.strictObject({
  minPrefixLength: z.number().int().min(0).max(128).optional(),
  maxPrefixLength: z.number().int().min(0).max(128).optional(),
  defaultPrefixLength: z.number().int().min(0).max(128).optional(),
  strategy: strategy.optional(),
  /** Addresses held back at the start of the pool (not allocatable), up to the pool's size. */
  reserveLeading: addressCount.optional(),
  /** Addresses held back at the end of the pool, up to what the leading reservation leaves. */
  reserveTrailing: addressCount.optional(),
});

export const rootPoolInput = poolRules.extend({
  name: resourceName.optional(),
  cidr: z.string().min(1, 'is required').max(64),
});

export const networkCreateInput = z.strictObject({
  name: resourceName,
  description: z.string().max(500).optional(),
  cidrs: z.array(rootPoolInput).min(1, 'at least one root CIDR is required').max(16),
});

export const poolCreateInput = poolRules.extend({
  network: resourceName,
  name: resourceName,
  parent: resourceName,
  /** An exact CIDR inside the parent, or a prefix length for the parent to choose. */
  cidr: z.string().max(64).optional(),
  prefixLength: z.number().int().min(0).max(128).optional(),
  /** Claims and pod blocks that name no pool come from this child pool first; otherwise only a claim naming it does. */
  default: z.boolean().optional(),
});

export const claimCreateInput = z.strictObject({
  name: resourceName,
  network: resourceName,
  pool: resourceName.optional(),
  family: z.union([z.literal(4), z.literal(6), z.enum(['IPv4', 'IPv6'])]).optional(),
  prefixLength: z.number().int().min(0).max(128).optional(),
  /** Pin an exact address or CIDR (a bare address means /32 or /128). */
  address: z.string().max(64).optional(),
  reclaimPolicy: z.enum(['Delete', 'Retain']).default('Delete'),
  retentionSeconds: z
    .number()
    .int()
    .min(60)
    .max(365 * 24 * 3600)
    .optional(),
  ownerRef: z.strictObject({ kind: z.string().max(63), name: z.string().max(253) }).optional(),
  labels: z.record(z.string().max(63), z.string().max(253)).optional(),
});

export type NetworkCreateInput = z.infer<typeof networkCreateInput>;
export type PoolCreateInput = z.infer<typeof poolCreateInput>;
export type ClaimCreateInput = z.infer<typeof claimCreateInput>;

export const claimListInput = z.strictObject({
  network: resourceName.optional(),
  pool: resourceName.optional(),
  family: z.union([z.literal(4), z.literal(6)]).optional(),
  search: z.string().max(100).optional(),
  sort: z.enum(['name', 'createdAt', 'cidr']).default('createdAt'),
  order: z.enum(['asc', 'desc']).default('desc'),
  limit: z.number().int().min(1).max(500).default(50),
  offset: z.number().int().min(0).max(10_000_000).default(0),
});
export type ClaimListInput = z.infer<typeof claimListInput>;

export const retainedListInput = z.strictObject({
  network: resourceName.optional(),
  limit: z.number().int().min(1).max(200).default(50),
  offset: z.number().int().min(0).max(10_000_000).default(0),
});
