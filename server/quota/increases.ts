import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query, timestampColumn } from '@/db/query';
import { quotaIncreaseRequests } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, pgError } from '@/server/errors';
import { createGrantTx } from './grants';
import type { IncreaseCreateInput } from './schemas';

const increaseRow = z.object({
  id: z.string(),
  projectId: z.string(),
  project: z.string(),
  resourceType: z.string(),
  amount: z.number(),
  reason: z.string(),
  status: z.enum(['Pending', 'Approved', 'Rejected']),
  requestedBy: z.string(),
  decidedBy: z.string().nullable(),
  decidedAt: timestampColumn.nullable(),
  decisionReason: z.string().nullable(),
  approvedAmount: z.number().nullable(),
  grantName: z.string().nullable(),
  createdAt: timestampColumn,
  /** The project's bucket for the type now (operators decide with it in view). */
  bucket: z.object({ limit: z.number(), allocated: z.number() }).nullable(),
});
export type IncreaseView = z.infer<typeof increaseRow>;

const select = sql`
  select q.id, q.project_id as "projectId", p.slug as project, q.resource_type as "resourceType", q.amount::float8 as amount, q.reason,
         q.status, q.requested_by as "requestedBy", q.decided_by as "decidedBy", q.decided_at as "decidedAt",
         q.decision_reason as "decisionReason", q.approved_amount::float8 as "approvedAmount", g.name as "grantName", q.created_at as "createdAt",
         case when b.project_id is null then null else json_build_object('limit', b."limit", 'allocated', b.allocated) end as bucket
  from quota_increase_requests q
  join projects p on p.id = q.project_id
  left join resource_grants g on g.id = q.grant_id
  left join allowance_buckets b on b.project_id = q.project_id and b.resource_type = q.resource_type`;

async function getIncrease(db: DbOrTx, id: string, projectId?: string) {
  const [row] = await query(db, sql`${select} where q.id = ${id} ${projectId ? sql`and q.project_id = ${projectId}` : sql``}`, increaseRow);
  if (!row) throw new DomainError('NotFound', `increase request ${id} not found`, 'id');
  return row;
}

/**
 * A tenant asks for `amount` more of a registered type, saying why. One pending request per
 * project and type (a partial unique index); an operator approves or rejects it.
 */
export async function createIncreaseRequest(db: DbOrTx, projectId: string, input: IncreaseCreateInput, actor: Actor): Promise<IncreaseView> {
  const [registered] = await query(
    db,
    sql`select true as ok from resource_registrations where resource_type = ${input.resourceType}`,
    z.object({ ok: z.boolean() }),
  );
  if (!registered) throw new DomainError('ValidationFailed', `"${input.resourceType}" is not a quota-managed resource type`, 'resourceType');
  try {
    return await db.transaction(async (tx) => {
      const [row] = await tx
        .insert(quotaIncreaseRequests)
        .values({ projectId, resourceType: input.resourceType, amount: input.amount, reason: input.reason, requestedBy: actor.label })
        .returning({ id: quotaIncreaseRequests.id });
      await recordEvent(tx, {
        actor,
        projectId,
        action: 'quota.increase.create',
        objectType: 'quotaincreaserequest',
        objectId: row.id,
        objectName: input.resourceType,
        after: { resourceType: input.resourceType, amount: input.amount },
        reason: input.reason,
      });
      return getIncrease(tx, row.id);
    });
  } catch (e) {
    if (pgError(e)?.code === '23505') {
      throw new DomainError(
        'Conflict',
        `a request for more ${input.resourceType} is already pending for this project; wait for the operator's decision`,
        'resourceType',
      );
    }
    throw e;
  }
}

/** Increase requests of one project (tenant) or of all (operator queue), newest first. */
export async function listIncreaseRequests(
  db: DbOrTx,
  input: { projectId?: string; status?: 'Pending' | 'Approved' | 'Rejected'; limit: number; offset: number },
) {
  const where: SQL[] = [];
  if (input.projectId) where.push(sql`q.project_id = ${input.projectId}`);
  if (input.status) where.push(sql`q.status = ${input.status}`);
  const cond = where.length ? sql`where ${sql.join(where, sql` and `)}` : sql``;
  // The queue is worked oldest first; histories read newest first.
  const order = input.status === 'Pending' ? sql`q.created_at asc` : sql`q.created_at desc`;
  const items = await query(db, sql`${select} ${cond} order by ${order}, q.id limit ${input.limit} offset ${input.offset}`, increaseRow);
  const [{ total }] = await query(db, sql`select count(*)::int as total from quota_increase_requests q ${cond}`, z.object({ total: z.number() }));
  return { items, total, nextOffset: input.offset + items.length < total ? input.offset + items.length : null };
}

async function decide(tx: DbOrTx, id: string, status: 'Approved' | 'Rejected', actor: Actor, reason: string | null, approvedAmount: number | null) {
  const [row] = await query(
    tx,
    sql`update quota_increase_requests
        set status = ${status}, decided_by = ${actor.label}, decided_at = now(), decision_reason = ${reason}, approved_amount = ${approvedAmount}
        where id = ${id} and status = 'Pending'
        returning id, project_id as "projectId", resource_type as "resourceType", amount::float8 as amount`,
    z.object({ id: z.string(), projectId: z.string(), resourceType: z.string(), amount: z.number() }),
  );
  if (!row) {
    const current = await getIncrease(tx, id);
    throw new DomainError('Conflict', `increase request ${id} was already ${current.status.toLowerCase()} by ${current.decidedBy ?? 'someone'}`, 'id');
  }
  return row;
}

/**
 * Approves a pending request: in one transaction the request is marked Approved and a grant of the
 * requested (or the operator's) amount is created for the project, so its bucket's limit grows at
 * once. Deciding twice is a 409.
 */
export async function approveIncreaseRequest(db: DbOrTx, input: { id: string; amount?: number; reason?: string }, actor: Actor): Promise<IncreaseView> {
  return db.transaction(async (tx) => {
    const pending = await getIncrease(tx, input.id);
    const amount = input.amount ?? pending.amount;
    const row = await decide(tx, input.id, 'Approved', actor, input.reason?.trim() || null, amount);
    const { grant } = await createGrantTx(
      tx,
      {
        projectId: row.projectId,
        name: `increase-${row.id.slice(0, 8)}`,
        allowances: [{ resourceType: row.resourceType, amount }],
        source: 'IncreaseRequest',
        sourceRef: row.id,
      },
      actor,
    );
    await tx.execute(sql`update quota_increase_requests set grant_id = ${grant.id} where id = ${row.id}`);
    await recordEvent(tx, {
      actor,
      projectId: row.projectId,
      action: 'quota.increase.approve',
      objectType: 'quotaincreaserequest',
      objectId: row.id,
      objectName: row.resourceType,
      after: { amount, grant: grant.name },
      reason: input.reason?.trim() || null,
    });
    return getIncrease(tx, row.id);
  });
}

/** Rejects a pending request with a reason the tenant sees. */
export async function rejectIncreaseRequest(db: DbOrTx, input: { id: string; reason: string }, actor: Actor): Promise<IncreaseView> {
  const reason = input.reason.trim();
  if (!reason) throw new DomainError('ValidationFailed', 'say why the request is rejected', 'reason');
  return db.transaction(async (tx) => {
    const row = await decide(tx, input.id, 'Rejected', actor, reason, null);
    await recordEvent(tx, {
      actor,
      projectId: row.projectId,
      action: 'quota.increase.reject',
      objectType: 'quotaincreaserequest',
      objectId: row.id,
      objectName: row.resourceType,
      reason,
    });
    return getIncrease(tx, row.id);
  });
}
