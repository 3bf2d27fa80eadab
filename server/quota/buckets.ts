import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query, timestampColumn } from '@/db/query';
import type { QuotaAllocationStatus, QuotaAmount } from '@/db/schema';
import { allocationStatusRow, amountRow } from './rows';
import type { ClaimLogInput } from './schemas';

/** How full a bucket is, for flags and bar colours: ≥ 80 % is `Near`, ≥ 100 % `Full`, above `Over`. */
export type BucketFlag = 'Ok' | 'Near' | 'Full' | 'Over';

export interface BucketView {
  projectId: string;
  project: string;
  resourceType: string;
  limit: number;
  allocated: number;
  /** max(0, limit − allocated), derived. */
  available: number;
  /** allocated / limit (1 when the limit is 0 and something is allocated, 0 when both are 0). */
  utilization: number;
  flag: BucketFlag;
  claimCount: number;
  grantCount: number;
  registered: boolean;
  displayUnit: string | null;
  description: string | null;
  updatedAt: Date;
}

export function bucketFlag(limit: number, allocated: number): BucketFlag {
  if (allocated > limit) return 'Over';
  // A limit of 0 leaves nothing to claim: as full as a bucket gets.
  if (allocated >= limit) return 'Full';
  return allocated / limit >= 0.8 ? 'Near' : 'Ok';
}

function toView(r: z.infer<typeof bucketRow>): BucketView {
  const limit = Number(r.limit);
  const allocated = Number(r.allocated);
  return {
    ...r,
    limit,
    allocated,
    available: Math.max(0, limit - allocated),
    utilization: limit > 0 ? allocated / limit : allocated > 0 ? 1 : 0,
    flag: bucketFlag(limit, allocated),
  };
}

/** A bucket as `bucketSelect` reads it, before the derived fields. */
const bucketRow = z.object({
  projectId: z.string(),
  project: z.string(),
  resourceType: z.string(),
  limit: z.number(),
  allocated: z.number(),
  claimCount: z.number(),
  grantCount: z.number(),
  registered: z.boolean(),
  displayUnit: z.string().nullable(),
  description: z.string().nullable(),
  updatedAt: timestampColumn,
});

const bucketSelect = sql`
  select b.project_id as "projectId", p.slug as project, b.resource_type as "resourceType", b."limit"::float8 as "limit",
         b.allocated::float8 as allocated, b.claim_count as "claimCount", b.grant_count as "grantCount",
         (r.id is not null) as registered, r.display_unit as "displayUnit", r.description, b.updated_at as "updatedAt"
  from allowance_buckets b join projects p on p.id = b.project_id
  left join resource_registrations r on r.resource_type = b.resource_type`;

/** A project's buckets, one per resource type it has a grant or a claim for. */
export async function listBuckets(db: DbOrTx, projectId: string): Promise<BucketView[]> {
  const list = await query(db, sql`${bucketSelect} where b.project_id = ${projectId} order by b.resource_type`, bucketRow);
  return list.map(toView);
}

/**
 * Buckets of every project (operator view), fullest first. `flagged` keeps those at ≥ 80 % or
 * over their limit.
 */
export async function listAllBuckets(db: DbOrTx, input: { search?: string; flagged?: boolean; limit: number; offset: number }) {
  const where: SQL[] = [];
  if (input.search) where.push(sql`(p.slug ilike ${'%' + input.search + '%'} or b.resource_type ilike ${'%' + input.search + '%'})`);
  if (input.flagged) where.push(sql`(b.allocated > b."limit" or b.allocated >= 0.8 * b."limit" and b.allocated > 0)`);
  const cond = where.length ? sql`where ${sql.join(where, sql` and `)}` : sql``;
  const list = await query(
    db,
    sql`${bucketSelect} ${cond}
        order by case when b."limit" > 0 then b.allocated::float8 / b."limit" else (b.allocated > 0)::int end desc, p.slug, b.resource_type
        limit ${input.limit} offset ${input.offset}`,
    bucketRow,
  );
  const [{ total }] = await query(
    db,
    sql`select count(*)::int as total from allowance_buckets b join projects p on p.id = b.project_id ${cond}`,
    z.object({ total: z.number() }),
  );
  return { items: list.map(toView), total, nextOffset: input.offset + list.length < total ? input.offset + list.length : null };
}

export interface ClaimLogEntry {
  id: string;
  name: string;
  /** `Granted` (live), `Released` (granted, then released with its object) or `Denied`. */
  status: 'Granted' | 'Released' | 'Denied';
  reason: string;
  message: string;
  requests: QuotaAmount[];
  allocations: QuotaAllocationStatus[];
  resourceRef: { kind: string; name: string; uid: string | null };
  policyName: string | null;
  createdBy: string;
  createdAt: Date;
  releasedAt: Date | null;
}

/** The project's claim log, newest first, filtered and paginated in the database. */
export async function listClaimLog(db: DbOrTx, projectId: string, input: ClaimLogInput) {
  const where: SQL[] = [sql`c.project_id = ${projectId}`];
  if (input.status === 'Denied') where.push(sql`c.status = 'Denied'`);
  if (input.status === 'Granted') where.push(sql`c.status = 'Granted' and c.released_at is null`);
  if (input.status === 'Released') where.push(sql`c.status = 'Granted' and c.released_at is not null`);
  if (input.resourceType) where.push(sql`c.requests @> ${JSON.stringify([{ resourceType: input.resourceType }])}::jsonb`);
  if (input.search) where.push(sql`(c.name ilike ${'%' + input.search + '%'} or c.ref_name ilike ${'%' + input.search + '%'})`);
  const cond = sql.join(where, sql` and `);
  const list = await query(
    db,
    sql`select c.id, c.name, c.status, c.reason, c.message, c.requests, c.allocations, c.ref_kind as "refKind", c.ref_name as "refName",
               c.ref_uid as "refUid", c.policy_name as "policyName", c.created_by as "createdBy", c.created_at as "createdAt", c.released_at as "releasedAt"
        from resource_claims c where ${cond}
        order by c.created_at desc, c.id desc limit ${input.limit} offset ${input.offset}`,
    z.object({
      id: z.string(),
      name: z.string(),
      status: z.string(),
      reason: z.string(),
      message: z.string(),
      requests: z.array(amountRow),
      allocations: z.array(allocationStatusRow),
      refKind: z.string(),
      refName: z.string(),
      refUid: z.string().nullable(),
      policyName: z.string().nullable(),
      createdBy: z.string(),
      createdAt: timestampColumn,
      releasedAt: timestampColumn.nullable(),
    }),
  );
  const [{ total }] = await query(db, sql`select count(*)::int as total from resource_claims c where ${cond}`, z.object({ total: z.number() }));
  const items: ClaimLogEntry[] = list.map((r) => ({
    id: r.id,
    name: r.name,
    status: r.status === 'Denied' ? 'Denied' : r.releasedAt ? 'Released' : 'Granted',
    reason: r.reason,
    message: r.message,
    requests: r.requests,
    allocations: r.allocations,
    resourceRef: { kind: r.refKind, name: r.refName, uid: r.refUid },
    policyName: r.policyName,
    createdBy: r.createdBy,
    createdAt: new Date(r.createdAt),
    releasedAt: r.releasedAt ? new Date(r.releasedAt) : null,
  }));
  return { items, total, nextOffset: input.offset + items.length < total ? input.offset + items.length : null };
}

/** How long denied and released claims stay in the claim log. Live granted claims are never pruned. */
export const CLAIM_LOG_RETENTION_DAYS = 90;

/**
 * Deletes denied and released claims older than the retention, in batches (so one run never holds
 * many row locks). They are history only: the books count live granted claims, which stay.
 */
export async function pruneClaimLog(db: DbOrTx, retentionDays = CLAIM_LOG_RETENTION_DAYS): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await query(
      db,
      sql`delete from resource_claims where id in (
            select id from resource_claims
            where (status = 'Denied' or released_at is not null)
              and coalesce(released_at, created_at) < now() - make_interval(days => ${retentionDays})
            limit 1000)
          returning id`,
      z.object({ id: z.string() }),
    );
    total += deleted.length;
    if (deleted.length < 1000) return total;
  }
}
