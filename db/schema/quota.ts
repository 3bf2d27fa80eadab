import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { projects } from './tenancy';

/** One `{resourceType, amount}` pair, as grants, claims and policies carry them. */
export interface QuotaAmount {
  resourceType: string;
  amount: number;
}

/** A claim request in a ClaimCreationPolicy: `amount` is an integer or a `{{ CEL }}` template rendering to one. */
export interface QuotaRequestTemplate {
  resourceType: string;
  amount: number | string;
}

/** A CEL constraint of a policy's trigger; the policy applies only when every constraint is true. */
export interface QuotaConstraint {
  expression: string;
  message?: string;
}

/** Per-request outcome of a ResourceClaim. */
export interface QuotaAllocationStatus {
  resourceType: string;
  amount: number;
  status: 'Granted' | 'Denied';
  reason: 'QuotaAvailable' | 'QuotaExceeded' | 'ValidationFailed';
  message: string;
}

/**
 * ResourceRegistration: makes a resource type quota-managed. A type without a registration is not
 * quota-managed (its objects are admitted without a claim); a registered type with no grant for a
 * project has limit 0 there. `claimingKinds` are the object kinds allowed to claim it (a claim from
 * another kind is denied with `ValidationFailed`).
 */
export const resourceRegistrations = pgTable('resource_registrations', {
  id: uuid('id').primaryKey().defaultRandom(),
  /** `<group>/<plural>`, e.g. `ipam.miloapis.com/ipclaims`. */
  resourceType: text('resource_type').notNull().unique(),
  /** Who consumes it: always `Project` today. */
  consumerKind: text('consumer_kind').notNull().default('Project'),
  /** `Entity` (a count of objects) or `Allocation` (an amount of something, e.g. addresses, cores). */
  type: text('type').notNull(),
  description: text('description').notNull().default(''),
  /** The unit amounts are stored in (e.g. `claims`, `bytes`). */
  baseUnit: text('base_unit').notNull(),
  /** The unit people see (e.g. `claims`, `GiB`); `unitConversionFactor` base units make one display unit. */
  displayUnit: text('display_unit').notNull(),
  unitConversionFactor: bigint('unit_conversion_factor', { mode: 'number' }).notNull().default(1),
  claimingKinds: text('claiming_kinds').array().notNull(),
  /** The Active condition: status, machine reason, human message. */
  active: boolean('active').notNull().default(true),
  activeReason: text('active_reason').notNull().default('RegistrationActive'),
  activeMessage: text('active_message').notNull().default(''),
  createdBy: text('created_by').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * ResourceGrant: allowances given to one project. Active only while every allowance's type is
 * registered (otherwise none of it counts: reason `UnregisteredResourceType`); only active grants
 * add to bucket limits. `source` says where it came from (a policy, an operator, an approved
 * increase request, the migration that introduced quota).
 */
export const resourceGrants = pgTable(
  'resource_grants',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    allowances: jsonb('allowances').$type<QuotaAmount[]>().notNull(),
    active: boolean('active').notNull().default(true),
    activeReason: text('active_reason').notNull().default('AllResourceTypesRegistered'),
    activeMessage: text('active_message').notNull().default(''),
    /** `Policy`, `Operator`, `IncreaseRequest` or `Migration`. */
    source: text('source').notNull(),
    /** The policy name or increase-request id behind it. */
    sourceRef: text('source_ref'),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('resource_grants_project_name').on(t.projectId, t.name)],
);

/**
 * AllowanceBucket per (project, resource type): the books admission decides on. Maintained in the
 * transaction of every change: `limit` = sum of the project's active grants for the type,
 * `allocated` = sum of its live granted claims (so `available = max(0, limit − allocated)` is derived,
 * never stored). `allocated` may exceed `limit` only when a grant shrank below it; admission's
 * conditional update never lets a claim push it over. The audit job recomputes both from the
 * grants and claims and reports any difference.
 */
export const allowanceBuckets = pgTable(
  'allowance_buckets',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    resourceType: text('resource_type').notNull(),
    limit: bigint('limit', { mode: 'number' }).notNull().default(0),
    allocated: bigint('allocated', { mode: 'number' }).notNull().default(0),
    /** Live granted claims drawing on this bucket. */
    claimCount: integer('claim_count').notNull().default(0),
    /** Active grants contributing to `limit`. */
    grantCount: integer('grant_count').notNull().default(0),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.resourceType] }),
    check('allowance_buckets_sane', sql`${t.allocated} >= 0 and ${t.limit} >= 0 and ${t.claimCount} >= 0 and ${t.grantCount} >= 0`),
  ],
);

/**
 * ResourceClaim: one admission decision for an object (`ref*`). Granted claims count in their
 * buckets until `releasedAt` (set in the transaction that deletes the object). Denied claims
 * changed nothing and are kept only as the tenant's claim log (written after the object's
 * transaction rolled back; see server/quota/admission.ts).
 */
export const resourceClaims = pgTable(
  'resource_claims',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** Rendered from the ClaimCreationPolicy's name template, e.g. `ipclaim-web`. */
    name: text('name').notNull(),
    requests: jsonb('requests').$type<QuotaAmount[]>().notNull(),
    /** `Granted` or `Denied`. */
    status: text('status').notNull(),
    /** `QuotaAvailable`, `QuotaExceeded` or `ValidationFailed`. */
    reason: text('reason').notNull(),
    message: text('message').notNull(),
    allocations: jsonb('allocations').$type<QuotaAllocationStatus[]>().notNull(),
    /** The object that caused the claim: kind, name, optional uid. */
    refKind: text('ref_kind').notNull(),
    refName: text('ref_name').notNull(),
    refUid: text('ref_uid'),
    policyName: text('policy_name'),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    releasedAt: timestamp('released_at', { withTimezone: true }),
  },
  (t) => [
    // A live granted claim's name and its object are unique per project.
    uniqueIndex('resource_claims_live_name')
      .on(t.projectId, t.name)
      .where(sql`${t.status} = 'Granted' and ${t.releasedAt} is null`),
    uniqueIndex('resource_claims_live_ref')
      .on(t.projectId, t.refKind, t.refName)
      .where(sql`${t.status} = 'Granted' and ${t.releasedAt} is null`),
    index('resource_claims_project_created').on(t.projectId, t.createdAt),
  ],
);

/**
 * GrantCreationPolicy: when a project is created, every enabled and Ready policy whose constraints
 * hold creates a grant from its templates (`{{ CEL }}` segments). A policy whose expressions do not
 * compile is stored with `ready = false` and the compiler's message, and never applied.
 */
export const grantCreationPolicies = pgTable('grant_creation_policies', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull().unique(),
  description: text('description').notNull().default(''),
  /** The trigger kind: always `Project` today. */
  triggerKind: text('trigger_kind').notNull().default('Project'),
  constraints: jsonb('constraints')
    .$type<QuotaConstraint[]>()
    .notNull()
    .default(sql`'[]'::jsonb`),
  grantNameTemplate: text('grant_name_template').notNull(),
  allowances: jsonb('allowances').$type<QuotaAmount[]>().notNull(),
  enabled: boolean('enabled').notNull().default(true),
  ready: boolean('ready').notNull().default(false),
  readyReason: text('ready_reason').notNull().default('Pending'),
  readyMessage: text('ready_message').notNull().default(''),
  /** Bumped on every spec change. */
  generation: integer('generation').notNull().default(1),
  createdBy: text('created_by').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * ClaimCreationPolicy: one per object kind. Creating an object of `triggerKind` renders a claim
 * (name and requests from `{{ CEL }}` templates) and admits it in the object's transaction. A kind
 * without a policy, or whose policy is disabled or whose constraints are false, is not
 * quota-managed. A policy that is not Ready fails creates of its kind (fail closed: a typo must not
 * switch quota off).
 */
export const claimCreationPolicies = pgTable('claim_creation_policies', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull().unique(),
  description: text('description').notNull().default(''),
  triggerKind: text('trigger_kind').notNull().unique(),
  constraints: jsonb('constraints')
    .$type<QuotaConstraint[]>()
    .notNull()
    .default(sql`'[]'::jsonb`),
  claimNameTemplate: text('claim_name_template').notNull(),
  requests: jsonb('requests').$type<QuotaRequestTemplate[]>().notNull(),
  enabled: boolean('enabled').notNull().default(true),
  ready: boolean('ready').notNull().default(false),
  readyReason: text('ready_reason').notNull().default('Pending'),
  readyMessage: text('ready_message').notNull().default(''),
  generation: integer('generation').notNull().default(1),
  createdBy: text('created_by').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * A tenant's request for more of a resource type. An operator approves it (a grant of `amount`,
 * or the operator's `approvedAmount`, is created in the same transaction and linked in `grantId`)
 * or rejects it with a reason.
 */
export const quotaIncreaseRequests = pgTable(
  'quota_increase_requests',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    resourceType: text('resource_type').notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    reason: text('reason').notNull(),
    /** `Pending`, `Approved` or `Rejected`. */
    status: text('status').notNull().default('Pending'),
    requestedBy: text('requested_by').notNull(),
    decidedBy: text('decided_by'),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    decisionReason: text('decision_reason'),
    approvedAmount: bigint('approved_amount', { mode: 'number' }),
    grantId: uuid('grant_id').references(() => resourceGrants.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('quota_increase_requests_status').on(t.status, t.createdAt),
    index('quota_increase_requests_project').on(t.projectId, t.createdAt),
    // One pending request per project and type: a tenant amends by waiting for the decision, not by piling up requests.
    uniqueIndex('quota_increase_requests_one_pending')
      .on(t.projectId, t.resourceType)
      .where(sql`${t.status} = 'Pending'`),
    check('quota_increase_requests_amount', sql`${t.amount} > 0`),
  ],
);
