import { sql } from 'drizzle-orm';
import { bigint, jsonb, pgTable, primaryKey, text, timestamp, unique, uuid } from 'drizzle-orm/pg-core';
import { projects } from './tenancy';

/**
 * A project's namespaces beyond `default` (which every project has without a row): the Kubernetes
 * API's `kubectl create namespace`.
 */
export const kubeNamespaces = pgTable(
  'kube_namespaces',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    uid: uuid('uid').notNull().defaultRandom(),
    labels: jsonb('labels')
      .$type<Record<string, string>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    annotations: jsonb('annotations')
      .$type<Record<string, string>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.name] })],
);

/**
 * The Kubernetes metadata of a domain object of any kind (an IP claim, a network…): its namespace,
 * labels, annotations, finalizers, managed fields and generation (its resource version is the commit position of its last
 * change: docs/watch.md). The object
 * itself stays in its domain's table; `uid` is its id there. An object without a row (made through
 * REST v1 or the console) is in `default` with empty metadata; a row whose uid is not the object's
 * belongs to an earlier object of that name and is replaced.
 */
export const kubeObjects = pgTable(
  'kube_objects',
  {
    uid: uuid('uid').primaryKey(),
    /** The project; null for an object of the platform control plane (a registration, a policy…). */
    projectId: uuid('project_id').references(() => projects.id, { onDelete: 'cascade' }),
    /** The kind's group and kind, `ipam.miloapis.com/IPClaim`. */
    kind: text('kind').notNull(),
    namespace: text('namespace').notNull().default('default'),
    name: text('name').notNull(),
    labels: jsonb('labels')
      .$type<Record<string, string>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    annotations: jsonb('annotations')
      .$type<Record<string, string>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    finalizers: jsonb('finalizers')
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    /** `metadata.managedFields`: who set which fields (server-side apply), as Kubernetes writes them. */
    managedFields: jsonb('managed_fields')
      .$type<unknown[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    /**
     * `metadata.deletionTimestamp` of an object whose DELETE is held by finalizers set through the
     * API (the domain's deletion starts when the last one is removed); null otherwise.
     */
    deletionTimestamp: timestamp('deletion_timestamp', { withTimezone: true }),
    /** Bumped when the spec changes. */
    generation: bigint('generation', { mode: 'number' }).notNull().default(1),
  },
  // The platform's rows (no project) are unique among themselves too.
  (t) => [unique('kube_objects_project_kind_name').on(t.projectId, t.kind, t.namespace, t.name).nullsNotDistinct()],
);
