import { sql } from 'drizzle-orm';
import { check, index, integer, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/** Membership roles, ordered from least to most privileged (see `roleRank`). */
export const memberRole = pgEnum('member_role', ['viewer', 'editor', 'owner']);
/** Platform-wide roles, held by staff rather than tenants. */
export const platformRole = pgEnum('platform_role', ['operator', 'qa', 'admin']);

export const organizations = pgTable('organizations', {
  id: uuid('id').primaryKey().defaultRandom(),
  slug: text('slug').notNull().unique(),
  name: text('name').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** The tenant boundary: every tenant row carries a project id. Slugs are globally unique. */
export const projects = pgTable('projects', {
  id: uuid('id').primaryKey().defaultRandom(),
  organizationId: uuid('organization_id').notNull().references(() => organizations.id),
  slug: text('slug').notNull().unique(),
  name: text('name').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const users = pgTable('users', {
  id: uuid('id').primaryKey().defaultRandom(),
  /** Always stored lower-cased; sign-in compares lower-cased input. */
  email: text('email').notNull().unique(),
  name: text('name').notNull(),
  /** `scrypt$N$r$p$salt$hash` (base64); null for users who only sign in through OIDC. */
  passwordHash: text('password_hash'),
  platformRoles: platformRole('platform_roles').array().notNull().default(sql`'{}'::platform_role[]`),
  disabledAt: timestamp('disabled_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * A role held on an organization (applies to all its projects) or on one project.
 * Exactly one of `organizationId` / `projectId` is set.
 */
export const memberships = pgTable(
  'memberships',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    organizationId: uuid('organization_id').references(() => organizations.id, { onDelete: 'cascade' }),
    projectId: uuid('project_id').references(() => projects.id, { onDelete: 'cascade' }),
    role: memberRole('role').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check('membership_scope', sql`(${t.organizationId} is null) <> (${t.projectId} is null)`),
    uniqueIndex('memberships_user_org').on(t.userId, t.organizationId).where(sql`${t.organizationId} is not null`),
    uniqueIndex('memberships_user_project').on(t.userId, t.projectId).where(sql`${t.projectId} is not null`),
    index('memberships_project').on(t.projectId),
  ],
);

/**
 * Bearer tokens for machine clients (CNI plugin, automation). Bound to one project and optionally
 * one cluster. Only the SHA-256 of the secret is stored; `prefix` is the first characters, shown in
 * lists so people can tell tokens apart.
 */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
    /** When set, the token may act only for this cluster (by name, within the project). */
    clusterName: text('cluster_name'),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    role: memberRole('role').notNull().default('editor'),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('api_tokens_project').on(t.projectId)],
);

/** Failed sign-in bookkeeping per e-mail address, for throttling password guessing. */
export const signInThrottle = pgTable('sign_in_throttle', {
  key: text('key').primaryKey(),
  failures: integer('failures').notNull().default(0),
  windowStartedAt: timestamp('window_started_at', { withTimezone: true }).notNull().defaultNow(),
  lockedUntil: timestamp('locked_until', { withTimezone: true }),
});
