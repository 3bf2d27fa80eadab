import { sql } from 'drizzle-orm';
import { bigint, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/** Process-wide settings shared by every replica (e.g. the generated session secret). */
export const settings = pgTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** One row per running worker process, refreshed while it runs; `/readyz` reads the newest. */
export const workerHeartbeats = pgTable('worker_heartbeats', {
  workerId: text('worker_id').primaryKey(),
  startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
  lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
  /** graphile-worker's ids for this process's workers, so jobs locked by a dead process can be unlocked. */
  graphileWorkerIds: text('graphile_worker_ids')
    .array()
    .notNull()
    .default(sql`'{}'::text[]`),
});

/**
 * Counters that must add up across processes (job outcomes, retries by reason). `labels` is the
 * Prometheus label set rendered canonically (sorted keys), so (metric, labels) identifies a series.
 */
export const metricCounters = pgTable(
  'metric_counters',
  {
    metric: text('metric').notNull(),
    labels: text('labels').notNull(),
    value: bigint('value', { mode: 'number' }).notNull().default(0),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.metric, t.labels] })],
);
