/**
 * The database side of the buddy allocator (blocks.ts describes the free-set algebra). Allocation
 * and release are single statements — the SQL functions `ipam_allocate` and `ipam_release`
 * (server/ipam/sql/) — that lock the pool row first, which serializes changes to one pool's free
 * list and counters until the caller's transaction (or the statement) ends; different pools never
 * wait for each other. The exclusion constraint on `ip_allocations` is the final guard against
 * overlap, whatever happens here.
 */
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { isTransaction, type DbOrTx } from '@/db/client';
import { query } from '@/db/query';
import { DomainError, pgError } from '@/server/errors';
import { initialFreeBlocks, reservationBlocks, type AllocationStrategy } from './blocks';
import { cidrSize, formatCidr, parseCidrOrThrow, type Cidr, type Family } from '@/lib/cidr';

export interface LockedPool {
  id: string;
  projectId: string;
  networkId: string;
  name: string;
  kind: string;
  cidr: Cidr;
  family: Family;
  strategy: AllocationStrategy;
  minPrefixLength: number;
  maxPrefixLength: number;
  defaultPrefixLength: number;
  capacity: bigint;
  allocated: bigint;
}

export type AllocationKind = 'Claim' | 'Reservation' | 'PoolCarve' | 'PodAddress';

/**
 * A PostgreSQL array literal as one parameter (drizzle would spread a JS array into a list of
 * parameters). Only for values without commas, quotes, braces or spaces: CIDRs and integers.
 */
function pgArray(values: (string | number)[]): string {
  return `{${values.join(',')}}`;
}
const lockedPoolRow = z.object({
  id: z.string(),
  project_id: z.string(),
  network_id: z.string(),
  name: z.string(),
  kind: z.string(),
  cidr: z.string(),
  family: z.union([z.literal(4), z.literal(6)]),
  strategy: z.enum(['FirstFit', 'BestFit']) satisfies z.ZodType<AllocationStrategy>,
  min_prefix_length: z.number(),
  max_prefix_length: z.number(),
  default_prefix_length: z.number(),
  capacity: z.string(),
  allocated: z.string(),
});

function toPool(r: z.output<typeof lockedPoolRow>): LockedPool {
  return {
    id: r.id,
    projectId: r.project_id,
    networkId: r.network_id,
    name: r.name,
    kind: r.kind,
    cidr: parseCidrOrThrow(r.cidr),
    family: r.family,
    strategy: r.strategy,
    minPrefixLength: r.min_prefix_length,
    maxPrefixLength: r.max_prefix_length,
    defaultPrefixLength: r.default_prefix_length,
    capacity: BigInt(r.capacity),
    allocated: BigInt(r.allocated),
  };
}

/** Locks a pool row for the rest of the transaction and returns it; undefined when missing. */
export async function lockPool(db: DbOrTx, poolId: string): Promise<LockedPool | undefined> {
  const [r] = await query(
    db,
    sql`
    select id, project_id, network_id, name, kind, cidr::text as cidr, family, strategy, min_prefix_length,
           max_prefix_length, default_prefix_length, capacity::text as capacity, allocated::text as allocated
    from ip_pools where id = ${poolId} for update`,
    lockedPoolRow,
  );
  return r ? toPool(r) : undefined;
}

/**
 * Fills a new pool's free list (the canonical blocks between its reservations) and records the
 * leading/trailing reservations as `Reservation` allocations, so they show on the address map.
 */
export async function initializePool(db: DbOrTx, pool: { id: string; projectId: string; networkId: string; cidr: Cidr }, leading: bigint, trailing: bigint) {
  const free = initialFreeBlocks(pool.cidr, leading, trailing);
  await insertFreeBlocks(db, pool.id, free);
  const reserved = reservationBlocks(pool.cidr, leading, trailing);
  for (const block of [...reserved.leading, ...reserved.trailing]) {
    await db.execute(sql`insert into ip_allocations (pool_id, project_id, network_id, cidr, kind, size)
      values (${pool.id}, ${pool.projectId}, ${pool.networkId}, ${formatCidr(block)}::cidr, 'Reservation', ${cidrSize(block).toString()}::numeric)`);
  }
}

async function insertFreeBlocks(db: DbOrTx, poolId: string, blocks: Cidr[]) {
  if (blocks.length === 0) return;
  const cidrs = blocks.map(formatCidr);
  const prefixes = blocks.map((b) => b.prefix);
  await db.execute(sql`insert into ip_free_blocks (pool_id, cidr, prefix_length)
    select ${poolId}, c::cidr, p from unnest(${pgArray(cidrs)}::text[], ${pgArray(prefixes)}::int[]) as t(c, p)`);
}

/** What overlaps `target` in the pool, for an `Overlap` message that names it. */
export async function describeOverlap(db: DbOrTx, poolId: string, target: Cidr): Promise<string> {
  const [hit] = await query(
    db,
    sql`
    select a.cidr::text as cidr, a.kind, c.name as claim, a.retained_name as retained, p.name as pool
    from ip_pools p left join ip_allocations a on a.pool_id = p.id and a.cidr && ${formatCidr(target)}::cidr left join ip_claims c on c.id = a.claim_id
    where p.id = ${poolId} limit 1`,
    z.object({ cidr: z.string().nullable(), kind: z.string().nullable(), claim: z.string().nullable(), retained: z.string().nullable(), pool: z.string() }),
  );
  if (!hit?.cidr || !hit.kind) return `${formatCidr(target)} is not free in pool ${hit?.pool ?? poolId}`;
  const owner = hit.claim ? `claim "${hit.claim}"` : hit.retained ? `retained allocation of "${hit.retained}"` : hit.kind.toLowerCase();
  return `${formatCidr(target)} overlaps ${hit.cidr} (${owner}) in pool ${hit.pool}`;
}

export interface Allocation {
  id: string;
  poolId: string;
  cidr: Cidr;
  size: bigint;
}

export type AllocationRequest = { prefixLength: number } | { cidr: Cidr };

/**
 * Allocates a block from a pool in one statement (the SQL function `ipam_allocate`, migration
 * 0011): locks the pool row (until the caller's transaction ends), picks the block by the pool's
 * strategy or takes the pinned CIDR, swaps the source free block for its remainder
 * (`splitBlock`), inserts the allocation (the exclusion constraint checks it) and moves the pool's
 * counters. Returns undefined when the pool has no room; a pinned CIDR that is outside the pool or
 * not entirely free is `Overlap`, naming what is in the way.
 */
export async function allocate(
  db: DbOrTx,
  poolId: string,
  request: AllocationRequest,
  kind: AllocationKind,
  links: { claimId?: string | null; childPoolId?: string | null } = {},
): Promise<Allocation | undefined> {
  const pinned = 'cidr' in request ? formatCidr(request.cidr) : null;
  let found: { id: string | null; cidr: string | null; size: string | null } | undefined;
  try {
    [found] = await query(
      db,
      sql`
      select o_allocation_id as id, o_cidr::text as cidr, o_size::text as size
      from ipam_allocate(${poolId}, ${'prefixLength' in request ? request.prefixLength : null}::int, ${pinned}::cidr, ${kind},
                         ${links.claimId ?? null}::uuid, ${links.childPoolId ?? null}::uuid)`,
      z.object({ id: z.string().nullable(), cidr: z.string().nullable(), size: z.string().nullable() }),
    );
  } catch (e) {
    const { code, message } = pgError(e) ?? {};
    if (code === 'MA001') throw new DomainError('Overlap', message!, 'address');
    if ((code === 'MA002' || code === '23P01') && 'cidr' in request && !isTransaction(db)) {
      throw new DomainError('Overlap', await describeOverlap(db, poolId, request.cidr), 'address');
    }
    if (code === 'MA002' || code === '23P01') throw new DomainError('Overlap', `${pinned ?? 'the block'} is not free`, 'address');
    throw e;
  }
  if (!found?.id) return undefined;
  return { id: found.id, poolId, cidr: parseCidrOrThrow(found.cidr!), size: BigInt(found.size!) };
}

/**
 * Releases an allocation in one statement (`ipam_release`): locks the pool row, deletes the
 * allocation, merges the block back with its free buddies (`mergeFree`, so the free list stays
 * canonical) and moves the counters back. Returns the released CIDR, or undefined when the
 * allocation was already gone.
 */
export async function releaseAllocation(db: DbOrTx, poolId: string, allocationId: string): Promise<Cidr | undefined> {
  const [r] = await query(db, sql`select ipam_release(${poolId}, ${allocationId})::text as cidr`, z.object({ cidr: z.string().nullable() }));
  return r?.cidr ? parseCidrOrThrow(r.cidr) : undefined;
}
