import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query } from '@/db/query';
import { familyBits, formatCidr, makeCidr, parseCidrOrThrow, type Family } from '@/lib/cidr';
import { DomainError, invalid } from '@/server/errors';
import { findNetwork } from './networks';

export interface AvailableBlock {
  /** A free block: claimable by naming it as a claim's `address` (with `pool`) when the pool's rules allow its length. */
  cidr: string;
  prefixLength: number;
  /** Addresses in it (exact decimal). */
  size: string;
  /** Whether the pool's min/max prefix rules allow a claim of exactly this block. */
  claimable: boolean;
}

export interface AvailableAnswer {
  pool: { name: string; cidr: string; family: 'IPv4' | 'IPv6'; minPrefixLength: number; maxPrefixLength: number };
  /** The length asked for, or null: the largest free blocks. */
  prefixLength: number | null;
  items: AvailableBlock[];
}

/** A free block's CIDR and prefix length. */
const freeRow = z.object({ cidr: z.string(), p: z.number() });

/**
 * Free space of one pool, straight from its free-block table (`ip_free_blocks`, the buddy
 * allocator's canonical maximal aligned free blocks; never from the allocations):
 *
 * - with `prefixLength`: the first `limit` free blocks of exactly that length, in address order —
 *   the lowest free block of each length up to it is an index probe (at most `limit` rows per
 *   length), and each is cut into blocks of the length asked for;
 * - without: the `limit` largest free blocks, largest first, then by address.
 *
 * A block listed is what a claim pinned to it (`address`) gets, if nothing takes it first.
 */
export async function availableBlocks(
  db: DbOrTx,
  projectId: string,
  networkName: string,
  poolName: string,
  options: { prefixLength?: number; limit: number },
): Promise<AvailableAnswer> {
  const network = await findNetwork(db, projectId, networkName, 'name');
  const [pool] = await query(
    db,
    sql`
    select id, name, cidr::text as cidr, family, min_prefix_length as "minPrefixLength", max_prefix_length as "maxPrefixLength"
      from ip_pools where network_id = ${network.id} and name = ${poolName} and kind <> 'NodeBlock'`,
    z.object({
      id: z.string(),
      name: z.string(),
      cidr: z.string(),
      family: z.union([z.literal(4), z.literal(6)]) satisfies z.ZodType<Family>,
      minPrefixLength: z.number(),
      maxPrefixLength: z.number(),
    }),
  );
  if (!pool) throw new DomainError('NotFound', `pool "${poolName}" not found in network "${networkName}"`, 'pool');
  const bits = familyBits(pool.family);
  const { prefixLength, limit } = options;
  if (prefixLength !== undefined && (prefixLength < 0 || prefixLength > bits))
    throw invalid('prefixLength', `prefixLength must be from 0 to ${bits} for an ${pool.family === 4 ? 'IPv4' : 'IPv6'} pool`);
  const claimable = (p: number) => p >= pool.minPrefixLength && p <= pool.maxPrefixLength;
  const view = {
    name: pool.name,
    cidr: pool.cidr,
    family: pool.family === 4 ? ('IPv4' as const) : ('IPv6' as const),
    minPrefixLength: pool.minPrefixLength,
    maxPrefixLength: pool.maxPrefixLength,
  };
  const block = (cidr: string, p: number): AvailableBlock => ({ cidr, prefixLength: p, size: (1n << BigInt(bits - p)).toString(), claimable: claimable(p) });

  if (prefixLength === undefined) {
    const rows = await query(
      db,
      sql`
      select cidr::text as cidr, prefix_length as p from ip_free_blocks where pool_id = ${pool.id}
       order by prefix_length, cidr limit ${limit}`,
      freeRow,
    );
    return { pool: view, prefixLength: null, items: rows.map((r) => block(r.cidr, r.p)) };
  }

  // The lowest `limit` free blocks of each length that holds a block of the length asked for.
  const rows = await query(
    db,
    sql`
    select f.cidr::text as cidr, f.prefix_length as p
      from generate_series(0, ${prefixLength}::int) as l(p)
      cross join lateral (select cidr, prefix_length from ip_free_blocks
                           where pool_id = ${pool.id} and prefix_length = l.p order by cidr limit ${limit}) f
     order by f.cidr`,
    freeRow,
  );
  const items: AvailableBlock[] = [];
  for (const r of rows) {
    const free = parseCidrOrThrow(r.cidr);
    const step = 1n << BigInt(bits - prefixLength);
    const end = free.network + (1n << BigInt(bits - free.prefix));
    for (let at = free.network; at < end && items.length < limit; at += step)
      items.push(block(formatCidr(makeCidr(pool.family, at, prefixLength)), prefixLength));
    if (items.length >= limit) break;
  }
  return { pool: view, prefixLength, items };
}
