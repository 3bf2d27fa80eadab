import { bigserial, index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * The append-only audit log: every state-changing action writes one row. A trigger (hand-written
 * in the migrations) refuses UPDATE and DELETE. `projectId` has no foreign key on purpose: the
 * history of a deleted project must outlive it.
 */
export const events = pgTable(
  'events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    /** `user`, `token` or `system`. */
    actorType: text('actor_type').notNull(),
    actorId: text('actor_id'),
    /** Human-readable actor (e-mail, token name, job name) captured at write time. */
    actorLabel: text('actor_label').notNull(),
    projectId: uuid('project_id'),
    /** Verb-first, dotted: `token.create`, `ipclaim.delete`, `auth.signIn.failed`. */
    action: text('action').notNull(),
    objectType: text('object_type').notNull(),
    objectId: text('object_id'),
    objectName: text('object_name'),
    reason: text('reason'),
    before: jsonb('before'),
    after: jsonb('after'),
  },
  (t) => [index('events_project_at').on(t.projectId, t.at), index('events_object').on(t.objectType, t.objectId), index('events_at').on(t.at)],
);
