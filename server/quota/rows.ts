import { z } from 'zod';
import type { QuotaAllocationStatus, QuotaAmount, QuotaConstraint, QuotaRequestTemplate } from '@/db/schema';

/**
 * The quota's stored shapes as raw statements read them (`query` in db/query.ts): the jsonb columns
 * of claims and policies, the policy an admission reads, and what `quota_admit` answers. They check
 * what the database hands over; the input schemas (schemas.ts) check what callers send.
 */

export const amountRow = z.object({ resourceType: z.string(), amount: z.number() }) satisfies z.ZodType<QuotaAmount>;

export const allocationStatusRow = z.object({
  resourceType: z.string(),
  amount: z.number(),
  status: z.enum(['Granted', 'Denied']),
  reason: z.enum(['QuotaAvailable', 'QuotaExceeded', 'ValidationFailed']),
  message: z.string(),
}) satisfies z.ZodType<QuotaAllocationStatus>;

const constraintRow = z.object({ expression: z.string(), message: z.string().optional() }) satisfies z.ZodType<QuotaConstraint>;
const requestTemplateRow = z.object({ resourceType: z.string(), amount: z.union([z.number(), z.string()]) }) satisfies z.ZodType<QuotaRequestTemplate>;

/** A kind's ClaimCreationPolicy with the registrations of the types it requests (`admissionPolicyQuery`). */
export const policyRow = z.object({
  name: z.string(),
  enabled: z.boolean(),
  ready: z.boolean(),
  readyReason: z.string(),
  readyMessage: z.string(),
  constraints: z.array(constraintRow),
  claimNameTemplate: z.string(),
  requests: z.array(requestTemplateRow),
  namespace: z.string(),
  registrations: z.array(z.object({ resourceType: z.string(), active: z.boolean(), claimingKinds: z.array(z.string()) })),
});
export type PolicyRow = z.infer<typeof policyRow>;

/**
 * What the SQL function `quota_admit` (server/quota/sql/quota_admit.sql) answers, by `kind`:
 * granted (the claim's id and its buckets after the grant), exceeded (the first request whose bucket
 * had no room) or nameTaken (another object's live claim holds the rendered name).
 */
export const quotaAdmitResult = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('granted'),
    id: z.string(),
    buckets: z.array(z.object({ resourceType: z.string(), limit: z.union([z.string(), z.number()]), allocated: z.union([z.string(), z.number()]) })),
  }),
  z.object({ kind: z.literal('exceeded'), index: z.number() }),
  z.object({ kind: z.literal('nameTaken') }),
]);
export type QuotaAdmitResult = z.infer<typeof quotaAdmitResult>;
