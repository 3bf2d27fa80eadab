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
    /** Object first, then what happened: `token.create`, `ipclaim.delete`, `machine.release.requested`. */
    action: text('action').notNull(),
    objectType: text('object_type').notNull(),
    objectId: text('object_id'),
    objectName: text('object_name'),
    reason: text('reason'),
    before: jsonb('before'),
    after: jsonb('after'),
  },
  // The audit log pages newest first by (at, id) (server/audit/events.ts): one index per filter the
  // console offers, each ending in (at, id), so a filtered page is an index range scan, not a sort.
  (t) => [
    index('events_at_id').on(t.at, t.id),
    index('events_project_at_id').on(t.projectId, t.at, t.id),
    index('events_object_type_at_id').on(t.objectType, t.at, t.id),
    index('events_action_at_id').on(t.action, t.at, t.id),
    index('events_actor_at_id').on(t.actorLabel, t.at, t.id),
    index('events_object').on(t.objectType, t.objectId),
  ],
);
