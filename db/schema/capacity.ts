import { sql } from 'drizzle-orm';
import {
  bigserial,
  boolean,
  check,
  doublePrecision,
  foreignKey,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { projects } from './tenancy';

/**
 * One utilization series: a pool, a network's family, a cluster's pod addresses or node blocks (per
 * family), or an allowance bucket. Created by the sampler the first time it sees the counter
 * (server/capacity/sql/capacity_sample.sql); `key` names it (`pool:<id>`, `network:<id>:4`,
 * `cluster-pods:<id>:6`, `cluster-blocks:<id>:4`, `bucket:<project>:<resource type>`). The series and
 * its samples go with their project; a deleted network's or pool's history stays until it ages out.
 */
export const capacitySeries = pgTable(
  'capacity_series',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    key: text('key').notNull().unique(),
    /** `pool`, `network`, `cluster-pods`, `cluster-blocks` or `bucket`. */
    kind: text('kind').notNull(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** The pool, network or cluster; for a bucket, the project. */
    objectId: uuid('object_id').notNull(),
    /** The network the pool or cluster belongs to (null for buckets). */
    networkId: uuid('network_id'),
    /** 4 or 6 for address series, null for buckets. */
    family: smallint('family'),
    /** The bucket's resource type (null for address series). */
    resourceType: text('resource_type'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('capacity_series_object').on(t.objectId), index('capacity_series_project').on(t.projectId, t.kind)],
);

/**
 * A series' utilization over one period of `step` seconds starting at `at`: 60 (kept 2 days),
 * 3600 (90 days) and 86400 (3 years). Every sample writes the three periods it falls in, so a
 * coarser period is current as soon as a finer one is. `used` is the highest value sampled in the
 * period (capacity planning wants the peak), `capacity` the value at its latest sample.
 */
export const capacitySamples = pgTable(
  'capacity_samples',
  {
    /** The series (no foreign key: a trigger deletes a series' samples with it; see the migration). */
    seriesId: integer('series_id').notNull(),
    step: integer('step').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull(),
    used: numeric('used', { precision: 40, scale: 0 }).notNull(),
    capacity: numeric('capacity', { precision: 40, scale: 0 }).notNull(),
  },
  // The primary key also INCLUDEs used and capacity (migration 0036, which drizzle cannot express):
  // a chart's read is an index-only scan.
  (t) => [primaryKey({ columns: [t.seriesId, t.step, t.at] })],
);

/** The nil UUID standing for "none" in the unique keys below (a rule of the whole project, an operators' endpoint). */
const NONE = sql`'00000000-0000-0000-0000-000000000000'::uuid`;

/**
 * Alert thresholds for a project's series (`objectId` null: all of them) or one object's (a pool,
 * network, cluster, or the project itself for its buckets). Absent rules mean the defaults: warning
 * at 80 %, critical at 95 %, full within 7 days, 5 points of hysteresis (server/capacity/alerts.ts).
 */
export const capacityAlertRules = pgTable(
  'capacity_alert_rules',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id').notNull(),
    objectId: uuid('object_id'),
    warningPercent: numeric('warning_percent', { precision: 5, scale: 2 })
      .notNull()
      .default(sql`80`),
    criticalPercent: numeric('critical_percent', { precision: 5, scale: 2 })
      .notNull()
      .default(sql`95`),
    forecastDays: integer('forecast_days').notNull().default(7),
    hysteresisPercent: numeric('hysteresis_percent', { precision: 5, scale: 2 })
      .notNull()
      .default(sql`5`),
    enabled: boolean('enabled').notNull().default(true),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    foreignKey({ name: 'capacity_alert_rules_project_id_fkey', columns: [t.projectId], foreignColumns: [projects.id] }).onDelete('cascade'),
    check(
      'capacity_alert_rules_sane',
      sql`${t.warningPercent} > 0 and ${t.warningPercent} <= ${t.criticalPercent} and ${t.criticalPercent} <= 100 and ${t.hysteresisPercent} >= 0 and ${t.hysteresisPercent} < ${t.warningPercent} and ${t.forecastDays} >= 0`,
    ),
    uniqueIndex('capacity_alert_rules_scope').on(t.projectId, sql`coalesce(${t.objectId}, ${NONE})`),
  ],
);

/**
 * The state of each condition (`warning`, `critical` or `forecast`) of each series, one row per
 * (series, condition) once it first fired. Transitions are audit events and webhook deliveries.
 */
export const capacityAlerts = pgTable(
  'capacity_alerts',
  {
    seriesId: integer('series_id').notNull(),
    condition: text('condition').notNull(),
    projectId: uuid('project_id').notNull(),
    firing: boolean('firing').notNull(),
    since: timestamp('since', { withTimezone: true }).notNull(),
    value: doublePrecision('value').notNull(),
    threshold: doublePrecision('threshold').notNull(),
    message: text('message').notNull(),
    transitions: integer('transitions').notNull().default(1),
  },
  (t) => [
    primaryKey({ name: 'capacity_alerts_pk', columns: [t.seriesId, t.condition] }),
    foreignKey({ name: 'capacity_alerts_series_id_fkey', columns: [t.seriesId], foreignColumns: [capacitySeries.id] }).onDelete('cascade'),
    foreignKey({ name: 'capacity_alerts_project_id_fkey', columns: [t.projectId], foreignColumns: [projects.id] }).onDelete('cascade'),
    index('capacity_alerts_project').on(t.projectId, t.firing),
  ],
);

/** A webhook endpoint of a project, or of the operators (`projectId` null: every project's alerts). */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id'),
    name: text('name').notNull(),
    url: text('url').notNull(),
    /** The HMAC-SHA256 signing secret, shown once when the endpoint is registered. */
    secret: text('secret').notNull(),
    enabled: boolean('enabled').notNull().default(true),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    foreignKey({ name: 'webhook_endpoints_project_id_fkey', columns: [t.projectId], foreignColumns: [projects.id] }).onDelete('cascade'),
    uniqueIndex('webhook_endpoints_scope_name').on(sql`coalesce(${t.projectId}, ${NONE})`, t.name),
  ],
);

/**
 * The outbox and delivery log: one row per (endpoint, alert transition), written in the transaction
 * of the transition. `eventId` is the idempotency key a receiver sees on every attempt.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    endpointId: uuid('endpoint_id').notNull(),
    eventId: uuid('event_id').notNull().defaultRandom(),
    eventType: text('event_type').notNull(),
    payload: jsonb('payload').notNull(),
    /** `Pending` until an attempt succeeds, then `Delivered`. */
    state: text('state').notNull().default('Pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
  },
  (t) => [
    foreignKey({ name: 'webhook_deliveries_endpoint_id_fkey', columns: [t.endpointId], foreignColumns: [webhookEndpoints.id] }).onDelete('cascade'),
    uniqueIndex('webhook_deliveries_event').on(t.endpointId, t.eventId),
    index('webhook_deliveries_pending')
      .on(t.endpointId, t.id)
      .where(sql`${t.state} = 'Pending'`),
    index('webhook_deliveries_log').on(t.endpointId, t.createdAt),
  ],
);
