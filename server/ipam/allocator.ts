/**
 * The database side of the buddy allocator. Every function here runs inside the caller's
 * transaction and expects the pool row to be locked (`lockPool`), which serializes changes to one
 * pool's free list and counters; different pools never wait for each other. The exclusion
 * constraint on `ip_allocations` is the final guard against overlap, whatever happens here.
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { DomainError, pgCode } from '@/server/errors';
import { buddyChain, initialFreeBlocks, mergeFree, reservationBlocks, splitBlock, type AllocationStrategy } from './blocks';
import { cidrSize, contains, formatCidr, makeCidr, parseCidrOrThrow, type Cidr, type Family } from './cidr';

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

type Row = Record<string, unknown>;

/**
 * A PostgreSQL array literal as one parameter (drizzle would spread a JS array into a list of
 * parameters). Only for values without commas, quotes, braces or spaces: CIDRs and integers.
 */
function pgArray(values: (string | number)[]): string {
  return `{${values.join(',')}}`;
}
const rows = async <T extends Row>(db: DbOrTx, query: ReturnType<typeof sql>) => (await db.execute(query)) as unknown as T[];

function toPool(r: Row): LockedPool {
  return {
    id: r.id as string,
    projectId: r.project_id as string,
    networkId: r.network_id as string,
    name: r.name as string,
    kind: r.kind as string,
    cidr: parseCidrOrThrow(r.cidr as string),
    family: Number(r.family) as Family,
    strategy: r.strategy as AllocationStrategy,
    minPrefixLength: Number(r.min_prefix_length),
    maxPrefixLength: Number(r.max_prefix_length),
    defaultPrefixLength: Number(r.default_prefix_length),
    capacity: BigInt(r.capacity as string),
    allocated: BigInt(r.allocated as string),
  };
}

/** Locks a pool row for the rest of the transaction and returns it; undefined when missing. */
export async function lockPool(db: DbOrTx, poolId: string): Promise<LockedPool | undefined> {
  const [r] = await rows(db, sql`
    select id, project_id, network_id, name, kind, cidr::text as cidr, family, strategy, min_prefix_length,
           max_prefix_length, default_prefix_length, capacity::text as capacity, allocated::text as allocated
    from ip_pools where id = ${poolId} for update`);
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

/**
 * The free block a new /prefix comes from, by index probes whose cost does not depend on how
 * fragmented the pool is. FirstFit: for each block size that fits, the lowest block of that size;
 * the lowest of those. BestFit: the smallest fitting block, lowest address first.
 */
async function findSourceBlock(db: DbOrTx, pool: LockedPool, prefix: number, strategy: AllocationStrategy): Promise<Cidr | undefined> {
  const found =
    strategy === 'BestFit'
      ? await rows<{ cidr: string }>(db, sql`
          select cidr::text as cidr from ip_free_blocks
          where pool_id = ${pool.id} and prefix_length <= ${prefix}
          order by prefix_length desc, cidr limit 1`)
      : await rows<{ cidr: string }>(db, sql`
          select b.cidr::text as cidr
          from generate_series(${pool.cidr.prefix}::int, ${prefix}::int) as k(len)
          cross join lateral (
            select cidr from ip_free_blocks where pool_id = ${pool.id} and prefix_length = k.len order by cidr limit 1
          ) b
          order by b.cidr limit 1`);
  return found[0] ? parseCidrOrThrow(found[0].cidr) : undefined;
}

/** The free block containing `target` (one of its supernets inside the pool), if any. */
async function findContainingBlock(db: DbOrTx, pool: LockedPool, target: Cidr): Promise<Cidr | undefined> {
  const candidates: string[] = [];
  for (let len = pool.cidr.prefix; len <= target.prefix; len++) {
    const mask = ((1n << BigInt(len)) - 1n) << BigInt((pool.family === 4 ? 32 : 128) - len);
    candidates.push(formatCidr(makeCidr(pool.family, target.network & mask, len)));
  }
  const found = await rows<{ cidr: string }>(db, sql`
    select cidr::text as cidr from ip_free_blocks where pool_id = ${pool.id} and cidr = any(${pgArray(candidates)}::cidr[]) limit 1`);
  return found[0] ? parseCidrOrThrow(found[0].cidr) : undefined;
}

/** What overlaps `target` in the pool, for an `Overlap` message that names it. */
async function describeOverlap(db: DbOrTx, pool: LockedPool, target: Cidr): Promise<string> {
  const [hit] = await rows<{ cidr: string; kind: string; claim: string | null; retained: string | null }>(db, sql`
    select a.cidr::text as cidr, a.kind, c.name as claim, a.retained_name as retained
    from ip_allocations a left join ip_claims c on c.id = a.claim_id
    where a.pool_id = ${pool.id} and a.cidr && ${formatCidr(target)}::cidr limit 1`);
  if (!hit) return `${formatCidr(target)} is not free in pool ${pool.name}`;
  const owner = hit.claim ? `claim "${hit.claim}"` : hit.retained ? `retained allocation of "${hit.retained}"` : hit.kind.toLowerCase();
  return `${formatCidr(target)} overlaps ${hit.cidr} (${owner}) in pool ${pool.name}`;
}

export interface Allocation {
  id: string;
  poolId: string;
  cidr: Cidr;
  size: bigint;
}

export type AllocationRequest = { prefixLength: number } | { cidr: Cidr };

/**
 * Picks a block (by the pool's strategy, or the pinned CIDR), or returns undefined when the pool
 * has no room. Does not write: `commitAllocation` does.
 */
export async function planAllocation(
  db: DbOrTx,
  pool: LockedPool,
  request: AllocationRequest,
): Promise<{ from: Cidr; allocated: Cidr } | undefined> {
  if ('cidr' in request) {
    if (!contains(pool.cidr, request.cidr)) {
      throw new DomainError('Overlap', `${formatCidr(request.cidr)} is outside pool ${pool.name} (${formatCidr(pool.cidr)})`, 'address');
    }
    const from = await findContainingBlock(db, pool, request.cidr);
    if (!from) throw new DomainError('Overlap', await describeOverlap(db, pool, request.cidr), 'address');
    return { from, allocated: request.cidr };
  }
  const from = await findSourceBlock(db, pool, request.prefixLength, pool.strategy);
  if (!from) return undefined;
  return { from, allocated: makeCidr(pool.family, from.network, request.prefixLength) };
}

/**
 * Writes a planned allocation: swaps the source free block for its remainder, inserts the
 * allocation row (the exclusion constraint checks it), and moves the pool's counters.
 */
export async function commitAllocation(
  db: DbOrTx,
  pool: LockedPool,
  plan: { from: Cidr; allocated: Cidr },
  kind: AllocationKind,
  links: { claimId?: string | null; childPoolId?: string | null } = {},
): Promise<Allocation> {
  await db.execute(sql`delete from ip_free_blocks where pool_id = ${pool.id} and cidr = ${formatCidr(plan.from)}::cidr`);
  await insertFreeBlocks(db, pool.id, splitBlock(plan.from, plan.allocated));
  const size = cidrSize(plan.allocated);
  let inserted: { id: string }[];
  try {
    inserted = await rows<{ id: string }>(db, sql`
      insert into ip_allocations (pool_id, project_id, network_id, cidr, kind, claim_id, child_pool_id, size)
      values (${pool.id}, ${pool.projectId}, ${pool.networkId}, ${formatCidr(plan.allocated)}::cidr, ${kind},
              ${links.claimId ?? null}, ${links.childPoolId ?? null}, ${size.toString()}::numeric)
      returning id`);
  } catch (e) {
    if (pgCode(e) === '23P01') throw new DomainError('Overlap', await describeOverlap(db, pool, plan.allocated), 'address');
    throw e;
  }
  await db.execute(sql`update ip_pools set allocated = allocated + ${size.toString()}::numeric, allocation_count = allocation_count + 1
    where id = ${pool.id}`);
  pool.allocated += size;
  return { id: inserted[0].id, poolId: pool.id, cidr: plan.allocated, size };
}

/**
 * Releases an allocation of a locked pool: deletes the row, merges the block back into the free
 * list with its free buddies (so the list stays canonical), and moves the counters back.
 */
export async function releaseAllocation(db: DbOrTx, pool: LockedPool, allocationId: string): Promise<Cidr | undefined> {
  const [deleted] = await rows<{ cidr: string; size: string }>(db, sql`
    delete from ip_allocations where id = ${allocationId} and pool_id = ${pool.id} returning cidr::text as cidr, size::text as size`);
  if (!deleted) return undefined;
  const released = parseCidrOrThrow(deleted.cidr);
  const chain = buddyChain(released, pool.cidr).map(formatCidr);
  const free = new Set(
    chain.length
      ? (await rows<{ cidr: string }>(db, sql`select cidr::text as cidr from ip_free_blocks where pool_id = ${pool.id} and cidr = any(${pgArray(chain)}::cidr[])`)).map((r) => r.cidr)
      : [],
  );
  const plan = mergeFree(released, (b) => free.has(formatCidr(b)), pool.cidr);
  if (plan.remove.length) {
    await db.execute(sql`delete from ip_free_blocks where pool_id = ${pool.id} and cidr = any(${pgArray(plan.remove.map(formatCidr))}::cidr[])`);
  }
  await insertFreeBlocks(db, pool.id, [plan.insert]);
  await db.execute(sql`update ip_pools set allocated = allocated - ${deleted.size}::numeric, allocation_count = allocation_count - 1
    where id = ${pool.id}`);
  pool.allocated -= BigInt(deleted.size);
  return released;
}
