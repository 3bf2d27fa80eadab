import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query } from '@/db/query';
import { ipPools } from '@/db/schema';
import { DomainError } from '@/server/errors';
import { cidrSize, contains, familyBits, formatCidr, makeCidr, parseCidrOrThrow, type Cidr } from '@/lib/cidr';
import { findNetwork, parseCidrField, poolView } from './networks';

/** Above this many allocations in view, the map aggregates into cells instead of listing blocks. */
const EXACT_LIMIT = 512;
/** Cells per aggregated view: 2^CELL_BITS. */
const CELL_BITS = 8;

export interface MapSegment {
  cidr: string;
  /** `claim`, `reserved`, `pool` (a child pool or node block), `pod`, `retained` or `free`. */
  kind: 'claim' | 'reserved' | 'pool' | 'pod' | 'retained' | 'free';
  /** Claim name, child pool name, or retained name. */
  label: string | null;
  /**
   * Who holds the block, in words: a claim's owner reference (kind/name) or its creator, a node
   * block's cluster and node, a pod address's pod (namespace/name) and node; null for free blocks,
   * reservations and child pools.
   */
  owner: string | null;
  /** A `pool` block that is a cluster node's block of pod addresses: opening it shows them. */
  nodeBlock: boolean;
  size: string;
}

export interface MapCell {
  cidr: string;
  size: string;
  allocated: string;
  utilization: number;
}

/**
 * The address-space map of one pool, zoomable: `view` (default the whole pool) is a CIDR inside
 * it. Small views list every block (allocated, reserved, free) exactly; views holding more than
 * EXACT_LIMIT allocations are aggregated into 256 equal cells with their utilization, each of
 * which can be opened as the next view. Cost is bounded by the view, not the pool.
 */
export async function getAddressMap(db: DbOrTx, projectId: string, input: { network: string; pool?: string; view?: string }) {
  const network = await findNetwork(db, projectId, input.network);
  const poolWhere = input.pool
    ? and(eq(ipPools.networkId, network.id), eq(ipPools.name, input.pool))
    : and(eq(ipPools.networkId, network.id), sql`${ipPools.parentPoolId} is null`);
  const [poolRow] = await db.select().from(ipPools).where(poolWhere).orderBy(ipPools.family, ipPools.cidr).limit(1);
  if (!poolRow) throw new DomainError('NotFound', input.pool ? `pool "${input.pool}" not found` : `network "${input.network}" has no pools`, 'pool');
  const pool = poolView(poolRow);
  const poolCidr = parseCidrOrThrow(pool.cidr);
  const view: Cidr = input.view ? parseCidrField('view', input.view, { family: poolCidr.family }) : poolCidr;
  if (!contains(poolCidr, view)) throw new DomainError('ValidationFailed', `view ${formatCidr(view)} is outside pool ${pool.name} (${pool.cidr})`, 'view');
  const viewText = formatCidr(view);

  const [{ n }] = await query(
    db,
    sql`
    select count(*)::int as n from ip_allocations where pool_id = ${pool.id} and cidr <<= ${viewText}::cidr`,
    z.object({ n: z.number() }),
  );
  const bits = familyBits(view.family);
  const breadcrumbs = crumbs(poolCidr, view);

  if (n <= EXACT_LIMIT || view.prefix >= bits) {
    const segments = await query(
      db,
      sql`
      select a.cidr::text as cidr, a.kind, a.retained_name, c.name as claim, cp.name as child, a.size::text as size,
             case
               when c.owner_ref is not null then concat(c.owner_ref->>'kind', '/', c.owner_ref->>'name')
               when c.id is not null then c.created_by
               when nb.pool_id is not null then concat('cluster ', cl.name, ', node ', nb.node)
               when pl.id is not null then concat('pod ', coalesce(pl.pod_namespace || '/' || pl.pod_name, pl.container_id), ' on node ', pl.node)
             end as owner,
             cp.kind = 'NodeBlock' as node_block, a.cidr as sort_key
      from ip_allocations a
        left join ip_claims c on c.id = a.claim_id
        left join ip_pools cp on cp.id = a.child_pool_id
        left join node_blocks nb on nb.pool_id = cp.id and cp.kind = 'NodeBlock'
        left join clusters cl on cl.id = nb.cluster_id
        left join pod_leases pl on pl.allocation_id = a.id and a.kind = 'PodAddress'
      where a.pool_id = ${pool.id} and (a.cidr <<= ${viewText}::cidr or a.cidr >> ${viewText}::cidr)
      union all
      select f.cidr::text, 'Free', null, null, null, power(2::numeric, ${bits} - f.prefix_length)::numeric(40,0)::text, null, false, f.cidr
      from ip_free_blocks f where f.pool_id = ${pool.id} and (f.cidr <<= ${viewText}::cidr or f.cidr >> ${viewText}::cidr)
      order by sort_key`,
      z.object({
        cidr: z.string(),
        kind: z.string(),
        retained_name: z.string().nullable(),
        claim: z.string().nullable(),
        child: z.string().nullable(),
        size: z.string(),
        owner: z.string().nullable(),
        node_block: z.boolean().nullable(),
      }),
    );
    return {
      network: network.name,
      pool,
      view: viewText,
      breadcrumbs,
      mode: 'exact' as const,
      segments: segments.map((s): MapSegment => {
        // A block larger than the view (the view is inside it) is shown as the view itself.
        const c = parseCidrOrThrow(s.cidr);
        const clipped = c.prefix < view.prefix ? view : c;
        const kind: MapSegment['kind'] =
          s.kind === 'Free'
            ? 'free'
            : s.kind === 'Reservation'
              ? 'reserved'
              : s.kind === 'PoolCarve'
                ? 'pool'
                : s.kind === 'PodAddress'
                  ? 'pod'
                  : s.retained_name
                    ? 'retained'
                    : 'claim';
        return {
          cidr: formatCidr(clipped),
          kind,
          label: s.claim ?? s.child ?? s.retained_name,
          owner: s.owner,
          nodeBlock: s.node_block === true,
          size: cidrSize(clipped).toString(),
        };
      }),
      cells: [] as MapCell[],
      allocationCount: n,
    };
  }

  const cellPrefix = Math.min(view.prefix + CELL_BITS, bits);
  const cellSize = 1n << BigInt(bits - cellPrefix);
  const used = new Map<string, bigint>();
  const small = await query(
    db,
    sql`
    select set_masklen(cidr, ${cellPrefix})::cidr::text as cell, sum(size)::numeric(40,0)::text as used
    from ip_allocations where pool_id = ${pool.id} and cidr <<= ${viewText}::cidr and masklen(cidr) >= ${cellPrefix} and kind <> 'Reservation'
    group by 1`,
    z.object({ cell: z.string(), used: z.string() }),
  );
  for (const r of small) used.set(r.cell, BigInt(r.used));
  // Allocations bigger than a cell fill every cell they cover.
  const large = await query(
    db,
    sql`
    select cidr::text as cidr from ip_allocations where pool_id = ${pool.id} and cidr <<= ${viewText}::cidr and masklen(cidr) < ${cellPrefix} and kind <> 'Reservation'`,
    z.object({ cidr: z.string() }),
  );
  for (const r of large) {
    const c = parseCidrOrThrow(r.cidr);
    const count = 1n << BigInt(cellPrefix - c.prefix);
    for (let i = 0n; i < count; i++) used.set(formatCidr(makeCidr(view.family, c.network + i * cellSize, cellPrefix)), cellSize);
  }
  const cells: MapCell[] = [];
  for (let i = 0n; i < 1n << BigInt(cellPrefix - view.prefix); i++) {
    const cell = makeCidr(view.family, view.network + i * cellSize, cellPrefix);
    const key = formatCidr(cell);
    const u = used.get(key) ?? 0n;
    cells.push({ cidr: key, size: cellSize.toString(), allocated: u.toString(), utilization: Number((u * 10_000n) / cellSize) / 10_000 });
  }
  return { network: network.name, pool, view: viewText, breadcrumbs, mode: 'cells' as const, segments: [] as MapSegment[], cells, allocationCount: n };
}

/** The zoom path from the pool down to the view, in CELL_BITS steps, for navigation. */
function crumbs(pool: Cidr, view: Cidr): string[] {
  const out: string[] = [];
  const bits = familyBits(pool.family);
  for (let len = pool.prefix; len < view.prefix; len += CELL_BITS) {
    const mask = ((1n << BigInt(len)) - 1n) << BigInt(bits - len);
    out.push(formatCidr(makeCidr(pool.family, view.network & mask, len)));
  }
  out.push(formatCidr(view));
  return out;
}
