import { sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query } from '@/db/query';
import { settings } from '@/db/schema';
import { recordEvent, systemActor, type Actor } from '@/server/audit/events';
import { incrementCounter } from '@/server/observability/metrics';

export interface BucketDrift {
  projectId: string;
  project: string;
  resourceType: string;
  /** What the bucket row says (null when the row is missing). */
  recorded: { limit: number; allocated: number; claimCount: number; grantCount: number } | null;
  /** What the grants and live granted claims add up to. */
  expected: { limit: number; allocated: number; claimCount: number; grantCount: number };
}

export interface AuditResult {
  at: string;
  bucketsChecked: number;
  drifted: BucketDrift[];
  /** Buckets whose allocation exceeds the limit (a shrunk grant; not drift, but worth seeing). */
  overLimit: number;
}

/**
 * Recomputes every bucket from the books — `limit` from active grants, `allocated` and the claim
 * count from live granted claims — in **one statement** (one snapshot, so an admission committing
 * meanwhile is either wholly in or wholly out and cannot look like drift), and reports every
 * difference: one `quota.drift` event per drifted bucket and `meridian_quota_drift_total`.
 * It repairs nothing: drift means something wrote behind the application's back (or a bug), and
 * an operator should look before numbers change. The summary of the last run is kept in `settings`.
 */
export async function auditQuotaBooks(db: Db, actor: Actor = systemActor('quota-audit')): Promise<AuditResult> {
  const found = await query(
    db,
    sql`
    with lim as (
      select g.project_id, a->>'resourceType' as resource_type, sum((a->>'amount')::bigint) as total, count(*)::int as grants
      from resource_grants g cross join jsonb_array_elements(g.allowances) a
      where g.active group by 1, 2
    ), alloc as (
      select c.project_id, r->>'resourceType' as resource_type, sum((r->>'amount')::bigint) as total, count(*)::int as claims
      from resource_claims c cross join jsonb_array_elements(c.requests) r
      where c.status = 'Granted' and c.released_at is null group by 1, 2
    ), keys as (
      select project_id, resource_type from allowance_buckets
      union select project_id, resource_type from lim
      union select project_id, resource_type from alloc
    ), cmp as (
      select k.project_id, k.resource_type, b.project_id is not null as present,
             coalesce(b."limit", 0) as "limit", coalesce(b.allocated, 0) as allocated,
             coalesce(b.claim_count, 0) as claim_count, coalesce(b.grant_count, 0) as grant_count,
             coalesce(l.total, 0) as exp_limit, coalesce(a.total, 0) as exp_allocated,
             coalesce(a.claims, 0) as exp_claims, coalesce(l.grants, 0) as exp_grants
      from keys k
      left join allowance_buckets b on b.project_id = k.project_id and b.resource_type = k.resource_type
      left join lim l on l.project_id = k.project_id and l.resource_type = k.resource_type
      left join alloc a on a.project_id = k.project_id and a.resource_type = k.resource_type
    )
    select cmp.project_id as "projectId", p.slug as project, cmp.resource_type as "resourceType", cmp.present,
           cmp."limit"::float8 as "limit", cmp.allocated::float8 as allocated, cmp.claim_count as "claimCount", cmp.grant_count as "grantCount",
           cmp.exp_limit::float8 as "expLimit", cmp.exp_allocated::float8 as "expAllocated", cmp.exp_claims as "expClaims", cmp.exp_grants as "expGrants",
           (select count(*)::int from allowance_buckets) as checked,
           (select count(*)::int from allowance_buckets where allocated > "limit") as "overLimit"
    from cmp join projects p on p.id = cmp.project_id
    where cmp."limit" <> cmp.exp_limit or cmp.allocated <> cmp.exp_allocated
       or cmp.claim_count <> cmp.exp_claims or cmp.grant_count <> cmp.exp_grants
    union all
    -- always one row carrying the totals, even when nothing drifted
    select null, null, null, null, null, null, null, null, null, null, null, null,
           (select count(*)::int from allowance_buckets), (select count(*)::int from allowance_buckets where allocated > "limit")`,
    // The totals row (project null), or a drifted bucket.
    z.union([
      z.object({ projectId: z.null(), checked: z.number(), overLimit: z.number() }),
      z.object({
        projectId: z.string(),
        project: z.string(),
        resourceType: z.string(),
        present: z.boolean(),
        limit: z.number(),
        allocated: z.number(),
        claimCount: z.number(),
        grantCount: z.number(),
        expLimit: z.number(),
        expAllocated: z.number(),
        expClaims: z.number(),
        expGrants: z.number(),
      }),
    ]),
  );
  const summary = found.find((r) => r.projectId === null)!;
  const drifted: BucketDrift[] = found
    .filter((r) => r.projectId !== null)
    .map((r) => ({
      projectId: r.projectId,
      project: r.project,
      resourceType: r.resourceType,
      recorded: r.present ? { limit: r.limit, allocated: r.allocated, claimCount: r.claimCount, grantCount: r.grantCount } : null,
      expected: { limit: r.expLimit, allocated: r.expAllocated, claimCount: r.expClaims, grantCount: r.expGrants },
    }));
  for (const d of drifted) {
    const parts: string[] = [];
    const rec = d.recorded ?? { limit: 0, allocated: 0, claimCount: 0, grantCount: 0 };
    if (!d.recorded) parts.push('bucket row missing');
    if (rec.allocated !== d.expected.allocated) parts.push(`allocated ${rec.allocated} recorded, ${d.expected.allocated} from live granted claims`);
    if (rec.claimCount !== d.expected.claimCount) parts.push(`claim count ${rec.claimCount} recorded, ${d.expected.claimCount} live`);
    if (rec.limit !== d.expected.limit) parts.push(`limit ${rec.limit} recorded, ${d.expected.limit} from active grants`);
    if (rec.grantCount !== d.expected.grantCount) parts.push(`grant count ${rec.grantCount} recorded, ${d.expected.grantCount} active`);
    await recordEvent(db, {
      actor,
      projectId: d.projectId,
      action: 'quota.drift',
      objectType: 'allowancebucket',
      objectId: `${d.projectId}/${d.resourceType}`,
      objectName: d.resourceType,
      before: d.recorded,
      after: d.expected,
      reason: `${d.project} ${d.resourceType}: ${parts.join('; ')} (not repaired)`,
    });
    await incrementCounter(db, 'meridian_quota_drift_total', { resource_type: d.resourceType });
  }
  await incrementCounter(db, 'meridian_quota_audit_runs_total', { outcome: drifted.length ? 'drift' : 'clean' });
  const result: AuditResult = { at: new Date().toISOString(), bucketsChecked: summary.checked, drifted, overLimit: summary.overLimit };
  const stored = JSON.stringify({ ...result, drifted: drifted.length });
  await db
    .insert(settings)
    .values({ key: 'quota_audit_last', value: stored })
    .onConflictDoUpdate({ target: settings.key, set: { value: stored, updatedAt: new Date() } });
  return result;
}

/** The last audit's summary (time, buckets checked, drifted count, over-limit count), or null. */
export async function lastAudit(db: DbOrTx): Promise<{ at: string; bucketsChecked: number; drifted: number; overLimit: number } | null> {
  const [row] = await query(db, sql`select value from settings where key = 'quota_audit_last'`, z.object({ value: z.string() }));
  return row ? (JSON.parse(row.value) as { at: string; bucketsChecked: number; drifted: number; overLimit: number }) : null;
}
