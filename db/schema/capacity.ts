import { index, integer, numeric, pgTable, primaryKey, smallint, text, timestamp, uuid } from 'drizzle-orm/pg-core';
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
