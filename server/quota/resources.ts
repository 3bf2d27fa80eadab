import { z } from 'zod';
import { rawTimestamp } from '@/db/client';
import { condition, listOutput, resourceOutput, timestamp } from '@/lib/rest-outputs';
import type { claimCreationPolicies, grantCreationPolicies } from '@/db/schema';
import type { BucketView, ClaimLogEntry } from './buckets';
import type { GrantView } from './grants';
import type { IncreaseView } from './increases';
import type { listRegistrations } from './registrations';
import {
  allowances,
  claimPolicyInput,
  grantPolicyInput,
  increaseCreateInput,
  increaseDecisionInput,
  quotaName,
  registrationInput,
  registrationUpdateInput,
} from './schemas';

/**
 * REST v1 resource shapes of the quota group (`{ apiVersion, kind, metadata, spec, status }`) and
 * their mapping from the domain's views. The domain knows nothing of this shape.
 */
export const QUOTA_API_VERSION = 'quota.miloapis.com/v1alpha1';

const consumerRef = (project: string) => ({ apiGroup: 'resourcemanager.miloapis.com', kind: 'Project', name: project });

export function bucketResource(b: BucketView) {
  return {
    apiVersion: QUOTA_API_VERSION,
    kind: 'AllowanceBucket',
    metadata: { name: `${b.project}.${b.resourceType.replace('/', '.')}` },
    spec: { consumerRef: consumerRef(b.project), resourceType: b.resourceType },
    status: {
      limit: b.limit,
      allocated: b.allocated,
      available: b.available,
      utilization: b.utilization,
      flag: b.flag,
      claimCount: b.claimCount,
      grantCount: b.grantCount,
      registered: b.registered,
      displayUnit: b.displayUnit,
      lastReconciliation: rawTimestamp(b.updatedAt),
    },
  };
}

export function claimResource(c: ClaimLogEntry, project: string) {
  const granted = c.status !== 'Denied';
  return {
    apiVersion: QUOTA_API_VERSION,
    kind: 'ResourceClaim',
    metadata: { name: c.name, uid: c.id, creationTimestamp: rawTimestamp(c.createdAt) },
    spec: { consumerRef: consumerRef(project), requests: c.requests, resourceRef: c.resourceRef },
    status: {
      phase: c.status,
      conditions: [{ type: 'Granted', status: granted ? 'True' : 'False', reason: c.reason, message: c.message }],
      allocations: c.allocations,
      policy: c.policyName,
      requestedBy: c.createdBy,
      releasedAt: rawTimestamp(c.releasedAt),
    },
  };
}

export function grantResource(g: GrantView) {
  return {
    apiVersion: QUOTA_API_VERSION,
    kind: 'ResourceGrant',
    metadata: { name: g.name, uid: g.id, creationTimestamp: rawTimestamp(g.createdAt) },
    spec: { consumerRef: consumerRef(g.project), allowances: g.allowances },
    status: {
      conditions: [{ type: 'Active', status: g.active ? 'True' : 'False', reason: g.activeReason, message: g.activeMessage }],
      source: g.source,
      sourceRef: g.sourceRef,
    },
  };
}

export function increaseResource(r: IncreaseView) {
  return {
    apiVersion: QUOTA_API_VERSION,
    kind: 'QuotaIncreaseRequest',
    metadata: { name: r.id, uid: r.id, creationTimestamp: rawTimestamp(r.createdAt) },
    spec: { consumerRef: consumerRef(r.project), resourceType: r.resourceType, amount: r.amount, reason: r.reason },
    status: {
      phase: r.status,
      requestedBy: r.requestedBy,
      decidedBy: r.decidedBy,
      decidedAt: rawTimestamp(r.decidedAt),
      decisionReason: r.decisionReason,
      approvedAmount: r.approvedAmount,
      grantRef: r.grantName ? { kind: 'ResourceGrant', name: r.grantName } : null,
    },
  };
}

export const increaseResourceInput = z.strictObject({
  apiVersion: z.string().optional(),
  kind: z.literal('QuotaIncreaseRequest').optional(),
  spec: increaseCreateInput,
});

// ---- Operator resources (written with an operator token) ----------------------------------------

type RegistrationRow = Awaited<ReturnType<typeof listRegistrations>>[number];

/** A ResourceRegistration; its name is the resource type it registers (`<group>/<resource>`). */
export function registrationResource(r: RegistrationRow) {
  return {
    apiVersion: QUOTA_API_VERSION,
    kind: 'ResourceRegistration',
    metadata: { name: r.resourceType, uid: r.id, creationTimestamp: rawTimestamp(r.createdAt) },
    spec: {
      resourceType: r.resourceType,
      consumerKind: r.consumerKind,
      type: r.type,
      description: r.description,
      baseUnit: r.baseUnit,
      displayUnit: r.displayUnit,
      unitConversionFactor: r.unitConversionFactor,
      claimingKinds: r.claimingKinds,
    },
    status: {
      conditions: [{ type: 'Active', status: r.active ? 'True' : 'False', reason: r.activeReason, message: r.activeMessage }],
      createdBy: r.createdBy,
      updatedAt: rawTimestamp(r.updatedAt),
    },
  };
}

const same = (a: string | undefined, b: string) => a === undefined || a === b;

/** POST body of a registration: `metadata.name`, when given, must be the spec's resource type. */
export const registrationResourceInput = z
  .strictObject({
    apiVersion: z.string().optional(),
    kind: z.literal('ResourceRegistration').optional(),
    metadata: z.strictObject({ name: z.string().optional() }).optional(),
    spec: registrationInput,
  })
  .refine((b) => same(b.metadata?.name, b.spec.resourceType), { path: ['metadata', 'name'], message: 'must equal spec.resourceType' });

/** PATCH body of a registration: only the named fields change; the resource type is immutable. */
export const registrationPatchInput = z.strictObject({
  spec: registrationUpdateInput.extend({ resourceType: z.string().optional() }),
});

/** POST body of a grant: the project comes from the path; `consumerRef`, when given, must name it. */
export const grantResourceInput = z.strictObject({
  apiVersion: z.string().optional(),
  kind: z.literal('ResourceGrant').optional(),
  metadata: z.strictObject({ name: quotaName }),
  spec: z.strictObject({
    consumerRef: z
      .strictObject({ name: z.string().max(63) })
      .partial()
      .optional(),
    allowances,
  }),
});

/** PUT body of a grant: replaces its allowances (the name comes from the path). */
export const grantReplaceInput = z.strictObject({
  apiVersion: z.string().optional(),
  kind: z.literal('ResourceGrant').optional(),
  metadata: z.strictObject({ name: z.string().optional() }).optional(),
  spec: z.strictObject({
    consumerRef: z
      .strictObject({ name: z.string().max(63) })
      .partial()
      .optional(),
    allowances,
  }),
});

type GrantPolicyRow = typeof grantCreationPolicies.$inferSelect;
type ClaimPolicyRow = typeof claimCreationPolicies.$inferSelect;

const readyCondition = (p: { ready: boolean; readyReason: string; readyMessage: string }) => [
  { type: 'Ready', status: p.ready ? 'True' : 'False', reason: p.readyReason, message: p.readyMessage },
];

/** A GrantCreationPolicy: `status.conditions[Ready]` carries the CEL compiler's message when not Ready. */
export function grantPolicyResource(p: GrantPolicyRow) {
  return {
    apiVersion: QUOTA_API_VERSION,
    kind: 'GrantCreationPolicy',
    metadata: { name: p.name, uid: p.id, generation: p.generation, creationTimestamp: rawTimestamp(p.createdAt) },
    spec: {
      description: p.description,
      triggerKind: p.triggerKind,
      constraints: p.constraints,
      grantNameTemplate: p.grantNameTemplate,
      allowances: p.allowances,
      enabled: p.enabled,
    },
    status: { conditions: readyCondition(p), observedGeneration: p.generation },
  };
}

/** A ClaimCreationPolicy (one per trigger kind), with its Ready condition. */
export function claimPolicyResource(p: ClaimPolicyRow) {
  return {
    apiVersion: QUOTA_API_VERSION,
    kind: 'ClaimCreationPolicy',
    metadata: { name: p.name, uid: p.id, generation: p.generation, creationTimestamp: rawTimestamp(p.createdAt) },
    spec: {
      description: p.description,
      triggerKind: p.triggerKind,
      constraints: p.constraints,
      claimNameTemplate: p.claimNameTemplate,
      requests: p.requests,
      enabled: p.enabled,
    },
    status: { conditions: readyCondition(p), observedGeneration: p.generation },
  };
}

const grantPolicySpec = grantPolicyInput.omit({ name: true }).extend({ triggerKind: z.literal('Project').optional() });
const claimPolicySpec = claimPolicyInput.omit({ name: true });

/**
 * The bodies of a policy kind: POST (`create`, named) and PUT (`replace`: replaces the spec, omitted
 * fields take their defaults; the name comes from the path).
 */
function policyBodies<S extends z.ZodType>(kind: 'GrantCreationPolicy' | 'ClaimCreationPolicy', spec: S) {
  const envelope = { apiVersion: z.string().optional(), kind: z.literal(kind).optional() };
  return {
    create: z.strictObject({ ...envelope, metadata: z.strictObject({ name: quotaName }), spec }),
    replace: z.strictObject({ ...envelope, metadata: z.strictObject({ name: z.string().optional() }).optional(), spec }),
  };
}

const grantPolicyBodies = policyBodies('GrantCreationPolicy', grantPolicySpec);
const claimPolicyBodies = policyBodies('ClaimCreationPolicy', claimPolicySpec);
/** POST body of a GrantCreationPolicy (trigger: Project). */
export const grantPolicyResourceInput = grantPolicyBodies.create;
export const grantPolicyReplaceInput = grantPolicyBodies.replace;
export const claimPolicyResourceInput = claimPolicyBodies.create;
export const claimPolicyReplaceInput = claimPolicyBodies.replace;

/** Body of `…/quotaincreaserequests/{name}/approve`: optionally a different amount and a note. */
export const increaseApproveInput = increaseDecisionInput.omit({ id: true });

/** Body of `…/quotaincreaserequests/{name}/reject`: the reason the tenant will read. */
export const increaseRejectInput = z.strictObject({ reason: z.string().trim().min(1, 'say why the request is rejected').max(1000) });

// ---- What the routes answer (the routes' declared outputs) --------------------------------------

const amounts = z.array(z.object({ resourceType: z.string(), amount: z.number() }));
const consumerRefOutput = z.object({ apiGroup: z.string(), kind: z.literal('Project'), name: z.string() });
const created = { uid: z.uuid(), creationTimestamp: timestamp };

export const bucketOutput = resourceOutput(QUOTA_API_VERSION, 'AllowanceBucket', {
  metadata: { name: z.string() },
  spec: { consumerRef: consumerRefOutput, resourceType: z.string() },
  status: {
    limit: z.number(),
    allocated: z.number(),
    available: z.number(),
    utilization: z.number(),
    flag: z.enum(['Ok', 'Near', 'Full', 'Over']),
    claimCount: z.number().int(),
    grantCount: z.number().int(),
    registered: z.boolean(),
    displayUnit: z.string().nullable(),
    lastReconciliation: timestamp,
  },
});

export const quotaClaimOutput = resourceOutput(QUOTA_API_VERSION, 'ResourceClaim', {
  metadata: { name: z.string(), ...created },
  spec: { consumerRef: consumerRefOutput, requests: amounts, resourceRef: z.object({ kind: z.string(), name: z.string(), uid: z.string().nullable() }) },
  status: {
    phase: z.enum(['Granted', 'Released', 'Denied']),
    conditions: z.array(condition),
    allocations: z.array(
      z.object({ resourceType: z.string(), amount: z.number(), status: z.enum(['Granted', 'Denied']), reason: z.string(), message: z.string() }),
    ),
    policy: z.string().nullable(),
    requestedBy: z.string(),
    releasedAt: timestamp.nullable(),
  },
});

export const grantOutput = resourceOutput(QUOTA_API_VERSION, 'ResourceGrant', {
  metadata: { name: z.string(), ...created },
  spec: { consumerRef: consumerRefOutput, allowances: amounts },
  status: { conditions: z.array(condition), source: z.string(), sourceRef: z.string().nullable() },
});

export const increaseOutput = resourceOutput(QUOTA_API_VERSION, 'QuotaIncreaseRequest', {
  metadata: { name: z.uuid(), ...created },
  spec: { consumerRef: consumerRefOutput, resourceType: z.string(), amount: z.number(), reason: z.string() },
  status: {
    phase: z.enum(['Pending', 'Approved', 'Rejected']),
    requestedBy: z.string(),
    decidedBy: z.string().nullable(),
    decidedAt: timestamp.nullable(),
    decisionReason: z.string().nullable(),
    approvedAmount: z.number().nullable(),
    grantRef: z.object({ kind: z.literal('ResourceGrant'), name: z.string() }).nullable(),
  },
});

export const registrationOutput = resourceOutput(QUOTA_API_VERSION, 'ResourceRegistration', {
  metadata: { name: z.string(), ...created },
  spec: {
    resourceType: z.string(),
    consumerKind: z.string(),
    type: z.string(),
    description: z.string().nullable(),
    baseUnit: z.string().nullable(),
    displayUnit: z.string().nullable(),
    unitConversionFactor: z.number().nullable(),
    claimingKinds: z.array(z.string()),
  },
  status: { conditions: z.array(condition), createdBy: z.string().nullable(), updatedAt: timestamp },
});

const policyStatus = { conditions: z.array(condition), observedGeneration: z.number().int() };
const policyMetadata = { name: z.string(), generation: z.number().int(), ...created };

export const grantPolicyOutput = resourceOutput(QUOTA_API_VERSION, 'GrantCreationPolicy', {
  metadata: policyMetadata,
  spec: {
    description: z.string().nullable(),
    triggerKind: z.string(),
    constraints: z.unknown(),
    grantNameTemplate: z.string(),
    allowances: z.unknown().describe('amounts, each an integer or a {{ CEL }} template'),
    enabled: z.boolean(),
  },
  status: policyStatus,
});

export const claimPolicyOutput = resourceOutput(QUOTA_API_VERSION, 'ClaimCreationPolicy', {
  metadata: policyMetadata,
  spec: {
    description: z.string().nullable(),
    triggerKind: z.string(),
    constraints: z.unknown(),
    claimNameTemplate: z.string(),
    requests: z.unknown().describe('amounts, each an integer or a {{ CEL }} template'),
    enabled: z.boolean(),
  },
  status: policyStatus,
});

export const quotaOutputs = {
  bucketList: listOutput('AllowanceBucketList', bucketOutput),
  claimList: listOutput('ResourceClaimList', quotaClaimOutput),
  grantList: listOutput('ResourceGrantList', grantOutput),
  increaseList: listOutput('QuotaIncreaseRequestList', increaseOutput),
  registrationList: listOutput('ResourceRegistrationList', registrationOutput),
  grantPolicyList: listOutput('GrantCreationPolicyList', grantPolicyOutput),
  claimPolicyList: listOutput('ClaimCreationPolicyList', claimPolicyOutput),
  registrationDeleted: z.object({ resourceType: z.string() }),
  deleted: z.object({ name: z.string() }),
};
