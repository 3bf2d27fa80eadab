import { sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { query } from '@/db/query';

/**
 * Bucket bookkeeping shared by grants, registrations and increase requests. Every function here
 * runs inside the caller's transaction.
 */

/** A `text[]` literal built from parameters. */
export function textArray(values: string[]): SQL {
  return sql`array[${sql.join(
    values.map((v) => sql`${v}`),
    sql`, `,
  )}]::text[]`;
}

/**
 * Serializes grant changes of one project (transaction-scoped advisory lock). Taken before a grant
 * is written, so the limit recomputed afterwards — in a later statement, hence a later snapshot —
 * sees every grant change committed before it. Admission does not take it: it waits on the bucket
 * row the recompute updates, then re-checks its condition against the new limit.
 */
export async function lockProjectGrants(db: DbOrTx, projectId: string) {
  await db.execute(sql`select pg_advisory_xact_lock(727101, hashtext(${projectId}::text))`);
}

/** Locks several projects' grants in a fixed order (no deadlock between two multi-project changes). */
export async function lockProjectsGrants(db: DbOrTx, projectIds: string[]) {
  for (const id of [...new Set(projectIds)].sort()) await lockProjectGrants(db, id);
}

export const bucketRow = z.object({
  projectId: z.string(),
  resourceType: z.string(),
  limit: z.number(),
  allocated: z.number(),
  claimCount: z.number(),
  grantCount: z.number(),
});
export type BucketRow = z.infer<typeof bucketRow>;

/**
 * Sets `limit` and `grant_count` of the project's buckets for `types` from its active grants,
 * creating buckets that do not exist yet. `allocated` is untouched: a grant never revokes claims,
 * so a shrunk grant can leave a bucket over its limit. Caller holds `lockProjectGrants`.
 */
export async function recomputeLimits(db: DbOrTx, projectId: string, types: string[]): Promise<BucketRow[]> {
  const unique = [...new Set(types)].sort();
  if (unique.length === 0) return [];
  return query(
    db,
    sql`
    insert into allowance_buckets as b (project_id, resource_type, "limit", grant_count)
    select ${projectId}::uuid, t.type, coalesce(g.total, 0), coalesce(g.grants, 0)
    from unnest(${textArray(unique)}) as t(type)
    left join (
      select a->>'resourceType' as type, sum((a->>'amount')::bigint) as total, count(*)::int as grants
      from resource_grants g cross join jsonb_array_elements(g.allowances) a
      where g.project_id = ${projectId} and g.active
      group by 1
    ) g on g.type = t.type
    on conflict (project_id, resource_type) do update
      set "limit" = excluded."limit", grant_count = excluded.grant_count, updated_at = now()
      where b."limit" is distinct from excluded."limit" or b.grant_count is distinct from excluded.grant_count
    returning project_id as "projectId", resource_type as "resourceType", "limit"::float8 as "limit",
              allocated::float8 as allocated, claim_count as "claimCount", grant_count as "grantCount"`,
    bucketRow,
  );
}

/**
 * Re-evaluates the Active condition of grants matching `where` (a condition on `g2`): a grant is
 * Active only when every type it allows is registered and Active. Returns the grants whose
 * condition changed, with their types, so the caller can recompute those buckets.
 */
export async function refreshGrantActivation(db: DbOrTx, where: SQL) {
  return query(
    db,
    sql`
    update resource_grants g
    set active = m.missing is null,
        active_reason = case when m.missing is null then 'AllResourceTypesRegistered' else 'UnregisteredResourceType' end,
        active_message = case when m.missing is null then '' else 'not registered: ' || m.missing end,
        updated_at = now()
    from (
      select g2.id, (
        select string_agg(a->>'resourceType', ', ' order by a->>'resourceType')
        from jsonb_array_elements(g2.allowances) a
        where not exists (select 1 from resource_registrations r where r.resource_type = a->>'resourceType' and r.active)
      ) as missing
      from resource_grants g2 where ${where}
    ) m
    where g.id = m.id and (g.active is distinct from (m.missing is null) or g.active_message is distinct from coalesce('not registered: ' || m.missing, ''))
    returning g.id, g.project_id as "projectId", g.allowances`,
    z.object({ id: z.string(), projectId: z.string(), allowances: z.array(z.object({ resourceType: z.string() })) }),
  );
}

/**
 * Share-locks the registrations of `types` so a grant's Active condition cannot be computed against
 * a registration that is being deleted at the same moment (deletion takes the row exclusively).
 */
export async function lockRegistrations(db: DbOrTx, types: string[]) {
  const unique = [...new Set(types)].sort();
  if (!unique.length) return;
  await db.execute(sql`select 1 from resource_registrations where resource_type = any(${textArray(unique)}) order by resource_type for share`);
}
