import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query } from '@/db/query';

/**
 * Every pool across projects with its figures (operator view), largest utilization first: as in
 * `poolView`, capacity is every address of the CIDR, reserved the two reservations, utilization
 * the share of the allocatable space (the `capacity` column) in use.
 */
export async function listAllPools(db: DbOrTx, options: { search?: string; limit: number; offset: number }) {
  const term = options.search ? `%${options.search}%` : null;
  const rows = await query(
    db,
    sql`
    select p.id, pr.slug as project, n.name as network, p.name, p.kind, p.cidr::text as cidr, p.family,
           (p.capacity + p.reserve_leading + p.reserve_trailing)::text as capacity, (p.reserve_leading + p.reserve_trailing)::text as reserved,
           p.allocated::text as allocated, p.allocation_count as "allocationCount",
           case when p.capacity = 0 then 1 else round(p.allocated / p.capacity, 6)::float end as utilization
    from ip_pools p join networks n on n.id = p.network_id join projects pr on pr.id = p.project_id
    where p.kind <> 'NodeBlock' ${term ? sql`and (pr.slug ilike ${term} or n.name ilike ${term} or p.name ilike ${term})` : sql``}
    order by utilization desc, pr.slug, n.name, p.cidr
    limit ${options.limit} offset ${options.offset}`,
    z.object({
      id: z.string(),
      project: z.string(),
      network: z.string(),
      name: z.string(),
      kind: z.string(),
      cidr: z.string(),
      family: z.number(),
      capacity: z.string(),
      reserved: z.string(),
      allocated: z.string(),
      allocationCount: z.number(),
      utilization: z.number(),
    }),
  );
  const [{ total }] = await query(
    db,
    sql`
    select count(*)::int as total from ip_pools p join networks n on n.id = p.network_id join projects pr on pr.id = p.project_id
    where p.kind <> 'NodeBlock' ${term ? sql`and (pr.slug ilike ${term} or n.name ilike ${term} or p.name ilike ${term})` : sql``}`,
    z.object({ total: z.number() }),
  );
  return { items: rows, total };
}
