import { and, desc, eq, gte, ilike, lt, lte, or, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { events } from '@/db/schema';

/** Who did something: a signed-in user, an API token, or the system (a job, the CLI, the seed). */
export type Actor =
  | { type: 'user'; id: string; label: string }
  /** `userId`: the operator an operator token acts for (project tokens act for no user). */
  | { type: 'token'; id: string; label: string; userId?: string }
  | { type: 'system'; label: string };

export const systemActor = (label: string): Actor => ({ type: 'system', label });

/** The actor as the events table stores it (`actor_type`, `actor_id`, `actor_label`); SQL functions that write events take this. */
export function eventActor(actor: Actor): { type: Actor['type']; id: string | null; label: string } {
  return { type: actor.type, id: actor.type === 'system' ? null : actor.id, label: actor.label };
}

export interface EventInput {
  actor: Actor;
  projectId?: string | null;
  action: string;
  objectType: string;
  objectId?: string | null;
  objectName?: string | null;
  reason?: string | null;
  before?: unknown;
  after?: unknown;
}

/**
 * Appends one row to the audit log. Call it inside the transaction that makes the change, so the
 * log and the state cannot disagree.
 */
export async function recordEvent(db: DbOrTx, input: EventInput): Promise<void> {
  const actor = eventActor(input.actor);
  await db.insert(events).values({
    actorType: actor.type,
    actorId: actor.id,
    actorLabel: actor.label,
    projectId: input.projectId ?? null,
    action: input.action,
    objectType: input.objectType,
    objectId: input.objectId ?? null,
    objectName: input.objectName ?? null,
    reason: input.reason ?? null,
    before: input.before ?? null,
    after: input.after ?? null,
  });
}

export interface EventFilter {
  projectId?: string;
  action?: string;
  objectType?: string;
  objectId?: string;
  actor?: string;
  search?: string;
  since?: Date;
  until?: Date;
  /** Keyset cursor: return events with id below this. */
  cursor?: number;
  limit: number;
}

/** Lists audit events newest first, keyset-paginated by id. */
export async function listEvents(db: DbOrTx, filter: EventFilter) {
  const where: SQL[] = [];
  if (filter.projectId) where.push(eq(events.projectId, filter.projectId));
  if (filter.action) where.push(ilike(events.action, `${filter.action}%`));
  if (filter.objectType) where.push(eq(events.objectType, filter.objectType));
  if (filter.objectId) where.push(eq(events.objectId, filter.objectId));
  if (filter.actor) where.push(ilike(events.actorLabel, `%${filter.actor}%`));
  if (filter.search) {
    const term = `%${filter.search}%`;
    where.push(or(ilike(events.objectName, term), ilike(events.reason, term), ilike(events.action, term))!);
  }
  if (filter.since) where.push(gte(events.at, filter.since));
  if (filter.until) where.push(lte(events.at, filter.until));
  if (filter.cursor) where.push(lt(events.id, filter.cursor));
  const rows = await db
    .select({
      id: events.id,
      at: events.at,
      actorType: events.actorType,
      actorLabel: events.actorLabel,
      projectId: events.projectId,
      action: events.action,
      objectType: events.objectType,
      objectId: events.objectId,
      objectName: events.objectName,
      reason: events.reason,
      before: events.before,
      after: events.after,
    })
    .from(events)
    .where(where.length ? and(...where) : undefined)
    .orderBy(desc(events.id))
    .limit(filter.limit + 1);
  const hasMore = rows.length > filter.limit;
  const items = hasMore ? rows.slice(0, filter.limit) : rows;
  return { items, nextCursor: hasMore ? items[items.length - 1].id : null };
}
