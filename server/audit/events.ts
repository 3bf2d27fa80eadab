import { and, desc, eq, gte, ilike, inArray, like, lte, or, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { events, projects } from '@/db/schema';
import { DomainError } from '@/server/errors';

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
  /** Exact action (`machine.release.requested`), or every action under a prefix when it ends in a dot (`quota.`). */
  action?: string;
  objectType?: string;
  objectId?: string;
  /** Exact actor label: an e-mail, a token name or a job name. */
  actor?: string;
  /** Substring of the object name or the reason (for one project's timeline: it is not indexed). */
  search?: string;
  since?: Date;
  until?: Date;
  /** Keyset cursor from the previous page's `nextCursor`: the page continues below that event. */
  cursor?: string;
  limit: number;
}

/** `<microseconds since the epoch>.<id>`: exact for PostgreSQL's microsecond timestamps, which a JS Date is not. */
export const EVENT_CURSOR = /^\d{1,17}\.\d{1,18}$/;

function cursorCondition(cursor: string): SQL {
  if (!EVENT_CURSOR.test(cursor)) throw new DomainError('ValidationFailed', 'cursor: is not a cursor returned by this list', 'cursor');
  const [micros, id] = cursor.split('.');
  return sql`(${events.at}, ${events.id}) < (timestamptz 'epoch' + ${micros}::bigint * interval '1 microsecond', ${id}::bigint)`;
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => '\\' + c);

/**
 * Lists audit events newest first, keyset-paginated by (at, id). Each filter the console offers has
 * an index ending in (at, id) (db/schema/events.ts), so a page reads an index range whatever the
 * size of the log. Each item carries its project's slug (null for events outside a project, or of
 * a project since deleted).
 */
export async function listEvents(db: DbOrTx, filter: EventFilter) {
  const where: SQL[] = [];
  if (filter.projectId) where.push(eq(events.projectId, filter.projectId));
  if (filter.action) {
    where.push(filter.action.endsWith('.') ? like(events.action, `${escapeLike(filter.action)}%`) : eq(events.action, filter.action));
  }
  if (filter.objectType) where.push(eq(events.objectType, filter.objectType));
  if (filter.objectId) where.push(eq(events.objectId, filter.objectId));
  if (filter.actor) where.push(eq(events.actorLabel, filter.actor));
  if (filter.search) {
    const term = `%${escapeLike(filter.search)}%`;
    where.push(or(ilike(events.objectName, term), ilike(events.reason, term), ilike(events.action, term))!);
  }
  if (filter.since) where.push(gte(events.at, filter.since));
  if (filter.until) where.push(lte(events.at, filter.until));
  if (filter.cursor) where.push(cursorCondition(filter.cursor));
  const rows = await db
    .select({
      id: events.id,
      at: events.at,
      atMicros: sql<string>`(extract(epoch from ${events.at}) * 1000000)::bigint::text`,
      actorType: events.actorType,
      actorId: events.actorId,
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
    .orderBy(desc(events.at), desc(events.id))
    .limit(filter.limit + 1);
  const hasMore = rows.length > filter.limit;
  const page = hasMore ? rows.slice(0, filter.limit) : rows;
  const projectIds = [...new Set(page.map((r) => r.projectId).filter((id): id is string => id !== null))];
  const slugs = new Map(
    projectIds.length
      ? (await db.select({ id: projects.id, slug: projects.slug }).from(projects).where(inArray(projects.id, projectIds))).map((p) => [p.id, p.slug])
      : [],
  );
  const items = page.map(({ atMicros, ...r }) => ({ ...r, projectSlug: r.projectId ? (slugs.get(r.projectId) ?? null) : null }));
  const last = page[page.length - 1];
  return { items, nextCursor: hasMore ? `${last.atMicros}.${last.id}` : null };
}

export type AuditEvent = Awaited<ReturnType<typeof listEvents>>['items'][number];

/**
 * The values the audit log's filters offer: the actions and object kinds that occur in the log
 * (each read by skipping through its index, one probe per distinct value, not by scanning the log)
 * and the projects.
 */
export async function auditFilterChoices(db: DbOrTx) {
  const distinct = async (column: 'action' | 'object_type') => {
    const rows = await db.execute<{ v: string }>(sql`
      WITH RECURSIVE d(v) AS (
        (SELECT ${sql.identifier(column)} FROM events ORDER BY 1 LIMIT 1)
        UNION ALL
        SELECT (SELECT ${sql.identifier(column)} FROM events WHERE ${sql.identifier(column)} > d.v ORDER BY 1 LIMIT 1) FROM d WHERE d.v IS NOT NULL
      )
      SELECT v FROM d WHERE v IS NOT NULL LIMIT 500`);
    return Array.from(rows as Iterable<{ v: string }>, (r) => r.v);
  };
  const [actions, objectTypes, projectRows] = await Promise.all([
    distinct('action'),
    distinct('object_type'),
    db.select({ id: projects.id, slug: projects.slug }).from(projects).orderBy(projects.slug).limit(2000),
  ]);
  return { actions, objectTypes, projects: projectRows };
}
