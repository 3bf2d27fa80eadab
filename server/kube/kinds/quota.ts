import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { DomainError, invalid } from '@/server/errors';
import { listBuckets, listClaimLog } from '@/server/quota/buckets';
import { createGrant, deleteGrant, listGrants, updateGrant } from '@/server/quota/grants';
import { approveIncreaseRequest, createIncreaseRequest, listIncreaseRequests, rejectIncreaseRequest } from '@/server/quota/increases';
import {
  createClaimPolicy,
  createGrantPolicy,
  deleteClaimPolicy,
  deleteGrantPolicy,
  listClaimPolicies,
  listGrantPolicies,
  updateClaimPolicy,
  updateGrantPolicy,
} from '@/server/quota/policies';
import { createRegistration, deleteRegistration, listRegistrations, updateRegistration } from '@/server/quota/registrations';
import {
  bucketResource,
  claimPolicyResource,
  claimResource,
  grantPolicyResource,
  grantResource,
  increaseResource,
  registrationResource,
} from '@/server/quota/resources';
import { allowances, claimPolicyInput, grantPolicyInput, increaseCreateInput, registrationInput } from '@/server/quota/schemas';
import { declareKind, type KindContext, type StoredObject } from '../declare';
import { inRolledBackTransaction } from '../dry-run';

/**
 * The quota kinds of the Kubernetes API (quota.miloapis.com/v1alpha1), over the domain functions
 * REST v1 calls and the resource shapes it answers (server/quota/resources.ts). In a project's
 * control plane: allowance buckets and live resource claims (the system's: read-only), grants
 * (operators write them), quota increase requests (tenants ask). In the platform control plane
 * (operators): resource registrations, grant and claim creation policies, and the increase-request
 * queue of every project. Quota is the project's as a whole: these kinds are cluster-scoped.
 */

const GROUP = 'quota.miloapis.com';
const VERSION = 'v1alpha1';
const base = { group: GROUP, version: VERSION, categories: ['meridian', 'quota'], namespaced: false };

type Resource = { metadata: { name: string; uid?: string; creationTimestamp?: string | Date | null }; spec: object; status: object };

/** A REST resource (its mapping from the domain's view) as a stored object. */
function stored(r: Resource, uid?: string): StoredObject {
  const created = r.metadata.creationTimestamp;
  return {
    uid: uid ?? r.metadata.uid ?? r.metadata.name,
    name: r.metadata.name,
    createdAt: created ? new Date(created) : null,
    spec: { ...r.spec } as Record<string, unknown>,
    status: { ...r.status } as Record<string, unknown>,
  };
}

/** Runs a write, or with `dryRun` runs it whole in a transaction rolled back. */
const write = <T>(ctx: KindContext, dryRun: boolean, fn: (db: DbOrTx) => Promise<T>) => (dryRun ? inRolledBackTransaction(ctx.db, fn) : fn(ctx.db));

/** Every page of an offset-paged domain list. */
async function everyPage<T>(page: (offset: number) => Promise<{ items: T[]; nextOffset: number | null }>): Promise<T[]> {
  const out: T[] = [];
  for (let offset: number | null = 0; offset !== null;) {
    const p: { items: T[]; nextOffset: number | null } = await page(offset);
    out.push(...p.items);
    offset = p.nextOffset;
  }
  return out;
}

const byName = (a: StoredObject, b: StoredObject) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

const conditionOf = (o: { status: Record<string, unknown> }, type: string) =>
  (Array.isArray(o.status.conditions) ? (o.status.conditions as { type: string; status: string }[]) : []).find((c) => c.type === type)?.status ?? '';

const consumerRef = z
  .strictObject({ apiGroup: z.string().optional(), kind: z.string().optional(), name: z.string().optional() })
  .optional()
  .describe('The project the object is for (set by the system)');

const amounts = (o: { spec: Record<string, unknown> }, key: string) =>
  (Array.isArray(o.spec[key]) ? (o.spec[key] as { resourceType: string; amount: unknown }[]) : [])
    .map((a) => `${a.resourceType}=${String(a.amount)}`)
    .join(',');

// ---- AllowanceBucket ----------------------------------------------------------------------------

export const allowanceBucketKind = declareKind({
  ...base,
  kind: 'AllowanceBucket',
  plural: 'allowancebuckets',
  singular: 'allowancebucket',
  shortNames: ['ab'],
  description: "A project's books for one resource type: limit (its active grants), allocated (its live granted claims), available. Kept by the system.",
  spec: z.strictObject({ consumerRef, resourceType: z.string().optional().describe('The resource type counted') }),
  status: z.object({
    limit: z.number().describe('Sum of the active grants'),
    allocated: z.number().describe('Sum of the live granted claims'),
    available: z.number().describe('max(0, limit − allocated)'),
    flag: z.string().describe('Ok, Near (≥ 80 %), Full or Over'),
  }),
  immutable: [{ path: 'spec.resourceType', value: (s) => s.resourceType }],
  printerColumns: [
    { name: 'Type', type: 'string', description: 'The resource type', value: (o) => o.spec.resourceType },
    { name: 'Limit', type: 'number', description: 'Sum of the active grants', value: (o) => o.status.limit },
    { name: 'Allocated', type: 'number', description: 'Sum of the live granted claims', value: (o) => o.status.allocated },
    { name: 'Flag', type: 'string', description: 'Ok, Near, Full or Over', value: (o) => o.status.flag },
  ],
  fieldSelectors: { 'spec.resourceType': (o) => String(o.spec.resourceType), 'status.flag': (o) => String(o.status.flag) },
  storage: {
    get: async (ctx, name) => (await everyBucket(ctx)).find((b) => b.name === name),
    list: (ctx) => everyBucket(ctx),
  },
});

/** A bucket's uid: its row has no id of its own (its key is the project and the type), so a name-based UUID of that key. */
const bucketUid = (projectId: string, resourceType: string) => {
  const h = createHash('sha1').update(`allowancebucket:${projectId}:${resourceType}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

async function everyBucket({ db, projectId }: KindContext) {
  return (await listBuckets(db, projectId)).map((b) => stored(bucketResource(b), bucketUid(projectId, b.resourceType))).sort(byName);
}

// ---- ResourceClaim ------------------------------------------------------------------------------

/** The live granted claims of the project (the claim log's history stays REST v1's and the console's). */
async function liveClaims({ db, projectId, projectSlug }: KindContext) {
  return (await everyPage((offset) => listClaimLog(db, projectId, { status: 'Granted', limit: 500, offset })))
    .map((c) => stored(claimResource(c, projectSlug ?? '')))
    .sort(byName);
}

export const resourceClaimKind = declareKind({
  ...base,
  kind: 'ResourceClaim',
  plural: 'resourceclaims',
  singular: 'resourceclaim',
  shortNames: ['rc'],
  description: "A live quota claim: what an object (an IP claim, a machine…) holds of the project's allowance, granted at its creation and released with it.",
  spec: z.strictObject({
    consumerRef,
    requests: z
      .array(z.object({ resourceType: z.string(), amount: z.number() }))
      .optional()
      .describe('What the object holds'),
    resourceRef: z.object({ kind: z.string(), name: z.string(), uid: z.string().nullable() }).optional().describe('The object that holds it'),
  }),
  status: z.object({ phase: z.string().describe('Granted'), allocations: z.array(z.record(z.string(), z.unknown())) }),
  immutable: [
    { path: 'spec.requests', value: (s) => s.requests },
    { path: 'spec.resourceRef', value: (s) => s.resourceRef },
  ],
  printerColumns: [
    { name: 'Kind', type: 'string', description: 'The kind of the object', value: (o) => (o.spec.resourceRef as { kind?: string } | undefined)?.kind },
    { name: 'Object', type: 'string', description: 'The object', value: (o) => (o.spec.resourceRef as { name?: string } | undefined)?.name },
    { name: 'Requests', type: 'string', description: 'What it holds', value: (o) => amounts(o, 'requests') },
    { name: 'Phase', type: 'string', description: 'Granted', value: (o) => o.status.phase },
  ],
  fieldSelectors: { 'spec.resourceRef.kind': (o) => (o.spec.resourceRef as { kind?: string } | undefined)?.kind },
  storage: {
    get: async (ctx, name) => (await liveClaims(ctx)).find((c) => c.name === name),
    list: (ctx) => liveClaims(ctx),
  },
});

// ---- ResourceGrant ------------------------------------------------------------------------------

async function everyGrant({ db, projectId }: KindContext) {
  return (await everyPage((offset) => listGrants(db, { projectId, limit: 200, offset }))).map((g) => stored(grantResource(g))).sort(byName);
}

/** A grant's consumerRef must name its project, when given. */
function checkConsumer(ctx: KindContext, spec: { consumerRef?: { name?: string } }) {
  const named = spec.consumerRef?.name;
  if (named !== undefined && named !== ctx.projectSlug) throw invalid('consumerRef.name', `must name this project (${ctx.projectSlug})`);
}

export const resourceGrantKind = declareKind({
  ...base,
  kind: 'ResourceGrant',
  plural: 'resourcegrants',
  singular: 'resourcegrant',
  shortNames: ['rg'],
  description: "An allowance given to the project: the sum of its active grants is each bucket's limit. Written by operators (or by grant creation policies).",
  spec: z.strictObject({ consumerRef, allowances: allowances.describe('Amounts per resource type') }),
  status: z.object({ conditions: z.array(z.record(z.string(), z.unknown())), source: z.string(), sourceRef: z.string().nullable() }),
  immutable: [{ path: 'spec.consumerRef.name', value: (s) => (s.consumerRef as { name?: string } | undefined)?.name }],
  printerColumns: [
    { name: 'Allowances', type: 'string', description: 'Amounts per resource type', value: (o) => amounts(o, 'allowances') },
    { name: 'Active', type: 'string', description: 'Whether every type it allows is registered', value: (o) => conditionOf(o, 'Active') },
    { name: 'Source', type: 'string', description: 'Operator, Policy or IncreaseRequest', value: (o) => o.status.source, priority: 1 },
  ],
  fieldSelectors: { 'status.source': (o) => String(o.status.source) },
  writeRole: 'operator',
  storage: {
    get: async (ctx, name) => (await everyGrant(ctx)).find((g) => g.name === name),
    list: (ctx) => everyGrant(ctx),
    async create(ctx, { name, spec }, { dryRun }) {
      checkConsumer(ctx, spec);
      const input = { projectId: ctx.projectId, name, allowances: spec.allowances, source: 'Operator' as const };
      return stored(grantResource((await write(ctx, dryRun, (db) => createGrant(db, input, ctx.actor))).grant));
    },
    async update(ctx, current, next, { dryRun }) {
      if (JSON.stringify(next.allowances) === JSON.stringify(current.spec.allowances)) return { changed: false };
      await write(ctx, dryRun, (db) => updateGrant(db, ctx.projectId, current.name, next.allowances, ctx.actor));
      return { changed: true };
    },
    async delete(ctx, name, { dryRun }) {
      await write(ctx, dryRun, (db) => deleteGrant(db, ctx.projectId, name, ctx.actor));
    },
  },
});

// ---- QuotaIncreaseRequest -----------------------------------------------------------------------

const increaseSpec = z.strictObject({
  consumerRef,
  resourceType: increaseCreateInput.shape.resourceType.describe('The registered resource type asked for. Immutable.'),
  amount: increaseCreateInput.shape.amount.describe('How much more. Immutable.'),
  reason: increaseCreateInput.shape.reason.describe('Why (the operator reads it). Immutable.'),
});

const increaseStatus = z.object({
  phase: z.string().describe('Pending, Approved (a grant was made) or Rejected'),
  decidedBy: z.string().nullable(),
  decisionReason: z.string().nullable(),
  approvedAmount: z.number().nullable(),
});

const increaseColumns = [
  { name: 'Type', type: 'string' as const, description: 'The resource type', value: (o: { spec: Record<string, unknown> }) => o.spec.resourceType },
  { name: 'Amount', type: 'number' as const, description: 'How much more', value: (o: { spec: Record<string, unknown> }) => o.spec.amount },
  { name: 'Phase', type: 'string' as const, description: 'Pending, Approved or Rejected', value: (o: { status: Record<string, unknown> }) => o.status.phase },
];

const increaseImmutable = (['resourceType', 'amount', 'reason'] as const).map((f) => ({ path: `spec.${f}`, value: (s: Record<string, unknown>) => s[f] }));

async function everyIncrease(db: DbOrTx, projectId?: string) {
  return (await everyPage((offset) => listIncreaseRequests(db, { projectId, limit: 200, offset }))).map((r) => stored(increaseResource(r))).sort(byName);
}

export const quotaIncreaseRequestKind = declareKind({
  ...base,
  kind: 'QuotaIncreaseRequest',
  plural: 'quotaincreaserequests',
  singular: 'quotaincreaserequest',
  shortNames: ['qir'],
  description: 'A request for more of a registered resource type (one pending per type); an operator approves it (a grant is made) or rejects it.',
  spec: increaseSpec,
  status: increaseStatus,
  immutable: increaseImmutable,
  printerColumns: increaseColumns,
  fieldSelectors: { 'status.phase': (o) => String(o.status.phase), 'spec.resourceType': (o) => String(o.spec.resourceType) },
  generatedName: true,
  storage: {
    get: async ({ db, projectId }, name) => (await everyIncrease(db, projectId)).find((r) => r.name === name),
    list: ({ db, projectId }) => everyIncrease(db, projectId),
    async create(ctx, { spec }, { dryRun }) {
      const input = { resourceType: spec.resourceType, amount: spec.amount, reason: spec.reason };
      return stored(increaseResource(await write(ctx, dryRun, (db) => createIncreaseRequest(db, ctx.projectId, input, ctx.actor))));
    },
  },
});

// ---- Platform: the increase-request queue of every project ---------------------------------------

export const platformQuotaIncreaseRequestKind = declareKind({
  ...base,
  plane: 'platform',
  kind: 'QuotaIncreaseRequest',
  plural: 'quotaincreaserequests',
  singular: 'quotaincreaserequest',
  shortNames: ['qir'],
  description: "Every project's quota increase requests (spec.consumerRef names the project): the operators' queue.",
  spec: increaseSpec,
  status: increaseStatus,
  immutable: increaseImmutable,
  printerColumns: [
    { name: 'Project', type: 'string', description: 'The project asking', value: (o) => (o.spec.consumerRef as { name?: string } | undefined)?.name },
    ...increaseColumns,
  ],
  fieldSelectors: {
    'status.phase': (o) => String(o.status.phase),
    'spec.consumerRef.name': (o) => (o.spec.consumerRef as { name?: string } | undefined)?.name,
  },
  readRole: 'operator',
  writeRole: 'operator',
  // The decision is written to status (`kubectl patch qir X --subresource=status`): its errors name status fields.
  fieldPath: (f) => (f === 'name' ? 'metadata.name' : f.startsWith('status.') ? f : `spec.${f}`),
  storage: {
    get: async ({ db }, name) => (await everyIncrease(db)).find((r) => r.name === name),
    list: ({ db }) => everyIncrease(db),
    updateStatus: (ctx, current, next, { dryRun }) => decideIncrease(ctx, current, next, dryRun),
  },
});

const decision = z.object({
  phase: z.enum(['Pending', 'Approved', 'Rejected']),
  decisionReason: z.string().nullish(),
  approvedAmount: z.number().int().positive().nullish(),
});

/**
 * An operator's decision on a request, written as its status: `phase: Approved` (with
 * `approvedAmount` to grant less or more than asked, and an optional `decisionReason`) makes the
 * grant as the console's Approve does; `phase: Rejected` needs a `decisionReason`. A status equal
 * to the current one is no change; deciding a decided request is a 409, as in REST v1.
 */
async function decideIncrease(ctx: KindContext, current: StoredObject, next: Record<string, unknown>, dryRun: boolean) {
  const parsed = decision.safeParse(next);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DomainError('ValidationFailed', issue.message, `status.${issue.path.join('.')}`);
  }
  const { phase, decisionReason, approvedAmount } = parsed.data;
  if (phase === current.status.phase && (phase === 'Pending' || (decisionReason ?? null) === (current.status.decisionReason ?? null))) {
    return { changed: false };
  }
  if (phase === 'Pending')
    throw new DomainError('Conflict', `quota increase request ${current.name} is already ${String(current.status.phase)}`, 'status.phase');
  if (phase === 'Rejected' && !decisionReason?.trim()) throw invalid('status.decisionReason', 'say why the request is rejected');
  const run = (db: DbOrTx) =>
    phase === 'Approved'
      ? approveIncreaseRequest(db, { id: current.uid, amount: approvedAmount ?? undefined, reason: decisionReason ?? undefined }, ctx.actor)
      : rejectIncreaseRequest(db, { id: current.uid, reason: decisionReason ?? '' }, ctx.actor);
  await write(ctx, dryRun, run);
  return { changed: true };
}

// ---- Platform: ResourceRegistration --------------------------------------------------------------

/** A registration's name: its resource type with the `/` a Kubernetes name cannot hold as `.` (`ipam.miloapis.com.ipclaims`). */
export const registrationName = (resourceType: string) => resourceType.replace('/', '.');

async function everyRegistration({ db }: KindContext) {
  return (await listRegistrations(db)).map((r) => {
    const o = stored(registrationResource(r));
    return { ...o, name: registrationName(r.resourceType) };
  });
}

const registrationSpec = registrationInput.extend({
  resourceType: registrationInput.shape.resourceType.describe('`<group>/<resource>`; the name is it with `.` for `/`. Immutable.'),
});

export const resourceRegistrationKind = declareKind({
  ...base,
  plane: 'platform',
  kind: 'ResourceRegistration',
  plural: 'resourceregistrations',
  singular: 'resourceregistration',
  shortNames: ['rr'],
  description: 'A resource type quota counts (`<group>/<resource>`), with its units and the kinds that claim it. Named by its type, `/` written `.`.',
  spec: registrationSpec,
  status: z.object({ conditions: z.array(z.record(z.string(), z.unknown())) }),
  immutable: [
    { path: 'spec.resourceType', value: (s) => s.resourceType },
    { path: 'spec.consumerKind', value: (s) => s.consumerKind },
  ],
  printerColumns: [
    { name: 'Type', type: 'string', description: 'The resource type', value: (o) => o.spec.resourceType },
    { name: 'Unit', type: 'string', description: 'Its base unit', value: (o) => o.spec.baseUnit ?? '' },
    { name: 'Active', type: 'string', description: 'Whether it is in force', value: (o) => conditionOf(o, 'Active') },
  ],
  fieldSelectors: {},
  readRole: 'operator',
  writeRole: 'operator',
  storage: {
    get: async (ctx, name) => (await everyRegistration(ctx)).find((r) => r.name === name),
    list: (ctx) => everyRegistration(ctx),
    async create(ctx, { name, spec }, { dryRun }) {
      if (name !== registrationName(spec.resourceType)) throw invalid('name', `must be "${registrationName(spec.resourceType)}" (spec.resourceType)`);
      const created = await write(ctx, dryRun, (db) => createRegistration(db, spec, ctx.actor));
      return { ...stored(registrationResource(created)), name };
    },
    async update(ctx, current, next, { dryRun }) {
      const { resourceType: _type, consumerKind: _kind, ...changes } = next;
      const { resourceType: _t, consumerKind: _k, ...was } = current.spec;
      if (JSON.stringify(sortKeys(changes)) === JSON.stringify(sortKeys(was))) return { changed: false };
      await write(ctx, dryRun, (db) => updateRegistration(db, String(current.spec.resourceType), changes, ctx.actor));
      return { changed: true };
    },
    async delete(ctx, name, { dryRun }) {
      const current = (await everyRegistration(ctx)).find((r) => r.name === name);
      if (!current) throw new DomainError('NotFound', `resourceregistration "${name}" not found`, 'name');
      await write(ctx, dryRun, (db) => deleteRegistration(db, String(current.spec.resourceType), ctx.actor));
    },
  },
});

const sortKeys = (o: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(o)
      .filter(([, v]) => v !== undefined && v !== null)
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );

// ---- Platform: grant and claim creation policies -------------------------------------------------

const grantPolicySpec = grantPolicyInput
  .omit({ name: true })
  .extend({ triggerKind: z.literal('Project').optional().describe('Project: applied when a project is created') });
const claimPolicySpec = claimPolicyInput.omit({ name: true });
const policyStatus = z.object({ conditions: z.array(z.record(z.string(), z.unknown())), observedGeneration: z.number() });
const policyColumns = (what: string) => [
  {
    name: 'Trigger',
    type: 'string' as const,
    description: 'The kind whose creation applies it',
    value: (o: { spec: Record<string, unknown> }) => o.spec.triggerKind,
  },
  { name: 'Enabled', type: 'boolean' as const, description: `Whether it ${what}`, value: (o: { spec: Record<string, unknown> }) => o.spec.enabled },
  {
    name: 'Ready',
    type: 'string' as const,
    description: 'Whether its CEL compiles',
    value: (o: { status: Record<string, unknown> }) => conditionOf(o, 'Ready'),
  },
];

/** A policy's spec as the domain's input parses it (defaults filled), compared to decide whether an update changes anything. */
const sameSpec = (schema: z.ZodType, a: Record<string, unknown>, b: Record<string, unknown>) => {
  const pa = schema.safeParse(a);
  const pb = schema.safeParse(b);
  return pa.success && pb.success && JSON.stringify(pa.data) === JSON.stringify(pb.data);
};

export const grantCreationPolicyKind = declareKind({
  ...base,
  plane: 'platform',
  kind: 'GrantCreationPolicy',
  plural: 'grantcreationpolicies',
  singular: 'grantcreationpolicy',
  shortNames: ['gcp'],
  description: 'When a project is created, each enabled, Ready policy whose constraints hold makes a grant from its templates ({{ CEL }}).',
  spec: grantPolicySpec,
  status: policyStatus,
  immutable: [],
  printerColumns: policyColumns('makes grants'),
  fieldSelectors: {},
  readRole: 'operator',
  writeRole: 'operator',
  storage: {
    get: async ({ db }, name) => (await listGrantPolicies(db)).map((p) => stored(grantPolicyResource(p))).find((p) => p.name === name),
    list: async ({ db }) => (await listGrantPolicies(db)).map((p) => stored(grantPolicyResource(p))),
    async create(ctx, { name, spec }, { dryRun }) {
      return stored(grantPolicyResource((await write(ctx, dryRun, (db) => createGrantPolicy(db, { ...spec, name }, ctx.actor)))!));
    },
    async update(ctx, current, next, { dryRun }) {
      if (sameSpec(grantPolicySpec, current.spec, next)) return { changed: false };
      await write(ctx, dryRun, (db) => updateGrantPolicy(db, current.name, next, ctx.actor));
      return { changed: true };
    },
    async delete(ctx, name, { dryRun }) {
      await write(ctx, dryRun, (db) => deleteGrantPolicy(db, name, ctx.actor));
    },
  },
});

export const claimCreationPolicyKind = declareKind({
  ...base,
  plane: 'platform',
  kind: 'ClaimCreationPolicy',
  plural: 'claimcreationpolicies',
  singular: 'claimcreationpolicy',
  shortNames: ['ccp'],
  description: 'What a creation of its trigger kind claims of quota (one policy per kind); a policy not Ready fails creates of its kind.',
  spec: claimPolicySpec,
  status: policyStatus,
  immutable: [{ path: 'spec.triggerKind', value: (s) => s.triggerKind }],
  printerColumns: policyColumns('claims quota'),
  fieldSelectors: { 'spec.triggerKind': (o) => String(o.spec.triggerKind) },
  readRole: 'operator',
  writeRole: 'operator',
  storage: {
    get: async ({ db }, name) => (await listClaimPolicies(db)).map((p) => stored(claimPolicyResource(p))).find((p) => p.name === name),
    list: async ({ db }) => (await listClaimPolicies(db)).map((p) => stored(claimPolicyResource(p))),
    async create(ctx, { name, spec }, { dryRun }) {
      return stored(claimPolicyResource((await write(ctx, dryRun, (db) => createClaimPolicy(db, { ...spec, name }, ctx.actor)))!));
    },
    async update(ctx, current, next, { dryRun }) {
      if (sameSpec(claimPolicySpec, current.spec, next)) return { changed: false };
      await write(ctx, dryRun, (db) => updateClaimPolicy(db, current.name, next, ctx.actor));
      return { changed: true };
    },
    async delete(ctx, name, { dryRun }) {
      await write(ctx, dryRun, (db) => deleteClaimPolicy(db, name, ctx.actor));
    },
  },
});
