import { createHash } from 'node:crypto';
import { and, asc, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { isTransaction, type Db, type DbOrTx } from '@/db/client';
import { query, timestampColumn } from '@/db/query';
import { ipAllocations, ipClaims, ipPools } from '@/db/schema';
import { eventActor, recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, invalid, pgCode, pgError } from '@/server/errors';
import { enqueueJob } from '@/server/jobs/enqueue';
import {
  admissionArguments,
  admissionOutcome,
  admissionPolicyQuery,
  prepareIpClaimAdmission,
  recordDeniedClaim,
  releaseIpClaim,
  type PreparedAdmission,
} from '@/server/quota/admission';
import { policyRow, quotaAdmitResult } from '@/server/quota/rows';
import { describeOverlap, releaseAllocation } from './allocator';
import { createInBatch } from './claim-batch';
import { formatCidr, type Cidr, type Family } from '@/lib/cidr';
import { checkPrefixLength, DEFAULT_NAMESPACE, parseCidrField } from './networks';
import type { ClaimCreateInput, ClaimListInput } from './schemas';

/**
 * A claim's name qualified by its namespace: the name in `default` (where REST v1 and the console
 * work), `<namespace>.<name>` elsewhere (names are DNS labels: no dot, so no clash). What a claim's
 * lock, its quota claim, its audit event and a retained allocation it leaves are keyed by.
 */
export const qualifiedName = (namespace: string, name: string) => (namespace === DEFAULT_NAMESPACE ? name : `${namespace}.${name}`);

export interface ClaimView {
  id: string;
  namespace: string;
  name: string;
  network: string;
  pool: string;
  family: 4 | 6;
  prefixLength: number;
  requestedCidr: string | null;
  reclaimPolicy: 'Delete' | 'Retain';
  retentionSeconds: number;
  ownerRef: unknown;
  labels: Record<string, string>;
  phase: 'Bound';
  allocatedCidr: string;
  allocationId: string;
  createdBy: string;
  createdAt: Date;
}

const claimColumns = {
  id: ipClaims.id,
  namespace: ipClaims.namespace,
  name: ipClaims.name,
  network: sql<string>`(select name from networks n where n.id = ${ipClaims.networkId})`,
  pool: ipPools.name,
  family: ipClaims.family,
  prefixLength: ipClaims.prefixLength,
  requestedCidr: ipClaims.requestedCidr,
  reclaimPolicy: ipClaims.reclaimPolicy,
  retentionSeconds: ipClaims.retentionSeconds,
  ownerRef: ipClaims.ownerRef,
  labels: ipClaims.labels,
  allocatedCidr: ipClaims.allocatedCidr,
  allocationId: ipClaims.allocationId,
  createdBy: ipClaims.createdBy,
  createdAt: ipClaims.createdAt,
  specHash: ipClaims.specHash,
};

type ClaimRow = { [K in keyof typeof claimColumns]: unknown };
function toView(r: ClaimRow): ClaimView {
  return {
    id: r.id as string,
    namespace: r.namespace as string,
    name: r.name as string,
    network: r.network as string,
    pool: r.pool as string,
    family: Number(r.family) as 4 | 6,
    prefixLength: Number(r.prefixLength),
    requestedCidr: (r.requestedCidr as string | null) ?? null,
    reclaimPolicy: r.reclaimPolicy as 'Delete' | 'Retain',
    retentionSeconds: Number(r.retentionSeconds),
    ownerRef: r.ownerRef ?? null,
    labels: (r.labels as Record<string, string>) ?? {},
    phase: 'Bound',
    allocatedCidr: r.allocatedCidr as string,
    allocationId: r.allocationId as string,
    createdBy: r.createdBy as string,
    createdAt: r.createdAt as Date,
  };
}

async function findClaim(db: DbOrTx, projectId: string, name: string, namespace: string) {
  const [row] = await db
    .select(claimColumns)
    .from(ipClaims)
    .innerJoin(ipPools, eq(ipPools.id, ipClaims.poolId))
    .where(and(eq(ipClaims.projectId, projectId), eq(ipClaims.namespace, namespace), eq(ipClaims.name, name)));
  return row;
}

/** A claim by namespace (REST v1 and the console: `default`) and name, or NotFound. */
export async function getClaim(db: DbOrTx, projectId: string, name: string, namespace = DEFAULT_NAMESPACE): Promise<ClaimView> {
  const row = await findClaim(db, projectId, name, namespace);
  if (!row) throw new DomainError('NotFound', `ipclaim "${name}" not found`, 'name');
  return toView(row);
}

interface ResolvedSpec {
  family: Family;
  prefixLength: number | null;
  pinned: Cidr | null;
  spec: Record<string, unknown>;
  hash: string;
}

function normalizeFamily(f: ClaimCreateInput['family']): Family | undefined {
  if (f === undefined) return undefined;
  return f === 4 || f === 'IPv4' ? 4 : 6;
}

/** Validates the claim's shape and fingerprints it (the idempotency comparison). */
function resolveSpec(input: ClaimCreateInput): ResolvedSpec {
  let family = normalizeFamily(input.family);
  let pinned: Cidr | null = null;
  if (input.address) {
    pinned = parseCidrField('address', input.address, { allowBareAddress: true, family });
    family = pinned.family;
    if (input.prefixLength !== undefined && input.prefixLength !== pinned.prefix) {
      throw invalid('prefixLength', `does not match the pinned address ${formatCidr(pinned)}`);
    }
  }
  family ??= 4;
  if (input.prefixLength !== undefined) checkPrefixLength(family, input.prefixLength);
  const spec = {
    network: input.network,
    pool: input.pool ?? null,
    family,
    prefixLength: pinned ? pinned.prefix : (input.prefixLength ?? null),
    address: pinned ? formatCidr(pinned) : null,
    reclaimPolicy: input.reclaimPolicy,
    retentionSeconds: input.retentionSeconds ?? null,
    ownerRef: input.ownerRef ?? null,
    labels: input.labels ?? {},
  };
  const hash = createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 32);
  return { family, prefixLength: pinned ? pinned.prefix : (input.prefixLength ?? null), pinned, spec, hash };
}

const claimContextRow = z.object({
  policy: policyRow.nullable(),
  existing: z.object({ specHash: z.string(), allocatedCidr: z.string() }).nullable(),
  retained: z.object({ id: z.string(), cidr: z.string(), until: z.string().nullable() }).nullable(),
  networkId: z.string().nullable(),
  pools: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      family: z.number(),
      min: z.number(),
      max: z.number(),
      def: z.number(),
      kind: z.string(),
      isDefault: z.boolean(),
    }),
  ),
});
type ClaimContext = z.infer<typeof claimContextRow>;
type CandidatePool = ClaimContext['pools'][number];

/**
 * Everything a create needs to know before it writes, in one query: a claim already holding the
 * name, a retained allocation holding it, the network, and the pools the claim may come from — and
 * the IPClaim quota policy. The pools: the named one; else, for a pinned address, every pool that
 * holds it (deepest first: the address is carved where it lies); else the child pools marked as
 * the network's default, then the root pools. A child pool carved for a purpose is never used by a
 * claim that does not name it.
 */
async function claimContext(db: DbOrTx, projectId: string, namespace: string, input: ClaimCreateInput, spec: ResolvedSpec): Promise<ClaimContext> {
  const [row] = await query(
    db,
    sql`
    with net as (select id from networks where project_id = ${projectId} and namespace = ${namespace} and name = ${input.network})
    select
      ${admissionPolicyQuery(projectId, 'IPClaim')} as policy,
      (select json_build_object('specHash', c.spec_hash, 'allocatedCidr', c.allocated_cidr::text)
         from ip_claims c where c.project_id = ${projectId} and c.namespace = ${namespace} and c.name = ${input.name}) as existing,
      (select json_build_object('id', a.id, 'cidr', a.cidr::text, 'until', a.retained_until)
         from ip_allocations a where a.project_id = ${projectId} and a.retained_name = ${qualifiedName(namespace, input.name)} limit 1) as retained,
      (select id from net) as "networkId",
      coalesce((select json_agg(json_build_object('id', p.id, 'name', p.name, 'family', p.family, 'min', p.min_prefix_length,
                                                  'max', p.max_prefix_length, 'def', p.default_prefix_length,
                                                  'kind', p.kind, 'isDefault', p.is_default)
                                order by p.is_default desc, masklen(p.cidr) desc, p.cidr)
         from ip_pools p
         where p.network_id = (select id from net) and p.family = ${spec.family} and p.kind <> 'NodeBlock'
           ${input.pool ? sql`and p.name = ${input.pool}` : spec.pinned ? sql`` : sql`and (p.parent_pool_id is null or p.is_default)`}
           ${spec.pinned ? sql`and p.cidr >>= ${formatCidr(spec.pinned)}::cidr` : sql``}), '[]'::json) as pools`,
    claimContextRow,
  );
  return row;
}

/** Why no pool could take the claim: the pool named does not exist, has another family, or none offers it. */
async function noCandidatePool(db: DbOrTx, networkId: string, input: ClaimCreateInput, spec: ResolvedSpec): Promise<never> {
  if (input.pool) {
    const [exists] = await db
      .select({ family: ipPools.family })
      .from(ipPools)
      .where(and(eq(ipPools.networkId, networkId), eq(ipPools.name, input.pool)));
    if (!exists) throw new DomainError('NotFound', `pool "${input.pool}" not found in network "${input.network}"`, 'pool');
    if (spec.pinned) throw new DomainError('Overlap', `${formatCidr(spec.pinned)} is outside pool "${input.pool}"`, 'address');
    throw invalid('family', `pool "${input.pool}" is IPv${exists.family}, the claim asks for IPv${spec.family}`);
  }
  if (spec.pinned) throw new DomainError('NoOfferingPool', `no pool of network "${input.network}" contains ${formatCidr(spec.pinned)}`, 'address');
  throw new DomainError('NoOfferingPool', `network "${input.network}" has no IPv${spec.family} pool`, 'family');
}

export interface CreateClaimResult {
  claim: ClaimView;
  created: boolean;
  /** Why the claim's pool was chosen, in a sentence (the console's preview shows it). */
  poolReason: string;
}

/** Why a claim landed in `pool`: named, holding the pinned address, the network's default child pool, or a root pool. */
function poolReason(input: ClaimCreateInput, spec: ResolvedSpec, pool: CandidatePool | undefined): string {
  if (input.pool) return `the claim names pool ${input.pool}`;
  if (spec.pinned) return `pool ${pool?.name ?? 'this'} holds ${formatCidr(spec.pinned)}`;
  if (pool?.isDefault) return `child pool ${pool.name} is marked as the default of network ${input.network}`;
  return `no pool is named, so it comes from a root pool of network ${input.network} (a child pool is used only when named or marked as default)`;
}

/**
 * Creates an IP claim and binds it synchronously: returns the claim with its allocated CIDR, or
 * throws a coded error and stores nothing. The name is the idempotency key: the same name and spec
 * returns the existing claim (`created: false`); another spec under the name is `ClaimExists`; a
 * name whose allocation is retained is `AllocationRetained`. With `dryRun`, the whole decision runs
 * and is rolled back: the result shows the block that would be chosen.
 *
 * Two round trips: one query reads the context and the quota policy (rendered in between), then
 * one statement — the SQL function `ipam_claim_create` (server/ipam/sql/) — locks the pool, carves
 * the block, writes the claim, its event and its quota claim, all or nothing. The pool's row lock
 * is held only while that statement runs and commits; creates in flight together share one
 * statement and its commit (claim-batch.ts), each still all or nothing.
 */
export async function createClaim(
  db: DbOrTx,
  projectId: string,
  input: ClaimCreateInput,
  actor: Actor,
  options: { dryRun?: boolean; namespace?: string } = {},
): Promise<CreateClaimResult> {
  const spec = resolveSpec(input);
  for (let attempt = 0; ; attempt++) {
    try {
      return await createClaimOnce(db, projectId, options.namespace ?? DEFAULT_NAMESPACE, input, spec, actor, options.dryRun ?? false);
    } catch (e) {
      // Lost a race for the name: the winner's claim decides (idempotent replay or ClaimExists).
      if (pgCode(e) === '23505' && attempt < 2) continue;
      // A quota denial undid everything; its claim-log row is written now (see recordDeniedClaim).
      if (!options.dryRun) await recordDeniedClaim(db, e);
      throw e;
    }
  }
}

async function createClaimOnce(
  db: DbOrTx,
  projectId: string,
  namespace: string,
  input: ClaimCreateInput,
  spec: ResolvedSpec,
  actor: Actor,
  dryRun: boolean,
): Promise<CreateClaimResult> {
  const { policy, existing, retained, networkId, pools } = await claimContext(db, projectId, namespace, input, spec);
  const key = qualifiedName(namespace, input.name);
  if (existing) {
    if (existing.specHash === spec.hash) {
      const claim = await getClaim(db, projectId, input.name, namespace);
      return { claim, created: false, poolReason: `claim ${input.name} already exists in pool ${claim.pool}` };
    }
    throw new DomainError('ClaimExists', `ipclaim "${input.name}" already exists with a different spec (bound to ${existing.allocatedCidr})`, 'name');
  }
  if (retained) {
    throw new DomainError(
      'AllocationRetained',
      `the name "${input.name}" is held by retained allocation ${retained.id} (${retained.cidr}) until ${retained.until ? new Date(retained.until).toISOString() : 'released'}; release it or choose another name`,
      'name',
      { allocationId: retained.id, cidr: retained.cidr },
    );
  }
  if (!networkId) throw new DomainError('NotFound', `network "${input.network}" not found`, 'network');
  if (pools.length === 0) return noCandidatePool(db, networkId, input, spec);
  // Quota, step 1 (no database access): render and validate the claim from the IPClaim policy.
  const quota = prepareIpClaimAdmission(policy, projectId, { name: key, spec: spec.spec, labels: input.labels }, actor);

  let rejected: string | null = null;
  const candidates: { pool: string; name: string; prefix: number }[] = [];
  for (const pool of pools) {
    const prefix = spec.prefixLength ?? pool.def;
    if (prefix < pool.min || prefix > pool.max) rejected ??= `/${prefix} is outside pool ${pool.name}'s rules (/${pool.min}–/${pool.max})`;
    else candidates.push({ pool: pool.id, name: pool.name, prefix });
  }
  if (candidates.length === 0) throw new DomainError('PrefixLengthRejected', rejected ?? 'no pool accepts this prefix length', 'prefixLength');

  const args = {
    project: projectId,
    network: networkId,
    networkName: input.network,
    namespace,
    name: input.name,
    key,
    family: spec.family,
    pinned: spec.pinned ? formatCidr(spec.pinned) : null,
    candidates,
    reclaimPolicy: input.reclaimPolicy,
    retentionSeconds: input.retentionSeconds ?? 604800,
    ownerRef: input.ownerRef ?? null,
    labels: input.labels ?? {},
    specHash: spec.hash,
    actor: eventActor(actor),
    quota: admissionArguments(quota),
    dryRun,
  };
  let result: ClaimCreated;
  const create = async (q: DbOrTx) => {
    const [row] = await query(q, sql`select ipam_claim_create(${JSON.stringify(args)}::jsonb) as result`, z.object({ result: claimCreated }));
    return row.result;
  };
  try {
    // Inside a caller's transaction (a machine's addresses) the statement runs in a savepoint, so a
    // refusal leaves that transaction usable for reading the books the QuotaExceeded message names.
    // Otherwise a plain create goes with the other creates in flight (claim-batch.ts).
    if (isTransaction(db)) result = await db.transaction(create);
    else if (!spec.pinned && !dryRun) result = claimCreated.parse(await createInBatch(db, args));
    else result = await create(db);
  } catch (e) {
    const { code, detail } = pgError(e) ?? {};
    if (code === 'MD001') result = claimCreated.parse(JSON.parse(detail!));
    else if (code === 'MQ001' || code === 'MQ002') {
      const index = Number(detail ?? 0);
      await admissionOutcome(db, quota as PreparedAdmission & { managed: true }, code === 'MQ002' ? { kind: 'nameTaken' } : { kind: 'exceeded', index });
      throw e;
    } else if ((code === 'MA002' || code === '23P01') && spec.pinned) {
      throw new DomainError('Overlap', await describeOverlap(db, candidates[0].pool, spec.pinned), 'address');
    } else throw e;
  }
  if (result.kind === 'exhausted') {
    throw new DomainError(
      'Exhausted',
      `no free ${spec.pinned ? formatCidr(spec.pinned) : `/${spec.prefixLength ?? pools[0].def}`} in network "${input.network}" (IPv${spec.family})`,
      'prefixLength',
    );
  }
  if (result.quota) await admissionOutcome(db, quota as PreparedAdmission & { managed: true }, result.quota);
  const claim: ClaimView = {
    id: result.id,
    namespace,
    name: input.name,
    network: input.network,
    pool: result.pool,
    family: spec.family,
    prefixLength: result.prefixLength,
    requestedCidr: args.pinned,
    reclaimPolicy: input.reclaimPolicy,
    retentionSeconds: args.retentionSeconds,
    ownerRef: args.ownerRef,
    labels: args.labels,
    phase: 'Bound',
    allocatedCidr: result.allocatedCidr,
    allocationId: result.allocationId,
    createdBy: actor.label,
    createdAt: new Date(result.createdAt),
  };
  return {
    claim,
    created: !dryRun,
    poolReason: poolReason(
      input,
      spec,
      pools.find((p) => p.name === result.pool),
    ),
  };
}

/** What `ipam_claim_create` returns for a bound claim. */
/** What `ipam_claim_create` (server/ipam/sql/ipam_claim_create.sql) answers, by `kind`: the bound claim, or no room in any candidate pool. */
const claimCreated = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('bound'),
    id: z.string(),
    pool: z.string(),
    allocationId: z.string(),
    allocatedCidr: z.string(),
    prefixLength: z.number(),
    createdAt: z.string(),
    quota: quotaAdmitResult.nullable(),
  }),
  z.object({ kind: z.literal('exhausted') }),
]);
type ClaimCreated = z.infer<typeof claimCreated>;

/**
 * Deletes a claim. `Delete` returns the block to the pool now; `Retain` keeps the allocation
 * counted (claim link cleared, name and expiry recorded) and schedules its release at the end of
 * the retention lease — a job with a run time, not a poll.
 */
export async function deleteClaim(db: DbOrTx, projectId: string, name: string, actor: Actor, namespace = DEFAULT_NAMESPACE) {
  const key = qualifiedName(namespace, name);
  return db.transaction(async (tx) => {
    // The claim's name first, as a create takes it (server/ipam/sql/ipam_claim_try.sql), then its pool,
    // then its bucket: a create and a delete of one name never wait on each other crosswise.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`ipclaim:${projectId}:${key}`}, 0))`);
    const [claim] = await tx
      .select({
        id: ipClaims.id,
        poolId: ipClaims.poolId,
        allocationId: ipClaims.allocationId,
        policy: ipClaims.reclaimPolicy,
        retention: ipClaims.retentionSeconds,
        cidr: ipClaims.allocatedCidr,
      })
      .from(ipClaims)
      .where(and(eq(ipClaims.projectId, projectId), eq(ipClaims.namespace, namespace), eq(ipClaims.name, name)))
      .for('update');
    if (!claim) throw new DomainError('NotFound', `ipclaim "${name}" not found`, 'name');
    let retainedUntil: Date | null = null;
    if (claim.policy === 'Retain') {
      retainedUntil = new Date(Date.now() + claim.retention * 1000);
      await tx.update(ipAllocations).set({ claimId: null, retainedName: key, retainedUntil }).where(eq(ipAllocations.id, claim.allocationId));
      await enqueueJob(
        tx,
        'ipallocation__expire',
        { allocationId: claim.allocationId },
        { jobKey: `ipallocation:${claim.allocationId}`, runAt: retainedUntil },
      );
    } else {
      await releaseAllocation(tx, claim.poolId, claim.allocationId);
    }
    await tx.delete(ipClaims).where(eq(ipClaims.id, claim.id));
    await recordEvent(tx, {
      actor,
      projectId,
      action: 'ipclaim.delete',
      objectType: 'ipclaim',
      objectId: claim.id,
      objectName: key,
      before: { allocatedCidr: claim.cidr },
      reason: retainedUntil ? `allocation retained until ${retainedUntil.toISOString()}` : 'allocation released',
    });
    // Quota is given back in this transaction, as its last write (the bucket row is locked until COMMIT).
    await releaseIpClaim(tx, projectId, key);
    return { name, released: claim.policy !== 'Retain', retainedUntil };
  });
}

/**
 * Replaces a claim's labels (the Kubernetes API's `metadata.labels`, which a client may change at
 * any time). The spec fingerprint of the create stays as it was: a REST create replayed with the
 * labels it was created with still finds its claim.
 */
export async function setClaimLabels(db: DbOrTx, projectId: string, name: string, labels: Record<string, string>, actor: Actor, namespace = DEFAULT_NAMESPACE) {
  const [claim] = await db
    .update(ipClaims)
    .set({ labels })
    .where(and(eq(ipClaims.projectId, projectId), eq(ipClaims.namespace, namespace), eq(ipClaims.name, name)))
    .returning({ id: ipClaims.id });
  if (!claim) throw new DomainError('NotFound', `ipclaim "${name}" not found`, 'name');
  await recordEvent(db, {
    actor,
    projectId,
    action: 'ipclaim.relabel',
    objectType: 'ipclaim',
    objectId: claim.id,
    objectName: qualifiedName(namespace, name),
    after: { labels },
  });
}

/**
 * Releases a retained allocation (operator action, or its retention lease expiring). Returns false
 * when it is already gone or no longer retained (idempotent). `onlyIfExpired` is the job's guard.
 */
export async function releaseRetainedAllocation(db: Db, allocationId: string, actor: Actor, options: { onlyIfExpired?: boolean; projectId?: string } = {}) {
  const where = options.projectId
    ? and(eq(ipAllocations.id, allocationId), eq(ipAllocations.projectId, options.projectId))
    : eq(ipAllocations.id, allocationId);
  const released = await releaseRetained(db, where!, actor, {
    onlyIfExpired: options.onlyIfExpired,
    reason: options.onlyIfExpired ? 'retention lease expired' : 'released by operator',
  });
  return released !== undefined;
}

/**
 * Releases the project's retained allocation held under `name` (a project editor's action): its
 * block returns to the pool now, the name can be claimed again and, with nothing else in it, the
 * network can be deleted. Only the project's own allocations are found; none under that name
 * (never retained, already released, or released concurrently by another caller) is `NotFound`.
 */
export async function releaseRetainedByName(db: DbOrTx, projectId: string, name: string, actor: Actor) {
  const released = await releaseRetained(db, and(eq(ipAllocations.projectId, projectId), eq(ipAllocations.retainedName, name))!, actor, {
    reason: 'released by the project',
  });
  if (!released) throw new DomainError('NotFound', `no retained allocation named "${name}" in this project`, 'name');
  return { name, cidr: released.cidr, released: true as const };
}

/**
 * The one release of a retained allocation: the block goes back through `ipam_release` (which locks
 * the pool row and deletes the allocation, so of concurrent releases exactly one finds it) and the
 * release is audited in the same transaction. Undefined when there was nothing (left) to release.
 */
async function releaseRetained(db: DbOrTx, where: SQL, actor: Actor, options: { onlyIfExpired?: boolean; reason: string }) {
  return db.transaction(async (tx) => {
    const [alloc] = await tx
      .select({
        id: ipAllocations.id,
        poolId: ipAllocations.poolId,
        projectId: ipAllocations.projectId,
        name: ipAllocations.retainedName,
        until: ipAllocations.retainedUntil,
        cidr: ipAllocations.cidr,
      })
      .from(ipAllocations)
      .where(and(where, sql`${ipAllocations.retainedName} is not null`));
    if (!alloc) return undefined;
    if (options.onlyIfExpired && alloc.until && alloc.until.getTime() > Date.now()) return undefined;
    const released = await releaseAllocation(tx, alloc.poolId, alloc.id);
    if (!released) return undefined;
    await recordEvent(tx, {
      actor,
      projectId: alloc.projectId,
      action: 'ipallocation.release',
      objectType: 'ipallocation',
      objectId: alloc.id,
      objectName: alloc.name,
      before: { cidr: alloc.cidr, retainedUntil: alloc.until },
      reason: options.reason,
    });
    return { cidr: alloc.cidr };
  });
}

/** Claims of a project in `default` (REST v1 and the console), filtered, sorted and paginated in the database. */
export async function listClaims(db: DbOrTx, projectId: string, input: ClaimListInput) {
  const where: SQL[] = [eq(ipClaims.projectId, projectId), eq(ipClaims.namespace, DEFAULT_NAMESPACE)];
  if (input.network)
    where.push(
      sql`${ipClaims.networkId} = (select id from networks where project_id = ${projectId} and namespace = ${DEFAULT_NAMESPACE} and name = ${input.network})`,
    );
  if (input.pool) where.push(eq(ipPools.name, input.pool));
  if (input.family) where.push(eq(ipClaims.family, input.family));
  if (input.search) {
    const term = input.search.trim();
    // A search that parses as an address or CIDR finds the claims containing it; otherwise by name.
    const asAddress = /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(term) && (term.includes('.') || term.includes(':'));
    where.push(
      asAddress
        ? sql`(${ipClaims.allocatedCidr} >>= ${term}::inet or ${ipClaims.name} ilike ${'%' + term + '%'})`
        : sql`${ipClaims.name} ilike ${'%' + term + '%'}`,
    );
  }
  const sortColumn = input.sort === 'name' ? ipClaims.name : input.sort === 'cidr' ? ipClaims.allocatedCidr : ipClaims.createdAt;
  const order = input.order === 'asc' ? asc(sortColumn) : desc(sortColumn);
  const base = db
    .select(claimColumns)
    .from(ipClaims)
    .innerJoin(ipPools, eq(ipPools.id, ipClaims.poolId))
    .where(and(...where));
  let rowsOut: ClaimRow[];
  try {
    rowsOut = await base.orderBy(order, asc(ipClaims.id)).limit(input.limit).offset(input.offset);
  } catch (e) {
    if (pgCode(e) === '22P02') throw invalid('search', 'is not a valid address');
    throw e;
  }
  const [{ total }] = await db
    .select({ total: count() })
    .from(ipClaims)
    .innerJoin(ipPools, eq(ipPools.id, ipClaims.poolId))
    .where(and(...where));
  return { items: rowsOut.map(toView), total, nextOffset: input.offset + rowsOut.length < total ? input.offset + rowsOut.length : null };
}

/** Retained allocations, soonest expiry first: every project's (operator view), or one project's, optionally one network's. */
export async function listRetainedAllocations(db: DbOrTx, options: { projectId?: string; network?: string; limit: number; offset: number }) {
  return query(
    db,
    sql`
    select a.id, a.cidr::text as cidr, a.retained_name as name, a.retained_until as "retainedUntil", a.size::text as size,
           p.slug as project, n.name as network, pl.name as pool
    from ip_allocations a join projects p on p.id = a.project_id join networks n on n.id = a.network_id join ip_pools pl on pl.id = a.pool_id
    where a.retained_name is not null ${options.projectId ? sql`and a.project_id = ${options.projectId}` : sql``}
      ${options.network ? sql`and n.name = ${options.network}` : sql``}
    order by a.retained_until, a.id limit ${options.limit} offset ${options.offset}`,
    z.object({
      id: z.string(),
      cidr: z.string(),
      name: z.string(),
      retainedUntil: timestampColumn,
      size: z.string(),
      project: z.string(),
      network: z.string(),
      pool: z.string(),
    }),
  ) satisfies Promise<RetainedAllocationView[]>;
}

export interface RetainedAllocationView {
  id: string;
  cidr: string;
  name: string;
  retainedUntil: Date;
  size: string;
  project: string;
  network: string;
  pool: string;
}

/**
 * A page of a project's claims in key order (namespace, then name): one namespace's or, with
 * `namespace: null`, every namespace's, after the key `after` — the keyset the Kubernetes API's
 * `limit`/`continue` walk (an index range scan on ip_claims_project_namespace_name).
 */
export async function listClaimsByKey(
  db: DbOrTx,
  projectId: string,
  options: { namespace: string | null; after?: { namespace: string; name: string }; limit: number; network?: string },
): Promise<ClaimView[]> {
  const rows = await db
    .select(claimColumns)
    .from(ipClaims)
    .innerJoin(ipPools, eq(ipPools.id, ipClaims.poolId))
    .where(
      and(
        eq(ipClaims.projectId, projectId),
        options.namespace === null ? undefined : eq(ipClaims.namespace, options.namespace),
        options.after ? sql`(${ipClaims.namespace}, ${ipClaims.name}) > (${options.after.namespace}, ${options.after.name})` : undefined,
        options.network
          ? sql`${ipClaims.networkId} in (select id from networks where project_id = ${projectId} and namespace = ${ipClaims.namespace} and name = ${options.network})`
          : undefined,
      ),
    )
    .orderBy(asc(ipClaims.namespace), asc(ipClaims.name))
    .limit(options.limit);
  return rows.map(toView);
}
