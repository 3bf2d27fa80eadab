import { sql } from 'drizzle-orm';
import { check, index, integer, pgEnum, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/**
 * Membership roles, ordered from least to most privileged (see `roleRank`): `member` is an
 * organization role only (with `owner`); projects hold `viewer`, `editor` and `owner`.
 */
export const memberRole = pgEnum('member_role', ['member', 'viewer', 'editor', 'owner']);
/** Platform-wide roles, held by staff rather than tenants. */
export const platformRole = pgEnum('platform_role', ['operator', 'qa', 'admin']);

export const organizations = pgTable('organizations', {
  id: uuid('id').primaryKey().defaultRandom(),
  slug: text('slug').notNull().unique(),
  name: text('name').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * The tenant boundary: every tenant row carries a project id. Slugs are globally unique.
 *
 * `phase` is `Active`, or `Deleting` from the moment an owner or operator asks for deletion: reads
 * still work, creates are refused (a trigger: server/tenancy/sql/project_refuse_new_objects.sql), and the `project__delete` job
 * releases everything. When nothing is left the row is deleted (the audit log keeps its history:
 * `events.project_id` has no foreign key).
 */
export const projects = pgTable(
  'projects',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id),
    slug: text('slug').notNull().unique(),
    name: text('name').notNull(),
    /** Free text its owners give it (shown in the console and over REST). */
    description: text('description').notNull().default(''),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    phase: text('phase').notNull().default('Active'),
    deletionRequestedAt: timestamp('deletion_requested_at', { withTimezone: true }),
    /** Who asked for the deletion (audit label, captured at request time). */
    deletionRequestedBy: text('deletion_requested_by'),
    /** Deletion passes that ended with something still waiting: the exponent of the pass backoff. */
    deletionAttempts: integer('deletion_attempts').notNull().default(0),
    /** When the next deletion pass is scheduled (absent while one runs or none is needed). */
    deletionNextPassAt: timestamp('deletion_next_pass_at', { withTimezone: true }),
  },
  (t) => [
    check('projects_phase', sql`${t.phase} in ('Active', 'Deleting')`),
    check('projects_deletion_requested', sql`(${t.phase} = 'Deleting') = (${t.deletionRequestedAt} is not null)`),
    index('projects_deleting')
      .on(t.phase)
      .where(sql`${t.phase} <> 'Active'`),
  ],
);

/**
 * What a deleting project still waits for, one row per object the last deletion pass could not
 * release yet: which dependency it waits on (`provider` for a machine whose cleanup goes through the
 * provider), how often that dependency was tried for it, when the next try is due and the last
 * error. Rewritten by every pass (rows of released objects disappear); gone with the project.
 */
export const projectDeletionBlockers = pgTable(
  'project_deletion_blockers',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** `Machine` today; any kind whose release needs an outside party. */
    objectKind: text('object_kind').notNull(),
    objectId: text('object_id').notNull(),
    objectName: text('object_name').notNull(),
    /** The dependency: `provider` (the machine provider), or `fleet` (the machine reconciler itself, mid-step). */
    waitingOn: text('waiting_on').notNull(),
    /** What the object is doing, e.g. `Releasing: cleanup outcome unknown …`. */
    status: text('status').notNull(),
    /** Calls made to the dependency for this object that did not settle it (the machine's cleanup retries). */
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    lastError: text('last_error'),
    /** When this object was first seen waiting. */
    since: timestamp('since', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.objectKind, t.objectId] })],
);

/** How an account came to be: made by an administrator (console, CLI), the demo seed, a first OIDC sign-in, or an invitation link. */
export const userOrigins = ['admin', 'seed', 'oidc', 'invitation'] as const;
export type UserOrigin = (typeof userOrigins)[number];
/**
 * Who showed that a user's e-mail address is theirs: an administrator or the seed that made the
 * account (they vouch for the address), the OIDC provider (a verified e-mail claim), or the
 * holder following an invitation link mailed to the address.
 */
export const emailVerifications = ['admin', 'seed', 'oidc', 'invitation-mail'] as const;
export type EmailVerification = (typeof emailVerifications)[number];

export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** Always stored lower-cased; sign-in compares lower-cased input. */
    email: text('email').notNull().unique(),
    name: text('name').notNull(),
    /** `scrypt$N$r$p$salt$hash` (base64); null for users who only sign in through OIDC. */
    passwordHash: text('password_hash'),
    platformRoles: platformRole('platform_roles')
      .array()
      .notNull()
      .default(sql`'{}'::platform_role[]`),
    disabledAt: timestamp('disabled_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** One of `userOrigins`. */
    createdVia: text('created_via').$type<UserOrigin>().notNull().default('admin'),
    /**
     * When and by what (`emailVerifications`) the e-mail address was shown to be the user's; both
     * null while it is not. Invitations are accepted only by verified users, and an OIDC sign-in
     * never lands in an unverified account (server/tenancy/oidc.ts).
     */
    emailVerifiedAt: timestamp('email_verified_at', { withTimezone: true }),
    emailVerifiedBy: text('email_verified_by').$type<EmailVerification>(),
  },
  (t) => [
    check('users_created_via', sql`${t.createdVia} in ('admin', 'seed', 'oidc', 'invitation')`),
    check('users_email_verified_by', sql`${t.emailVerifiedBy} in ('admin', 'seed', 'oidc', 'invitation-mail')`),
    check('users_email_verified', sql`(${t.emailVerifiedAt} is null) = (${t.emailVerifiedBy} is null)`),
  ],
);

/**
 * A role held on an organization (`owner`: owns all its projects; `member`: creates projects in it)
 * or on one project (`viewer`, `editor`, `owner`). Exactly one of `organizationId` / `projectId` is set.
 */
export const memberships = pgTable(
  'memberships',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    organizationId: uuid('organization_id').references(() => organizations.id, { onDelete: 'cascade' }),
    projectId: uuid('project_id').references(() => projects.id, { onDelete: 'cascade' }),
    role: memberRole('role').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check('membership_scope', sql`(${t.organizationId} is null) <> (${t.projectId} is null)`),
    check(
      'memberships_role_scope',
      sql`CASE WHEN ${t.organizationId} IS NOT NULL THEN ${t.role}::text IN ('member', 'owner') ELSE ${t.role}::text <> 'member' END`,
    ),
    uniqueIndex('memberships_user_org')
      .on(t.userId, t.organizationId)
      .where(sql`${t.organizationId} is not null`),
    uniqueIndex('memberships_user_project')
      .on(t.userId, t.projectId)
      .where(sql`${t.projectId} is not null`),
    index('memberships_project').on(t.projectId),
  ],
);

/**
 * What an API token acts for: `project` tokens for one project (optionally one cluster), `operator`
 * tokens for one platform operator (no project: they act on the operator routes only), `user`
 * tokens for the user who created them, with that user's current memberships (the tenancy routes:
 * organizations, projects, members), never more.
 */
export const tokenKind = pgEnum('token_kind', ['project', 'operator', 'user']);

/**
 * Bearer tokens for machine clients (CNI plugin, automation). A project token is bound to one
 * project and optionally one cluster; an operator token to the platform operator it acts for, and
 * works only while that user holds the operator (or admin) role and is not disabled. The check
 * constraint ties each kind to its scope. Only the SHA-256 of the secret is stored; `prefix` is the
 * first characters, shown in lists so people can tell tokens apart.
 */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    kind: tokenKind('kind').notNull().default('project'),
    /** Set exactly for project tokens. */
    projectId: uuid('project_id').references(() => projects.id, { onDelete: 'cascade' }),
    /** When set (project tokens only), the token may act only for this cluster (by name, within the project). */
    clusterName: text('cluster_name'),
    /** Set exactly for operator tokens: the operator the token acts for. */
    userId: uuid('user_id').references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    /** The project role of a project token; unused by operator tokens (they act with their user's platform role). */
    role: memberRole('role').notNull().default('editor'),
    /**
     * Who created the token. A project token acts with no more than its creator's current rights in
     * the project (server/tenancy/sql/api_token_role.sql); deleting the creator revokes it (a trigger) before
     * this is set null. Null from the start for tokens nobody created (the CLI, the seed): they act
     * with their own role.
     */
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [
    index('api_tokens_project').on(t.projectId),
    index('api_tokens_user')
      .on(t.userId)
      .where(sql`${t.userId} is not null`),
    index('api_tokens_created_by')
      .on(t.createdBy)
      .where(sql`${t.createdBy} is not null`),
    // `kind::text`: the check names the `user` value as text, so the migration that adds the value can add the check too.
    check(
      'api_tokens_kind_scope',
      sql`(${t.kind}::text = 'project' and ${t.projectId} is not null and ${t.userId} is null)
       or (${t.kind}::text in ('operator', 'user') and ${t.projectId} is null and ${t.userId} is not null and ${t.clusterName} is null)`,
    ),
    // A token's role is a project role (`member` is an organization role).
    check('api_tokens_role_project', sql`${t.role}::text <> 'member'`),
  ],
);

/**
 * Sign-in throttling state, one row per key: `account:<client> <e-mail>` (guesses at one account
 * from one client) or `client:<client>` (guesses from one client at any account). `failures`
 * counts admitted attempts not yet cleared by a success; while `blocked_until` is in the future the
 * key's attempts are refused unchecked. Rows idle past the forget period are swept.
 */
export const signInThrottle = pgTable(
  'sign_in_throttle',
  {
    key: text('key').primaryKey(),
    failures: integer('failures').notNull().default(0),
    lastFailureAt: timestamp('last_failure_at', { withTimezone: true }).notNull().defaultNow(),
    blockedUntil: timestamp('blocked_until', { withTimezone: true }),
  },
  (t) => [index('sign_in_throttle_last_failure').on(t.lastFailureAt)],
);

/**
 * The audit of failed sign-ins, aggregated: one row per account and hour, however many tries.
 * `account` is the e-mail of an existing user, or '' for all e-mails that match no user (so
 * guessing at made-up addresses cannot grow the table beyond one row an hour).
 */
export const signInFailures = pgTable(
  'sign_in_failures',
  {
    account: text('account').notNull(),
    windowStart: timestamp('window_start', { withTimezone: true }).notNull(),
    userId: uuid('user_id').references(() => users.id, { onDelete: 'set null' }),
    /** Attempts whose password was checked and wrong. */
    failures: integer('failures').notNull().default(0),
    /** Attempts refused unchecked because their client was throttled. */
    refused: integer('refused').notNull().default(0),
    lastClient: text('last_client').notNull(),
    firstAt: timestamp('first_at', { withTimezone: true }).notNull().defaultNow(),
    lastAt: timestamp('last_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.account, t.windowStart] }), index('sign_in_failures_window').on(t.windowStart)],
);

/**
 * A console session. Its id travels in the session JWT and every request looks it up (one indexed
 * read), so revoking it (`revoked_at`) ends the session at once; a session unseen for the session
 * lifetime is over too. Rows past that are pruned when their user next signs in.
 */
export const sessions = pgTable(
  'sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** Advanced at most once a minute, so a busy session does not write on every request. */
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
    userAgent: text('user_agent').notNull(),
    /** The client address at sign-in (through trusted proxies only, see server/http/client-address.ts). */
    address: text('address').notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('sessions_user').on(t.userId, t.lastSeenAt)],
);

/**
 * An invitation to an organization or a project (exactly one of the two) for an e-mail address,
 * with the role the invitee gets. Two secrets, each shown once and stored as its SHA-256 only: the
 * inviter's link and the mailed link.
 * Single use: accepting sets `accepted_at` in a conditional update (a second acceptance finds
 * none); it expires at `expires_at` and owners can revoke it before.
 */
export const invitations = pgTable(
  'invitations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    organizationId: uuid('organization_id').references(() => organizations.id, { onDelete: 'cascade' }),
    projectId: uuid('project_id').references(() => projects.id, { onDelete: 'cascade' }),
    /** Lower-cased, as `users.email`. */
    email: text('email').notNull(),
    role: memberRole('role').notNull(),
    /** The hash of the link the inviter is shown (copyable): it joins only a user who proves the address otherwise. */
    tokenHash: text('token_hash').notNull().unique(),
    /**
     * The hash of the link mailed to the invited address (null when mail is not configured):
     * following it proves control of the mailbox, so it may create a password account.
     */
    mailTokenHash: text('mail_token_hash').unique(),
    /** When the mail with the link was handed to the SMTP server. */
    mailedAt: timestamp('mailed_at', { withTimezone: true }),
    /** The first characters of the secret, to tell invitations apart in lists. */
    prefix: text('prefix').notNull(),
    invitedBy: uuid('invited_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    acceptedAt: timestamp('accepted_at', { withTimezone: true }),
    acceptedBy: uuid('accepted_by').references(() => users.id, { onDelete: 'set null' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [
    check('invitations_scope', sql`(${t.organizationId} is null) <> (${t.projectId} is null)`),
    check(
      'invitations_role_scope',
      sql`CASE WHEN ${t.organizationId} IS NOT NULL THEN ${t.role}::text IN ('member', 'owner') ELSE ${t.role}::text <> 'member' END`,
    ),
    index('invitations_project')
      .on(t.projectId)
      .where(sql`${t.projectId} is not null`),
    index('invitations_organization')
      .on(t.organizationId)
      .where(sql`${t.organizationId} is not null`),
  ],
);

/**
 * A one-time password-reset link an administrator made for a user: only the SHA-256 of its secret
 * is stored; used once (`used_at`, set by a conditional update), or never after `expires_at`.
 */
export const passwordResets = pgTable(
  'password_resets',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull().unique(),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [index('password_resets_user').on(t.userId)],
);
