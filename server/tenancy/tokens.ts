import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, sql } from 'drizzle-orm';
import { Batcher, perPool } from '@/db/batch';
import { isTransaction, sidePool, type DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query } from '@/db/query';
import { apiTokens, users } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, invalid } from '@/server/errors';
import { hasPlatformRole, platformRoles, projectRoles, type PlatformRole, type ProjectRole, type SessionUser } from './roles';

const TOKEN_PREFIX = 'mrd_';

export function hashToken(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A new secret with its stored forms: shown once, only the hash and a display prefix are kept. */
function newSecret() {
  const secret = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { secret, prefix: secret.slice(0, 10), tokenHash: hashToken(secret) };
}

function checkTokenName(raw: string): string {
  const name = raw.trim();
  if (!name || name.length > 100) throw invalid('name', 'must be 1-100 characters');
  return name;
}

/**
 * Issues a bearer token for a project (optionally one cluster). Returns the secret exactly once;
 * only its SHA-256 is stored. With `createdBy` the token acts with no more than that user's rights
 * in the project at each use (server/tenancy/sql/api_token_role.sql); without, with its own role.
 */
export async function createApiToken(
  db: DbOrTx,
  input: { projectId: string; name: string; clusterName?: string | null; role?: ProjectRole; createdBy?: string | null },
  actor: Actor,
) {
  const name = checkTokenName(input.name);
  if (input.clusterName !== undefined && input.clusterName !== null && !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(input.clusterName)) {
    throw invalid('cluster', 'must be a cluster name (lower-case letters, digits, dashes)');
  }
  const { secret, prefix, tokenHash } = newSecret();
  const [row] = await db
    .insert(apiTokens)
    .values({
      kind: 'project',
      projectId: input.projectId,
      name,
      clusterName: input.clusterName ?? null,
      role: input.role ?? 'editor',
      prefix,
      tokenHash,
      createdBy: input.createdBy ?? null,
    })
    .returning({ id: apiTokens.id, name: apiTokens.name, prefix: apiTokens.prefix, clusterName: apiTokens.clusterName, createdAt: apiTokens.createdAt });
  await recordEvent(db, {
    actor,
    projectId: input.projectId,
    action: 'token.create',
    objectType: 'apiToken',
    objectId: row.id,
    objectName: name,
    after: { prefix: row.prefix, clusterName: row.clusterName, role: input.role ?? 'editor' },
  });
  return { ...row, secret };
}

/**
 * The user whose rights a token created by `actor` rests on: a signed-in user themself; for an API
 * token (a cluster registered with a project token) that token's own creator, so a token cannot
 * mint one that outlives its creator's rights; none for the system (the CLI, the seed, jobs).
 */
export async function tokenCreatorFor(db: DbOrTx, actor: Actor): Promise<string | null> {
  if (actor.type === 'user') return actor.id;
  if (actor.type === 'system') return null;
  const [row] = await db.select({ createdBy: apiTokens.createdBy }).from(apiTokens).where(eq(apiTokens.id, actor.id));
  return row?.createdBy ?? null;
}

/**
 * Tokens of a project, newest first, without secrets. `actsAs` is the role a token acts with now
 * (its own, or less when its creator's rights are less: api_token_role), null when revoked or when
 * its creator has no role in the project.
 */
export async function listApiTokens(db: DbOrTx, projectId: string) {
  return db
    .select({
      id: apiTokens.id,
      name: apiTokens.name,
      prefix: apiTokens.prefix,
      clusterName: apiTokens.clusterName,
      // A token's role is a project role (the api_tokens_role_project check).
      role: sql<ProjectRole>`${apiTokens.role}`,
      actsAs: sql<ProjectRole | null>`api_token_role(${apiTokens.id})`,
      createdAt: apiTokens.createdAt,
      lastUsedAt: apiTokens.lastUsedAt,
      revokedAt: apiTokens.revokedAt,
    })
    .from(apiTokens)
    .where(eq(apiTokens.projectId, projectId))
    .orderBy(desc(apiTokens.createdAt));
}

/** Revokes a token of `projectId`; revoking twice is a no-op, a token of another project is NotFound. */
export async function revokeApiToken(db: DbOrTx, projectId: string, tokenId: string, actor: Actor) {
  const [row] = await db
    .update(apiTokens)
    .set({ revokedAt: sql`coalesce(${apiTokens.revokedAt}, now())` })
    .where(and(eq(apiTokens.id, tokenId), eq(apiTokens.projectId, projectId)))
    .returning({ id: apiTokens.id, name: apiTokens.name });
  if (!row) throw new DomainError('NotFound', `token "${tokenId}" not found`);
  await recordEvent(db, { actor, projectId, action: 'token.revoke', objectType: 'apiToken', objectId: row.id, objectName: row.name });
  return row;
}

/** The platform role an operator token's user must hold (admin holds every role). */
const OPERATOR_ROLE: PlatformRole = 'operator';

/**
 * Issues an operator token acting for `userId`, who must be an enabled platform operator (or
 * admin); only platform operators may call this (the console's operator procedures, the admin
 * CLI). The token works only while its user keeps the role (checked on every use, see
 * `verifyApiToken`). Returns the secret exactly once.
 */
export async function createOperatorToken(db: DbOrTx, input: { userId: string; name: string; createdBy?: string | null }, actor: Actor) {
  const name = checkTokenName(input.name);
  const [user] = await db
    .select({ id: users.id, email: users.email, platformRoles: users.platformRoles, disabledAt: users.disabledAt })
    .from(users)
    .where(eq(users.id, input.userId));
  if (!user) throw new DomainError('NotFound', `user ${input.userId} not found`, 'user');
  if (user.disabledAt || !hasPlatformRole(user, OPERATOR_ROLE)) {
    throw invalid('user', `${user.email} is not an active platform operator; operator tokens act only for operators`);
  }
  return insertUserBoundToken(db, { kind: 'operator', user, name, createdBy: input.createdBy ?? null }, actor);
}

/** Stores a token acting for `user` (operator or user kind) and audits it; the secret is returned here only. */
async function insertUserBoundToken(
  db: DbOrTx,
  input: { kind: 'operator' | 'user'; user: { id: string; email: string }; name: string; createdBy: string | null },
  actor: Actor,
) {
  const { kind, user, name } = input;
  const { secret, prefix, tokenHash } = newSecret();
  const [row] = await db
    .insert(apiTokens)
    .values({ kind, userId: user.id, name, prefix, tokenHash, createdBy: input.createdBy })
    .returning({ id: apiTokens.id, name: apiTokens.name, prefix: apiTokens.prefix, createdAt: apiTokens.createdAt });
  await recordEvent(db, {
    actor,
    action: 'token.create',
    objectType: 'apiToken',
    objectId: row.id,
    objectName: name,
    after: { kind, prefix: row.prefix, user: user.email },
  });
  return { ...row, user: user.email, secret };
}

/** Every operator token (operators see and can revoke each other's), newest first, without secrets. */
export async function listOperatorTokens(db: DbOrTx) {
  return db
    .select({
      id: apiTokens.id,
      name: apiTokens.name,
      prefix: apiTokens.prefix,
      userId: apiTokens.userId,
      user: users.email,
      createdAt: apiTokens.createdAt,
      lastUsedAt: apiTokens.lastUsedAt,
      revokedAt: apiTokens.revokedAt,
    })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(eq(apiTokens.kind, 'operator'))
    .orderBy(desc(apiTokens.createdAt));
}

/** Revokes an operator token; revoking twice is a no-op, a project token's id is NotFound here. */
export async function revokeOperatorToken(db: DbOrTx, tokenId: string, actor: Actor) {
  const [row] = await db
    .update(apiTokens)
    .set({ revokedAt: sql`coalesce(${apiTokens.revokedAt}, now())` })
    .where(and(eq(apiTokens.id, tokenId), eq(apiTokens.kind, 'operator')))
    .returning({ id: apiTokens.id, name: apiTokens.name });
  if (!row) throw new DomainError('NotFound', `operator token "${tokenId}" not found`);
  await recordEvent(db, { actor, action: 'token.revoke', objectType: 'apiToken', objectId: row.id, objectName: row.name, after: { kind: 'operator' } });
  return row;
}

/**
 * Issues a user token: it acts for `userId` on the tenancy routes (organizations, projects,
 * members, invitations), with that user's memberships and platform roles as they are at each use,
 * and stops when the user is disabled or deleted. Users make their own (the console's account
 * page, the admin CLI for a user). Returns the secret exactly once.
 */
export async function createUserToken(db: DbOrTx, input: { userId: string; name: string }, actor: Actor) {
  const name = checkTokenName(input.name);
  const [user] = await db.select({ id: users.id, email: users.email, disabledAt: users.disabledAt }).from(users).where(eq(users.id, input.userId));
  if (!user) throw new DomainError('NotFound', `user ${input.userId} not found`, 'user');
  if (user.disabledAt) throw invalid('user', `${user.email} is disabled`);
  return insertUserBoundToken(db, { kind: 'user', user, name, createdBy: user.id }, actor);
}

/** A user's own user tokens, newest first, without secrets. */
export async function listUserTokens(db: DbOrTx, userId: string) {
  return db
    .select({
      id: apiTokens.id,
      name: apiTokens.name,
      prefix: apiTokens.prefix,
      createdAt: apiTokens.createdAt,
      lastUsedAt: apiTokens.lastUsedAt,
      revokedAt: apiTokens.revokedAt,
    })
    .from(apiTokens)
    .where(and(eq(apiTokens.kind, 'user'), eq(apiTokens.userId, userId)))
    .orderBy(desc(apiTokens.createdAt));
}

/** Revokes one of a user's own user tokens; revoking twice is a no-op, anyone else's is NotFound. */
export async function revokeUserToken(db: DbOrTx, userId: string, tokenId: string, actor: Actor) {
  const [row] = await db
    .update(apiTokens)
    .set({ revokedAt: sql`coalesce(${apiTokens.revokedAt}, now())` })
    .where(and(eq(apiTokens.id, tokenId), eq(apiTokens.kind, 'user'), eq(apiTokens.userId, userId)))
    .returning({ id: apiTokens.id, name: apiTokens.name });
  if (!row) throw new DomainError('NotFound', `token "${tokenId}" not found`);
  await recordEvent(db, { actor, action: 'token.revoke', objectType: 'apiToken', objectId: row.id, objectName: row.name, after: { kind: 'user' } });
  return row;
}

/**
 * A cluster token's cluster, read with the token in the same statement (it saves the CNI lease API
 * a query per call): the cluster and its network as the CNI domain's lease operations take them
 * (server/cni calls this shape `ClusterRef`; tenancy owns it because the token read fills it).
 */
export interface TokenCluster {
  id: string;
  projectId: string;
  name: string;
  networkId: string;
  networkName: string;
  nodeBlockPrefixV4: number;
  nodeBlockPrefixV6: number;
}

/** A project token: acts for one project (and, when `clusterName` is set, one cluster) with `role`. */
export interface TokenPrincipal {
  kind: 'project';
  tokenId: string;
  tokenName: string;
  projectId: string;
  projectSlug: string;
  clusterName: string | null;
  role: ProjectRole;
  /** A cluster token's cluster, read with the token (absent when the cluster does not exist). */
  cluster?: TokenCluster;
}

/** An operator token: acts for a platform operator, on no project of its own. */
export interface OperatorPrincipal {
  kind: 'operator';
  tokenId: string;
  tokenName: string;
  userId: string;
  userEmail: string;
  /** The operator's platform roles now (operator or admin among them). */
  platformRoles: PlatformRole[];
}

/** A user token: acts for its user, with the user's current memberships and platform roles. */
export interface UserPrincipal {
  kind: 'user';
  tokenId: string;
  tokenName: string;
  userId: string;
  userEmail: string;
  userName: string;
  platformRoles: PlatformRole[];
}

export type ApiPrincipal = TokenPrincipal | OperatorPrincipal | UserPrincipal;

const tokenRow = z.object({
  token_hash: z.string(),
  kind: z.enum(['project', 'operator', 'user']),
  token_id: z.string(),
  token_name: z.string(),
  project_id: z.string().nullable(),
  project_slug: z.string().nullable(),
  cluster_name: z.string().nullable(),
  /** A project token's role as it acts now (api_token_role): null when its creator has no rights left. */
  role: z.enum(projectRoles).nullable(),
  user_id: z.string().nullable(),
  user_email: z.string().nullable(),
  user_name: z.string().nullable(),
  user_roles: z.array(z.enum(platformRoles)).nullable(),
  user_disabled: z.boolean().nullable(),
  stale: z.boolean(),
  cluster_id: z.string().nullable(),
  network_id: z.string().nullable(),
  network_name: z.string().nullable(),
  node_block_prefix_v4: z.number().nullable(),
  node_block_prefix_v6: z.number().nullable(),
});
type TokenRow = z.infer<typeof tokenRow>;

/**
 * The live (unrevoked) tokens among `hashes`, with their project, user, role as it acts now and
 * (cluster tokens) cluster; refreshes stale `last_used_at`.
 */
async function tokenRows(db: DbOrTx, hashes: string[]): Promise<TokenRow[]> {
  // Hashes are hex: the array literal needs no quoting, and one statement text serves any count.
  const rows = await query(
    db,
    sql`
    select t.token_hash, t.kind, t.id as token_id, t.name as token_name, t.project_id, p.slug as project_slug, t.cluster_name,
           (select r.role from api_token_roles(t.id) r) as role,
           u.id as user_id, u.email as user_email, u.name as user_name, u.platform_roles::text[] as user_roles, u.disabled_at is not null as user_disabled,
           t.last_used_at is null or t.last_used_at < now() - interval '60 seconds' as stale,
           c.id as cluster_id, n.id as network_id, n.name as network_name, c.node_block_prefix_v4, c.node_block_prefix_v6
    from api_tokens t
    left join projects p on p.id = t.project_id
    left join users u on u.id = t.user_id
    left join clusters c on c.project_id = t.project_id and c.name = t.cluster_name
    left join networks n on n.id = c.network_id
    where t.token_hash = any(${`{${hashes.join(',')}}`}::text[]) and t.revoked_at is null`,
    tokenRow,
  );
  const stale = rows.filter((r) => r.stale).map((r) => r.token_id);
  if (stale.length > 0) await db.execute(sql`update api_tokens set last_used_at = now() where id = any(${`{${stale.join(',')}}`}::uuid[])`);
  return rows;
}

function principalOf(row: TokenRow): ApiPrincipal | undefined {
  if (row.kind === 'project') {
    if (!row.project_id || !row.project_slug || !row.role) return undefined;
    return {
      kind: 'project',
      tokenId: row.token_id,
      tokenName: row.token_name,
      projectId: row.project_id,
      projectSlug: row.project_slug,
      clusterName: row.cluster_name,
      role: row.role,
      ...(row.cluster_id && row.cluster_name && row.network_id && row.network_name
        ? {
            cluster: {
              id: row.cluster_id,
              projectId: row.project_id,
              name: row.cluster_name,
              networkId: row.network_id,
              networkName: row.network_name,
              nodeBlockPrefixV4: Number(row.node_block_prefix_v4),
              nodeBlockPrefixV6: Number(row.node_block_prefix_v6),
            },
          }
        : {}),
    };
  }
  if (!row.user_id || !row.user_email || row.user_disabled) return undefined;
  const platformRoles = row.user_roles ?? [];
  if (row.kind === 'user') {
    return {
      kind: 'user',
      tokenId: row.token_id,
      tokenName: row.token_name,
      userId: row.user_id,
      userEmail: row.user_email,
      userName: row.user_name ?? row.user_email,
      platformRoles,
    };
  }
  if (!hasPlatformRole({ platformRoles }, OPERATOR_ROLE)) return undefined;
  return { kind: 'operator', tokenId: row.token_id, tokenName: row.token_name, userId: row.user_id, userEmail: row.user_email, platformRoles };
}

/**
 * Every request authenticates, so concurrent look-ups share one statement (db/batch.ts); one in
 * flight at a time, as the look-up is short and each statement costs a round trip (bench/cni-add),
 * on a connection of its own (db/client.ts: sidePool).
 */
const verifier = perPool((pool) => {
  const db = sidePool(pool, 'api_tokens', 1);
  return new Batcher<string, ApiPrincipal | undefined>(
    async (hashes) => {
      const byHash = new Map((await tokenRows(db, [...new Set(hashes)])).map((r) => [r.token_hash, principalOf(r)]));
      return hashes.map((h) => ({ value: byHash.get(h) }));
    },
    { maxBatch: 128, maxInFlight: 1 },
  );
});

/**
 * Cluster tokens verified in the last REUSE_MS, by hash. A route whose write confirms its token
 * itself (the CNI ADD, which checks in its own transaction that its token still has a role of at
 * least editor: server/cni/sql/cni_lease_add_confirmed.sql) takes the principal from here instead of reading the token
 * again before every call. Only successful look-ups of cluster tokens are kept: their project and
 * cluster are fixed (deleting the cluster or its project revokes the token). Their role is not: it
 * follows the creator's rights, which may change in any process (the console, the admin CLI)
 * without this one knowing; so the entry is never trusted for the role, the ADD's own check is,
 * and a refused ADD drops the entry (`forgetVerifiedToken`). Entries expire, so `last_used_at` is
 * still refreshed by a look-up about once a minute.
 */
const recentClusterTokens = new Map<string, { principal: TokenPrincipal; until: number }>();
const REUSE_MS = 30_000;
const MAX_RECENT = 10_000;

function remember(hash: string, principal: TokenPrincipal) {
  recentClusterTokens.delete(hash);
  if (recentClusterTokens.size >= MAX_RECENT) recentClusterTokens.delete(recentClusterTokens.keys().next().value!);
  recentClusterTokens.set(hash, { principal, until: Date.now() + REUSE_MS });
}

/** Drops a secret's recently verified principal (its confirmation failed: the token was revoked or lost its role). */
export function forgetVerifiedToken(secret: string): void {
  recentClusterTokens.delete(hashToken(secret));
}

/**
 * Resolves a presented bearer secret to its principal, or undefined when unknown or revoked, when
 * (project tokens) its creator is disabled or holds no role in the project any more, or (operator
 * tokens) when the user is disabled or no longer holds the operator role. A project token's role
 * is the lesser of its own and its creator's current one (api_token_role). The token is read on
 * every use, so revoking it or changing its creator's rights takes effect at once. A cluster
 * token's principal carries its cluster. `last_used_at` is refreshed at most once a minute per token so hot
 * tokens do not become a write hot spot.
 *
 * With `reuseRecent`, a cluster token verified in the last 30 s is not read again: only for
 * callers whose write confirms the token (see `recentClusterTokens`).
 */
export async function verifyApiToken(db: DbOrTx, secret: string, options: { reuseRecent?: boolean } = {}): Promise<ApiPrincipal | undefined> {
  if (!secret.startsWith(TOKEN_PREFIX) || secret.length > 200) return undefined;
  const hash = hashToken(secret);
  if (isTransaction(db)) {
    const [row] = await tokenRows(db, [hash]);
    return row && principalOf(row);
  }
  if (options.reuseRecent) {
    const recent = recentClusterTokens.get(hash);
    if (recent && recent.until > Date.now()) return recent.principal;
  }
  const principal = await verifier(db).submit(hash);
  if (principal?.kind === 'project' && principal.cluster) remember(hash, principal);
  return principal;
}

/** A revoked cluster token whose cluster is gone: what `revokedTokenOfGoneCluster` finds. */
const goneClusterToken = z.object({ tokenId: z.string(), projectSlug: z.string(), clusterName: z.string(), role: z.enum(projectRoles) });
export type GoneClusterToken = z.infer<typeof goneClusterToken>;

/**
 * The revoked cluster token behind `secret` when its cluster no longer exists (deleted, or deleted
 * and registered again after the revocation: no cluster of that name in the project is older than
 * the revocation), else undefined. Read on every call and never kept: it serves only the requests
 * a route lets such a token make (the CNI DEL of a deleted cluster's pod), not authentication.
 */
export async function revokedTokenOfGoneCluster(db: DbOrTx, secret: string): Promise<GoneClusterToken | undefined> {
  if (!secret.startsWith(TOKEN_PREFIX) || secret.length > 200) return undefined;
  const [row] = await query(
    db,
    sql`
    select t.id as "tokenId", p.slug as "projectSlug", t.cluster_name as "clusterName", t.role
    from api_tokens t join projects p on p.id = t.project_id
    where t.token_hash = ${hashToken(secret)} and t.kind = 'project' and t.cluster_name is not null and t.revoked_at is not null
      and not exists (select 1 from clusters c where c.project_id = t.project_id and c.name = t.cluster_name and c.created_at <= t.revoked_at)`,
    goneClusterToken,
  );
  return row;
}

/**
 * Who the audit log records for a token. An operator token names its operator too, and carries
 * the user's id, so operator decisions are attributed to the person behind the automation.
 */
export const tokenActor = (p: ApiPrincipal): Actor =>
  p.kind === 'operator' || p.kind === 'user'
    ? { type: 'token', id: p.tokenId, label: `${p.userEmail} (token:${p.tokenName})`, userId: p.userId }
    : { type: 'token', id: p.tokenId, label: `token:${p.tokenName}` };

/** The user an operator or user token acts for, as the domain sees a signed-in user. */
export const principalUser = (p: OperatorPrincipal | UserPrincipal): SessionUser => ({
  id: p.userId,
  email: p.userEmail,
  name: p.kind === 'user' ? p.userName : p.userEmail,
  platformRoles: p.platformRoles,
});
