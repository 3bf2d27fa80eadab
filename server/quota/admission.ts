import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, DbOrTx } from '@/db/client';
import { query } from '@/db/query';
import { resourceClaims, type QuotaAllocationStatus, type QuotaAmount } from '@/db/schema';
import type { Actor } from '@/server/audit/events';
import { DomainError } from '@/server/errors';
import { log } from '@/server/observability/log';
import { metrics } from '@/server/observability/metrics';
import { policyRow, quotaAdmitResult, type PolicyRow, type QuotaAdmitResult } from './rows';
import { CelEvalError, evaluateConstraint, prepareBindings, renderTemplate, renderText, type CelBindings } from './cel';
import { userOf } from './grants';

/**
 * Quota admission: the decision for an object is made **inside the object's own transaction**, in
 * two steps so the one contended row — the bucket — is locked only for the last moment:
 *
 *   prepareAdmission(tx, …)   early, takes no lock
 *     one query: the kind's ClaimCreationPolicy + the registrations of the types it requests;
 *     CEL: constraints (false → not quota-managed), claim name, amounts; validation
 *     (ValidationFailed → denied before any work is done)
 *   decideAdmission(tx, …)    the object's last write before COMMIT: one call of the SQL function
 *     quota_admit (server/quota/sql/quota_admit.sql), which per requested type (sorted, so two multi-type claims lock
 *     buckets in one order) runs
 *       update allowance_buckets
 *          set allocated = allocated + $n, claim_count = claim_count + 1
 *        where project_id = $p and resource_type = $t and allocated + $n <= "limit"
 *     and then writes the Granted resource_claims row. A type without room → denied: QuotaExceeded
 *     is thrown, the caller's transaction rolls back, nothing is stored. (IP claims are created in
 *     one statement, ipam_claim_create, which calls quota_admit itself; concurrent IP claim
 *     creates go in batches, ipam_claim_create_many, whose quota_admit_many grows each bucket once
 *     for the whole batch and writes its claims in one insert when the bucket has room for all of
 *     them, and otherwise decides claim by claim.)
 *   release(tx, …)            in the transaction that deletes the object: one statement marks the
 *     live claim released and gives its amounts back.
 *
 * The conditional update takes the bucket's row lock; a concurrent admission waits for it and
 * re-checks `allocated + n <= limit` against the committed row, so `allocated` never passes
 * `limit` and always equals the sum of live granted claims, under any concurrency — without a
 * serializable transaction or a retry loop. Because it is the last statement before COMMIT, the
 * lock is held for one round trip, not for the object's whole transaction.
 *
 * Types without a registration: not quota-managed, admitted without a claim. A registered type
 * for which the project has no bucket (no grant) has limit 0: denied.
 */

export interface AdmissionRequest {
  projectId: string;
  /** The object's kind: selects the ClaimCreationPolicy (`IPClaim`, `Machine`, …). */
  kind: string;
  /** The object's name: both `trigger.metadata.name` and `requestInfo.name` (always equal). */
  name: string;
  /** Its uid when already known (recorded on the claim's resourceRef). */
  uid?: string;
  apiVersion: string;
  /** `requestInfo.resource` and `.group`, e.g. `ipclaims` / `ipam.miloapis.com`. */
  resource: string;
  group: string;
  verb?: string;
  labels?: Record<string, string>;
  spec: Record<string, unknown>;
  actor: Actor;
}

export interface AdmittedClaim {
  id: string;
  name: string;
  requests: QuotaAmount[];
  buckets: { resourceType: string; limit: number; allocated: number; available: number }[];
}

/** The outcome: `managed: false` when no Ready, enabled policy applies or no requested type is registered. */
export type Admission = { managed: false; claim: null } | { managed: true; claim: AdmittedClaim };

/** A claim rendered and validated by `prepareAdmission`, to be decided by `decideAdmission`. */
export type PreparedAdmission = { managed: false } | { managed: true; req: AdmissionRequest; policyName: string; name: string; requests: QuotaAmount[] };

/** A denied claim, kept for the tenant's claim log (see `recordDeniedClaim`). */
export interface DeniedClaimRecord {
  projectId: string;
  name: string;
  requests: QuotaAmount[];
  reason: 'QuotaExceeded' | 'ValidationFailed';
  message: string;
  allocations: QuotaAllocationStatus[];
  refKind: string;
  refName: string;
  refUid: string | null;
  policyName: string;
  createdBy: string;
}

/** A denial: a DomainError with the tRPC/HTTP mapping of its code, carrying the log record. */
export class QuotaDenied extends DomainError {
  constructor(
    code: 'QuotaExceeded' | 'PolicyFailed',
    message: string,
    details: Record<string, unknown>,
    readonly denial: DeniedClaimRecord,
  ) {
    super(code, message, undefined, details);
  }
}

const claimName = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;

function policyFailed(policy: string, at: string, e: unknown): DomainError {
  const message = e instanceof CelEvalError ? `${e.message} (expression: ${e.expression})` : String((e as Error)?.message ?? e);
  return new DomainError('PolicyFailed', `ClaimCreationPolicy "${policy}" failed at ${at}: ${message}`, undefined, { policy, at });
}

function count(outcome: string) {
  metrics().domainCounter.inc({ name: 'quota_admission', outcome });
}

function toAmount(policy: string, index: number, value: unknown): number {
  const n =
    typeof value === 'bigint' ? Number(value) : typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) {
    throw policyFailed(policy, `requests[${index}].amount`, new Error(`rendered ${String(value)}, expected a whole number ≥ 0`));
  }
  return n;
}

/**
 * Decides quota for an object about to be created, inside its transaction `tx`: `prepareAdmission`
 * then `decideAdmission` back to back. Objects with more work in their transaction should call the
 * two apart — prepare early, decide as the last write — to hold the bucket lock briefly.
 */
export async function admit(tx: DbOrTx, req: AdmissionRequest): Promise<Admission> {
  return decideAdmission(tx, await prepareAdmission(tx, req));
}

/**
 * Renders and validates the claim for an object about to be created (see the module comment); takes
 * no lock. Throws `PolicyFailed` when the kind's policy is not Ready or its CEL fails at run time
 * (never a silent allow), and `QuotaDenied` (`PolicyFailed`, reason ValidationFailed) when the
 * registration does not let this kind claim the type.
 */
export async function prepareAdmission(tx: DbOrTx, req: AdmissionRequest): Promise<PreparedAdmission> {
  const [{ policy }] = await query(tx, sql`select ${admissionPolicyQuery(req.projectId, req.kind)} as policy`, z.object({ policy: policyRow.nullable() }));
  return prepareAdmissionWith(policy, req);
}

/**
 * The kind's ClaimCreationPolicy with what `prepareAdmissionWith` needs (the project's slug, the
 * registrations of the requested types) as one JSON value, or null: a scalar subquery, so a
 * create path can read it in the same query as its own context.
 */
export function admissionPolicyQuery(projectId: string, kind: string) {
  return sql`(select row_to_json(x) from (
      select p.name, p.enabled, p.ready, p.ready_reason as "readyReason", p.ready_message as "readyMessage", p.constraints,
             p.claim_name_template as "claimNameTemplate", p.requests,
             (select slug from projects where id = ${projectId}) as namespace,
             coalesce((select json_agg(json_build_object('resourceType', r.resource_type, 'active', r.active, 'claimingKinds', r.claiming_kinds))
                       from resource_registrations r
                       where r.resource_type in (select e->>'resourceType' from jsonb_array_elements(p.requests) e)), '[]'::json) as registrations
      from claim_creation_policies p where p.trigger_kind = ${kind}) x)`;
}

/** `prepareAdmission` on a policy already read with `admissionPolicyQuery` (no database access). */
export function prepareAdmissionWith(policy: PolicyRow | null, req: AdmissionRequest): PreparedAdmission {
  if (!policy || !policy.enabled) return { managed: false };
  if (!policy.ready) {
    count('policy_failed');
    throw new DomainError(
      'PolicyFailed',
      `ClaimCreationPolicy "${policy.name}" for ${req.kind} is not Ready (${policy.readyReason}: ${policy.readyMessage}); creates of this kind are refused until an operator fixes it`,
      undefined,
      { policy: policy.name, reason: policy.readyReason },
    );
  }

  const bindings: CelBindings = {
    trigger: {
      apiVersion: req.apiVersion,
      kind: req.kind,
      metadata: { name: req.name, namespace: policy.namespace, uid: req.uid ?? '', labels: req.labels ?? {} },
      spec: req.spec,
    },
    requestInfo: { name: req.name, namespace: policy.namespace, verb: req.verb ?? 'create', resource: req.resource, group: req.group },
    user: userOf(req.actor),
  };
  const prepared = prepareBindings(bindings);
  for (const [i, c] of policy.constraints.entries()) {
    let holds: boolean;
    try {
      holds = evaluateConstraint(c.expression, prepared);
    } catch (e) {
      count('policy_failed');
      throw policyFailed(policy.name, `constraints[${i}]`, e);
    }
    if (!holds) return { managed: false };
  }
  let name: string;
  try {
    name = renderText(policy.claimNameTemplate, prepared);
  } catch (e) {
    count('policy_failed');
    throw policyFailed(policy.name, 'claimNameTemplate', e);
  }
  if (!claimName.test(name)) {
    count('policy_failed');
    throw policyFailed(
      policy.name,
      'claimNameTemplate',
      new Error(`rendered "${name}", not a valid claim name (lower-case letters, digits, "-" and ".", at most 253)`),
    );
  }

  const registrations = new Map(policy.registrations.map((r) => [r.resourceType, r]));
  const requests: QuotaAmount[] = [];
  for (const [i, r] of policy.requests.entries()) {
    if (!registrations.has(r.resourceType)) continue; // not quota-managed
    let amount: number;
    try {
      amount = typeof r.amount === 'number' ? r.amount : toAmount(policy.name, i, renderTemplate(r.amount, prepared));
    } catch (e) {
      count('policy_failed');
      throw e instanceof DomainError ? e : policyFailed(policy.name, `requests[${i}].amount`, e);
    }
    requests.push({ resourceType: r.resourceType, amount });
  }
  if (requests.length === 0) return { managed: false };
  requests.sort((a, b) => (a.resourceType < b.resourceType ? -1 : a.resourceType > b.resourceType ? 1 : 0));

  const denial = (reason: DeniedClaimRecord['reason'], message: string, allocations: QuotaAllocationStatus[]) =>
    denialRecord(req, policy.name, name, requests, reason, message, allocations);

  // Validation: the registration must be Active and allow this kind to claim it.
  const invalid = requests
    .map((r) => ({ r, reg: registrations.get(r.resourceType)! }))
    .filter(({ reg }) => !reg.active || !reg.claimingKinds.includes(req.kind));
  if (invalid.length) {
    const allocations: QuotaAllocationStatus[] = requests.map((r) => {
      const bad = invalid.find((x) => x.r === r);
      return bad
        ? {
            ...r,
            status: 'Denied',
            reason: 'ValidationFailed',
            message: bad.reg.active
              ? `${req.kind} may not claim ${r.resourceType} (allowed: ${bad.reg.claimingKinds.join(', ')})`
              : `registration of ${r.resourceType} is not Active`,
          }
        : { ...r, status: 'Denied', reason: 'QuotaAvailable', message: 'not evaluated: another request of this claim failed validation' };
    });
    const message = allocations
      .filter((a) => a.reason === 'ValidationFailed')
      .map((a) => a.message)
      .join('; ');
    count('denied_validation');
    throw new QuotaDenied(
      'PolicyFailed',
      `quota claim "${name}" failed validation: ${message}`,
      { claim: name, reason: 'ValidationFailed' },
      denial('ValidationFailed', message, allocations),
    );
  }

  return { managed: true, req, policyName: policy.name, name, requests };
}

function denialRecord(
  req: AdmissionRequest,
  policyName: string,
  name: string,
  requests: QuotaAmount[],
  reason: DeniedClaimRecord['reason'],
  message: string,
  allocations: QuotaAllocationStatus[],
): DeniedClaimRecord {
  return {
    projectId: req.projectId,
    name,
    requests,
    reason,
    message,
    allocations,
    refKind: req.kind,
    refName: req.name,
    refUid: req.uid ?? null,
    policyName,
    createdBy: req.actor.label,
  };
}

const nameTaken = (policy: string, name: string) =>
  policyFailed(
    policy,
    'claimNameTemplate',
    new Error(`rendered "${name}", which another live claim in this project already holds; the template must be unique per object`),
  );

/**
 * Decides a prepared claim against the buckets and stores it (see the module comment). Call it as
 * the object's last write before COMMIT; `object.uid` goes into the claim's resourceRef. Granted: the claim row is written and the buckets grown,
 * committed or rolled back with the object. Denied: throws `QuotaDenied` (`QuotaExceeded`, 403,
 * "requested X, available Y, limit Z"); the caller rolls back and then passes the error to
 * `recordDeniedClaim`.
 */
export async function decideAdmission(tx: DbOrTx, prepared: PreparedAdmission, object: { uid?: string } = {}): Promise<Admission> {
  if (!prepared.managed) return { managed: false, claim: null };
  const { name, requests, policyName } = prepared;
  // The object's uid is known by now when it was inserted earlier in this transaction.
  const req = object.uid ? { ...prepared.req, uid: object.uid } : prepared.req;
  const [{ result }] = await query(
    tx,
    sql`select quota_admit(${req.projectId}, ${name}, ${JSON.stringify(requests)}::jsonb, ${req.kind}, ${req.name}, ${req.uid ?? null},
                           ${policyName}, ${req.actor.label}) as result`,
    z.object({ result: quotaAdmitResult }),
  );
  return admissionOutcome(tx, { ...prepared, req }, result);
}

/**
 * The quota arguments of a create done in one SQL statement (`ipam_claim_create` calls
 * `quota_admit` itself, as its last write): null when the object is not quota-managed.
 */
export function admissionArguments(prepared: PreparedAdmission) {
  if (!prepared.managed) return null;
  return { name: prepared.name, requests: prepared.requests, policy: prepared.policyName };
}

/**
 * Turns `quota_admit`'s result into the admission, or throws: `QuotaDenied` (QuotaExceeded, with the
 * books read for "requested X, available Y, limit Z") or PolicyFailed when the rendered name is held
 * by another object's live claim. The caller's transaction (or statement) must be rolled back on a throw.
 */
export async function admissionOutcome(db: DbOrTx, prepared: PreparedAdmission & { managed: true }, result: QuotaAdmitResult): Promise<Admission> {
  const { req, name, requests, policyName } = prepared;
  if (result.kind === 'granted') {
    count('granted');
    const buckets = result.buckets.map((b) => {
      const limit = Number(b.limit);
      const allocated = Number(b.allocated);
      return { resourceType: b.resourceType, limit, allocated, available: Math.max(0, limit - allocated) };
    });
    return { managed: true, claim: { id: result.id, name, requests, buckets } };
  }
  if (result.kind === 'nameTaken') {
    count('policy_failed');
    throw nameTaken(policyName, name);
  }
  const denial = (reason: DeniedClaimRecord['reason'], message: string, allocations: QuotaAllocationStatus[]) =>
    denialRecord(req, policyName, name, requests, reason, message, allocations);
  return deny(db, req, name, requests, result.index, denial);
}

/** Builds the denial for request `i` (the first whose bucket had no room) and throws it. */
async function deny(
  tx: DbOrTx,
  req: AdmissionRequest,
  name: string,
  requests: QuotaAmount[],
  i: number,
  denial: (reason: DeniedClaimRecord['reason'], message: string, allocations: QuotaAllocationStatus[]) => DeniedClaimRecord,
): Promise<never> {
  const r = requests[i];
  // Read the books for the message (the conditional update found no room).
  const books = await query(
    tx,
    sql`select resource_type as "resourceType", "limit"::float8 as "limit", allocated::float8 as allocated
        from allowance_buckets where project_id = ${req.projectId} and resource_type in ${requests.slice(i).map((x) => x.resourceType)}`,
    z.object({ resourceType: z.string(), limit: z.number(), allocated: z.number() }),
  );
  const state = (t: string) => books.find((b) => b.resourceType === t) ?? { limit: 0, allocated: 0 };
  const { limit, allocated } = state(r.resourceType);
  const available = Math.max(0, limit - allocated);
  const message = `requested ${r.amount} ${r.resourceType}, available ${available}, limit ${limit}`;
  const allocations: QuotaAllocationStatus[] = requests.map((x, j) => {
    if (j < i) return { ...x, status: 'Denied', reason: 'QuotaAvailable', message: 'available, but not allocated: another request of this claim was denied' };
    if (j === i) return { ...x, status: 'Denied', reason: 'QuotaExceeded', message };
    const s = state(x.resourceType);
    const avail = Math.max(0, s.limit - s.allocated);
    return avail >= x.amount
      ? { ...x, status: 'Denied', reason: 'QuotaAvailable', message: 'available, but not allocated: another request of this claim was denied' }
      : { ...x, status: 'Denied', reason: 'QuotaExceeded', message: `requested ${x.amount} ${x.resourceType}, available ${avail}, limit ${s.limit}` };
  });
  count('denied');
  throw new QuotaDenied(
    'QuotaExceeded',
    message,
    { claim: name, resourceType: r.resourceType, requested: r.amount, available, limit, allocated },
    denial(
      'QuotaExceeded',
      allocations
        .filter((a) => a.reason === 'QuotaExceeded')
        .map((a) => a.message)
        .join('; '),
      allocations,
    ),
  );
}

/**
 * Releases the live claim of an object, in the transaction that deletes it: one statement marks
 * the claim released and gives its amounts back to the buckets. Returns false when the object
 * held no claim (not quota-managed when created).
 */
export async function release(tx: DbOrTx, input: { projectId: string; kind: string; name: string }): Promise<boolean> {
  const result = await query(
    tx,
    sql`with released as (
          update resource_claims set released_at = now()
          where project_id = ${input.projectId} and ref_kind = ${input.kind} and ref_name = ${input.name}
            and status = 'Granted' and released_at is null
          returning requests
        ), amounts as (
          select e->>'resourceType' as resource_type, sum((e->>'amount')::bigint) as amount, count(*)::int as claims
          from released cross join jsonb_array_elements(released.requests) e group by 1
        )
        update allowance_buckets b
        set allocated = b.allocated - a.amount, claim_count = b.claim_count - a.claims, updated_at = now()
        from amounts a
        where b.project_id = ${input.projectId} and b.resource_type = a.resource_type
        returning b.resource_type as "resourceType"`,
    z.object({ resourceType: z.string() }),
  );
  if (result.length) count('released');
  return result.length > 0;
}

/**
 * Writes a denied decision to the claim log, after the object's transaction rolled back.
 *
 * Why after, and in its own autocommit statement: the denial changed nothing, so this row cannot
 * disagree with the books whatever happens around it; written inside the object's transaction it
 * would be rolled back with everything else; and holding a second connection open while the
 * object's transaction still holds its locks would let a burst of denials exhaust the pool. The
 * one thing that can go wrong is losing a log line (a crash between rollback and this insert, or
 * the database failing now); that is logged and never changes what the caller is told.
 */
export async function recordDeniedClaim(db: Db, error: unknown): Promise<void> {
  if (!(error instanceof QuotaDenied)) return;
  const d = error.denial;
  try {
    await db.insert(resourceClaims).values({
      projectId: d.projectId,
      name: d.name,
      requests: d.requests,
      status: 'Denied',
      reason: d.reason,
      message: d.message,
      allocations: d.allocations,
      refKind: d.refKind,
      refName: d.refName,
      refUid: d.refUid,
      policyName: d.policyName,
      createdBy: d.createdBy,
    });
  } catch (e) {
    log('warn', 'could not record a denied quota claim', { claim: d.name, error: (e as Error).message });
  }
}

// ---- Adapters for the kinds Meridian admits ---------------------------------------------------

/**
 * Renders and validates an IP claim's quota claim from the IPClaim policy (read by IPAM with
 * `admissionPolicyQuery` in its context query); `ipam_claim_create` decides it as its last write.
 */
export function prepareIpClaimAdmission(
  policy: PolicyRow | null,
  projectId: string,
  claim: { name: string; spec: Record<string, unknown>; labels?: Record<string, string> },
  actor: Actor,
) {
  return prepareAdmissionWith(policy, {
    projectId,
    kind: 'IPClaim',
    name: claim.name,
    apiVersion: 'ipam.miloapis.com/v1alpha1',
    resource: 'ipclaims',
    group: 'ipam.miloapis.com',
    labels: claim.labels,
    spec: claim.spec,
    actor,
  });
}

/** Releases an IP claim's quota in the transaction that deletes it. */
export function releaseIpClaim(tx: DbOrTx, projectId: string, name: string) {
  return release(tx, { projectId, kind: 'IPClaim', name });
}

/**
 * Admits a machine about to be stored, in its transaction (the fleet module's entry point): the
 * `Machine` ClaimCreationPolicy requests `metal.datumapis.com/machines`.
 */
export function admitMachine(
  tx: DbOrTx,
  projectId: string,
  machine: { name: string; uid?: string; spec: Record<string, unknown>; labels?: Record<string, string> },
  actor: Actor,
) {
  return admit(tx, {
    projectId,
    kind: 'Machine',
    name: machine.name,
    uid: machine.uid,
    apiVersion: 'metal.datumapis.com/v1alpha1',
    resource: 'machines',
    group: 'metal.datumapis.com',
    labels: machine.labels,
    spec: machine.spec,
    actor,
  });
}

/** Releases a machine's quota in the transaction that finishes deleting it. */
export function releaseMachine(tx: DbOrTx, projectId: string, name: string) {
  return release(tx, { projectId, kind: 'Machine', name });
}
