import { createHash } from 'node:crypto';
import { and, asc, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { ipAllocations, ipClaims, ipPools } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, invalid, pgCode } from '@/server/errors';
import { enqueueJob } from '@/server/jobs/enqueue';
import { decideAdmission, prepareIpClaimAdmission, recordDeniedClaim, releaseIpClaim } from '@/server/quota/admission';
import { commitAllocation, lockPool, planAllocation, releaseAllocation, type LockedPool } from './allocator';
import { familyBits, formatCidr, type Cidr, type Family } from './cidr';
import { findNetwork, parseCidrField } from './networks';
import type { ClaimCreateInput, ClaimListInput } from './schemas';

export interface ClaimView {
  id: string;
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

async function findClaim(db: DbOrTx, projectId: string, name: string) {
  const [row] = await db
    .select(claimColumns)
    .from(ipClaims)
    .innerJoin(ipPools, eq(ipPools.id, ipClaims.poolId))
    .where(and(eq(ipClaims.projectId, projectId), eq(ipClaims.name, name)));
  return row;
}

/** A claim by name, or NotFound. */
export async function getClaim(db: DbOrTx, projectId: string, name: string): Promise<ClaimView> {
  const row = await findClaim(db, projectId, name);
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
  if (input.prefixLength !== undefined && input.prefixLength > familyBits(family)) {
    throw new DomainError('PrefixLengthRejected', `/${input.prefixLength} is not a valid ${family === 4 ? 'IPv4' : 'IPv6'} prefix length (0–${familyBits(family)})`, 'prefixLength');
  }
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

/** The pools a claim may come from: the named one, else the network's pools of the family, children first. */
async function candidatePools(db: DbOrTx, networkId: string, input: ClaimCreateInput, spec: ResolvedSpec) {
  const where: SQL[] = [eq(ipPools.networkId, networkId), eq(ipPools.family, spec.family), sql`${ipPools.kind} <> 'NodeBlock'`];
  if (input.pool) where.push(eq(ipPools.name, input.pool));
  if (spec.pinned) where.push(sql`${ipPools.cidr} >>= ${formatCidr(spec.pinned)}::cidr`);
  const pools = await db
    .select({ id: ipPools.id, name: ipPools.name, family: ipPools.family, min: ipPools.minPrefixLength, max: ipPools.maxPrefixLength, def: ipPools.defaultPrefixLength, parent: ipPools.parentPoolId, cidr: ipPools.cidr })
    .from(ipPools)
    .where(and(...where))
    // Deepest (most specific) pools first, then by address: claims land in carved pools when they exist.
    .orderBy(desc(sql`masklen(${ipPools.cidr})`), asc(ipPools.cidr));
  if (pools.length === 0) {
    if (input.pool) {
      const [exists] = await db.select({ family: ipPools.family }).from(ipPools).where(and(eq(ipPools.networkId, networkId), eq(ipPools.name, input.pool)));
      if (!exists) throw new DomainError('NotFound', `pool "${input.pool}" not found in network "${input.network}"`, 'pool');
      if (spec.pinned) throw new DomainError('Overlap', `${formatCidr(spec.pinned)} is outside pool "${input.pool}"`, 'address');
      throw invalid('family', `pool "${input.pool}" is IPv${exists.family}, the claim asks for IPv${spec.family}`);
    }
    if (spec.pinned) throw new DomainError('NoOfferingPool', `no pool of network "${input.network}" contains ${formatCidr(spec.pinned)}`, 'address');
    throw new DomainError('NoOfferingPool', `network "${input.network}" has no IPv${spec.family} pool`, 'family');
  }
  return pools;
}

export interface CreateClaimResult {
  claim: ClaimView;
  created: boolean;
}

/**
 * Creates an IP claim and binds it synchronously: returns the claim with its allocated CIDR, or
 * throws a coded error and stores nothing. The name is the idempotency key: the same name and spec
 * returns the existing claim (`created: false`); another spec under the name is `ClaimExists`; a
 * name whose allocation is retained is `AllocationRetained`. With `dryRun`, the whole decision runs
 * and is rolled back: the result shows the block that would be chosen.
 */
export async function createClaim(db: Db, projectId: string, input: ClaimCreateInput, actor: Actor, options: { dryRun?: boolean } = {}): Promise<CreateClaimResult> {
  const spec = resolveSpec(input);
  for (let attempt = 0; ; attempt++) {
    try {
      return await createClaimOnce(db, projectId, input, spec, actor, options.dryRun ?? false);
    } catch (e) {
      // Lost a race for the name: the winner's claim decides (idempotent replay or ClaimExists).
      if (e instanceof DryRunRollback) return e.result;
      if (pgCode(e) === '23505' && attempt < 2) continue;
      // A quota denial rolled everything back; its claim-log row is written now (see recordDeniedClaim).
      if (!options.dryRun) await recordDeniedClaim(db, e);
      throw e;
    }
  }
}

class DryRunRollback extends Error {
  constructor(readonly result: CreateClaimResult) {
    super('dry run');
  }
}

async function createClaimOnce(db: Db, projectId: string, input: ClaimCreateInput, spec: ResolvedSpec, actor: Actor, dryRun: boolean): Promise<CreateClaimResult> {
  return db.transaction(async (tx) => {
    const existing = await findClaim(tx, projectId, input.name);
    if (existing) {
      if (existing.specHash === spec.hash) return { claim: toView(existing), created: false };
      throw new DomainError('ClaimExists', `ipclaim "${input.name}" already exists with a different spec (bound to ${existing.allocatedCidr})`, 'name');
    }
    const [retained] = await tx
      .select({ id: ipAllocations.id, cidr: ipAllocations.cidr, until: ipAllocations.retainedUntil })
      .from(ipAllocations)
      .where(and(eq(ipAllocations.projectId, projectId), eq(ipAllocations.retainedName, input.name)));
    if (retained) {
      throw new DomainError(
        'AllocationRetained',
        `the name "${input.name}" is held by retained allocation ${retained.id} (${retained.cidr}) until ${retained.until?.toISOString() ?? 'released'}; release it or choose another name`,
        'name',
        { allocationId: retained.id, cidr: retained.cidr },
      );
    }
    const network = await findNetwork(tx, projectId, input.network);
    const pools = await candidatePools(tx, network.id, input, spec);
    // Quota, step 1 (no lock): render and validate the claim from the IPClaim policy.
    const quota = await prepareIpClaimAdmission(tx, projectId, { name: input.name, spec: spec.spec, labels: input.labels }, actor);

    let rejected: string | null = null;
    let exhausted = false;
    for (const candidate of pools) {
      const prefixLength = spec.prefixLength ?? candidate.def;
      if (prefixLength < candidate.min || prefixLength > candidate.max) {
        rejected ??= `/${prefixLength} is outside pool ${candidate.name}'s rules (/${candidate.min}–/${candidate.max})`;
        continue;
      }
      const pool = (await lockPool(tx, candidate.id)) as LockedPool;
      const plan = await planAllocation(tx, pool, spec.pinned ? { cidr: spec.pinned } : { prefixLength });
      if (!plan) {
        exhausted = true;
        continue;
      }
      const allocation = await commitAllocation(tx, pool, plan, 'Claim');
      const [row] = await tx
        .insert(ipClaims)
        .values({
          projectId,
          networkId: network.id,
          poolId: pool.id,
          name: input.name,
          family: spec.family,
          prefixLength: plan.allocated.prefix,
          requestedCidr: spec.pinned ? formatCidr(spec.pinned) : null,
          reclaimPolicy: input.reclaimPolicy,
          retentionSeconds: input.retentionSeconds ?? 604800,
          ownerRef: input.ownerRef ?? null,
          labels: input.labels ?? {},
          specHash: spec.hash,
          allocationId: allocation.id,
          allocatedCidr: formatCidr(allocation.cidr),
          createdBy: actor.label,
        })
        .returning({ id: ipClaims.id });
      await tx.update(ipAllocations).set({ claimId: row.id }).where(eq(ipAllocations.id, allocation.id));
      await recordEvent(tx, {
        actor,
        projectId,
        action: 'ipclaim.create',
        objectType: 'ipclaim',
        objectId: row.id,
        objectName: input.name,
        after: { network: input.network, pool: pool.name, allocatedCidr: formatCidr(allocation.cidr) },
      });
      // Quota, step 2: decided in this transaction as its last write, so the project's bucket row is
      // locked only until COMMIT. A denial throws and rolls the whole create back; nothing is stored
      // (dry runs evaluate quota the same way and always roll back). Sent together with the read
      // of the result (one pipelined round trip on the transaction's connection, not two).
      const [found] = await Promise.all([findClaim(tx, projectId, input.name), decideAdmission(tx, quota, { uid: row.id })]);
      const claim = toView(found!);
      if (dryRun) throw new DryRunRollback({ claim, created: false });
      return { claim, created: true };
    }
    if (exhausted) {
      throw new DomainError('Exhausted', `no free ${spec.pinned ? formatCidr(spec.pinned) : `/${spec.prefixLength ?? pools[0].def}`} in network "${input.network}" (IPv${spec.family})`, 'prefixLength');
    }
    throw new DomainError('PrefixLengthRejected', rejected ?? 'no pool accepts this prefix length', 'prefixLength');
  });
}

/**
 * Deletes a claim. `Delete` returns the block to the pool now; `Retain` keeps the allocation
 * counted (claim link cleared, name and expiry recorded) and schedules its release at the end of
 * the retention lease — a job with a run time, not a poll.
 */
export async function deleteClaim(db: Db, projectId: string, name: string, actor: Actor) {
  return db.transaction(async (tx) => {
    const [claim] = await tx
      .select({ id: ipClaims.id, poolId: ipClaims.poolId, allocationId: ipClaims.allocationId, policy: ipClaims.reclaimPolicy, retention: ipClaims.retentionSeconds, cidr: ipClaims.allocatedCidr })
      .from(ipClaims)
      .where(and(eq(ipClaims.projectId, projectId), eq(ipClaims.name, name)))
      .for('update');
    if (!claim) throw new DomainError('NotFound', `ipclaim "${name}" not found`, 'name');
    const pool = (await lockPool(tx, claim.poolId))!;
    let retainedUntil: Date | null = null;
    if (claim.policy === 'Retain') {
      retainedUntil = new Date(Date.now() + claim.retention * 1000);
      await tx.update(ipAllocations).set({ claimId: null, retainedName: name, retainedUntil }).where(eq(ipAllocations.id, claim.allocationId));
      await enqueueJob(tx, 'ipallocation__expire', { allocationId: claim.allocationId }, { jobKey: `ipallocation:${claim.allocationId}`, runAt: retainedUntil });
    } else {
      await releaseAllocation(tx, pool, claim.allocationId);
    }
    await tx.delete(ipClaims).where(eq(ipClaims.id, claim.id));
    await recordEvent(tx, {
      actor,
      projectId,
      action: 'ipclaim.delete',
      objectType: 'ipclaim',
      objectId: claim.id,
      objectName: name,
      before: { allocatedCidr: claim.cidr },
      reason: retainedUntil ? `allocation retained until ${retainedUntil.toISOString()}` : 'allocation released',
    });
    // Quota is given back in this transaction, as its last write (the bucket row is locked until COMMIT).
    await releaseIpClaim(tx, projectId, name);
    return { name, released: claim.policy !== 'Retain', retainedUntil };
  });
}

/**
 * Releases a retained allocation (operator action, or its retention lease expiring). Returns false
 * when it is already gone or no longer retained (idempotent). `onlyIfExpired` is the job's guard.
 */
export async function releaseRetainedAllocation(db: Db, allocationId: string, actor: Actor, options: { onlyIfExpired?: boolean; projectId?: string } = {}) {
  return db.transaction(async (tx) => {
    const [alloc] = await tx
      .select({ id: ipAllocations.id, poolId: ipAllocations.poolId, projectId: ipAllocations.projectId, name: ipAllocations.retainedName, until: ipAllocations.retainedUntil, cidr: ipAllocations.cidr })
      .from(ipAllocations)
      .where(and(eq(ipAllocations.id, allocationId), sql`${ipAllocations.retainedName} is not null`));
    if (!alloc || (options.projectId && alloc.projectId !== options.projectId)) return false;
    if (options.onlyIfExpired && alloc.until && alloc.until.getTime() > Date.now()) return false;
    const pool = (await lockPool(tx, alloc.poolId))!;
    const released = await releaseAllocation(tx, pool, alloc.id);
    if (!released) return false;
    await recordEvent(tx, {
      actor,
      projectId: alloc.projectId,
      action: 'ipallocation.release',
      objectType: 'ipallocation',
      objectId: alloc.id,
      objectName: alloc.name,
      before: { cidr: alloc.cidr, retainedUntil: alloc.until },
      reason: options.onlyIfExpired ? 'retention lease expired' : 'released by operator',
    });
    return true;
  });
}

/** Claims of a project, filtered, sorted and paginated in the database. */
export async function listClaims(db: DbOrTx, projectId: string, input: ClaimListInput) {
  const where: SQL[] = [eq(ipClaims.projectId, projectId)];
  if (input.network) where.push(sql`${ipClaims.networkId} = (select id from networks where project_id = ${projectId} and name = ${input.network})`);
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
  const base = db.select(claimColumns).from(ipClaims).innerJoin(ipPools, eq(ipPools.id, ipClaims.poolId)).where(and(...where));
  let rowsOut: ClaimRow[];
  try {
    rowsOut = await base.orderBy(order, asc(ipClaims.id)).limit(input.limit).offset(input.offset);
  } catch (e) {
    if (pgCode(e) === '22P02') throw invalid('search', 'is not a valid address');
    throw e;
  }
  const [{ total }] = (await db.execute(sql`select count(*)::int as total from ip_claims join ip_pools on ip_pools.id = ip_claims.pool_id where ${and(...where)}`)) as unknown as { total: number }[];
  return { items: rowsOut.map(toView), total, nextOffset: input.offset + rowsOut.length < total ? input.offset + rowsOut.length : null };
}

/** Retained allocations (operator view: every project, or one). */
export async function listRetainedAllocations(db: DbOrTx, options: { projectId?: string; limit: number; offset: number }) {
  const rows = (await db.execute(sql`
    select a.id, a.cidr::text as cidr, a.retained_name as name, a.retained_until as "retainedUntil", a.size::text as size,
           p.slug as project, n.name as network, pl.name as pool
    from ip_allocations a join projects p on p.id = a.project_id join networks n on n.id = a.network_id join ip_pools pl on pl.id = a.pool_id
    where a.retained_name is not null ${options.projectId ? sql`and a.project_id = ${options.projectId}` : sql``}
    order by a.retained_until limit ${options.limit} offset ${options.offset}`)) as unknown as {
    id: string;
    cidr: string;
    name: string;
    retainedUntil: Date;
    size: string;
    project: string;
    network: string;
    pool: string;
  }[];
  return rows;
}
