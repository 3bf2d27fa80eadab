import { z } from 'zod';

/** Input contracts of the quota domain, shared by tRPC and the REST API (validated at every edge). */

export const quotaName = z
  .string()
  .min(1, 'is required')
  .max(63, 'must be at most 63 characters')
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'must be lower-case letters, digits and dashes, starting and ending with a letter or digit');

/** `<group>/<plural>`, e.g. `ipam.miloapis.com/ipclaims`. */
export const resourceType = z
  .string()
  .min(3, 'is required')
  .max(253)
  .regex(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?\/[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'must be <group>/<resource>, e.g. ipam.miloapis.com/ipclaims');

/** An object kind, e.g. `IPClaim`, `Machine`. */
export const objectKind = z.string().regex(/^[A-Z][A-Za-z0-9]{0,62}$/, 'must be a kind, e.g. IPClaim');

/** Amounts are whole base units. 2^53−1 keeps them exact in JavaScript. */
export const quotaAmount = z.number().int('must be a whole number').min(0, 'must not be negative').max(Number.MAX_SAFE_INTEGER);

export const amountEntry = z.strictObject({ resourceType, amount: quotaAmount });

const uniqueTypes = (list: { resourceType: string }[]) => new Set(list.map((a) => a.resourceType)).size === list.length;

export const allowances = z.array(amountEntry).min(1, 'at least one allowance is required').max(32).refine(uniqueTypes, 'each resource type may appear once');

export const registrationInput = z.strictObject({
  resourceType,
  consumerKind: z.literal('Project').default('Project'),
  type: z.enum(['Entity', 'Allocation']),
  description: z.string().max(500).default(''),
  baseUnit: z.string().trim().min(1, 'is required').max(63),
  displayUnit: z.string().trim().min(1, 'is required').max(63),
  unitConversionFactor: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).default(1),
  claimingKinds: z.array(objectKind).min(1, 'at least one kind must be allowed to claim it').max(32),
});
export type RegistrationInput = z.infer<typeof registrationInput>;

/** Every field optional and without defaults: an update changes only what it names. */
export const registrationUpdateInput = z.strictObject({
  type: z.enum(['Entity', 'Allocation']).optional(),
  description: z.string().max(500).optional(),
  baseUnit: z.string().trim().min(1, 'is required').max(63).optional(),
  displayUnit: z.string().trim().min(1, 'is required').max(63).optional(),
  unitConversionFactor: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  claimingKinds: z.array(objectKind).min(1, 'at least one kind must be allowed to claim it').max(32).optional(),
});

export const grantInput = z.strictObject({
  project: z.string().min(1).max(63),
  name: quotaName,
  allowances,
});

export const grantUpdateInput = z.strictObject({ project: z.string().min(1).max(63), name: quotaName, allowances });

const constraint = z.strictObject({
  expression: z.string().trim().min(1, 'is required').max(4000),
  message: z.string().max(500).optional(),
});

const template = z.string().min(1, 'is required').max(500);

export const grantPolicyInput = z.strictObject({
  name: quotaName,
  description: z.string().max(500).default(''),
  constraints: z.array(constraint).max(16).default([]),
  grantNameTemplate: template,
  allowances,
  enabled: z.boolean().default(true),
});
export type GrantPolicyInput = z.infer<typeof grantPolicyInput>;

const requestTemplate = z.strictObject({
  resourceType,
  /** A whole number, or a `{{ CEL }}` template rendering to one. */
  amount: z.union([quotaAmount.min(1, 'must be at least 1'), z.string().trim().min(1).max(500)]),
});

export const claimPolicyInput = z.strictObject({
  name: quotaName,
  description: z.string().max(500).default(''),
  triggerKind: objectKind,
  constraints: z.array(constraint).max(16).default([]),
  claimNameTemplate: template,
  requests: z.array(requestTemplate).min(1, 'at least one request is required').max(16).refine(uniqueTypes, 'each resource type may appear once'),
  enabled: z.boolean().default(true),
});
export type ClaimPolicyInput = z.infer<typeof claimPolicyInput>;

export const increaseCreateInput = z.strictObject({
  resourceType,
  // The bound is checked first: 99999999999999999999 is "too large", not "not a whole number" (it is no longer exact as a double).
  amount: z.number().max(1_000_000_000, 'must be at most 1,000,000,000').int('must be a whole number').min(1, 'must be at least 1'),
  reason: z.string().trim().min(3, 'say why you need it (at least 3 characters)').max(1000),
});
export type IncreaseCreateInput = z.infer<typeof increaseCreateInput>;

export const increaseDecisionInput = z.strictObject({
  id: z.uuid(),
  reason: z.string().trim().max(1000).optional(),
  /** Approve less (or more) than asked; defaults to the requested amount. */
  amount: z.number().int().min(1).max(1_000_000_000).optional(),
});

export const claimLogInput = z.strictObject({
  status: z.enum(['Granted', 'Denied', 'Released']).optional(),
  resourceType: resourceType.optional(),
  search: z.string().max(100).optional(),
  limit: z.number().int().min(1).max(500).default(50),
  offset: z.number().int().min(0).default(0),
});
export type ClaimLogInput = z.infer<typeof claimLogInput>;
