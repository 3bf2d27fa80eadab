import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { apiTokens, projects, users } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, invalid } from '@/server/errors';
import { hasPlatformRole, type MemberRole, type PlatformRole } from './roles';

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
 * only its SHA-256 is stored.
 */
export async function createApiToken(
  db: DbOrTx,
  input: { projectId: string; name: string; clusterName?: string | null; role?: MemberRole; createdBy?: string | null },
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

/** Tokens of a project, newest first, without secrets. */
export async function listApiTokens(db: DbOrTx, projectId: string) {
  return db
    .select({
      id: apiTokens.id,
      name: apiTokens.name,
      prefix: apiTokens.prefix,
      clusterName: apiTokens.clusterName,
      role: apiTokens.role,
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
  const { secret, prefix, tokenHash } = newSecret();
  const [row] = await db
    .insert(apiTokens)
    .values({ kind: 'operator', userId: user.id, name, prefix, tokenHash, createdBy: input.createdBy ?? null })
    .returning({ id: apiTokens.id, name: apiTokens.name, prefix: apiTokens.prefix, createdAt: apiTokens.createdAt });
  await recordEvent(db, {
    actor,
    action: 'token.create',
    objectType: 'apiToken',
    objectId: row.id,
    objectName: name,
    after: { kind: 'operator', prefix: row.prefix, user: user.email },
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

/** A project token: acts for one project (and, when `clusterName` is set, one cluster) with `role`. */
export interface TokenPrincipal {
  kind: 'project';
  tokenId: string;
  tokenName: string;
  projectId: string;
  projectSlug: string;
  clusterName: string | null;
  role: MemberRole;
}

/** An operator token: acts for a platform operator, on no project of its own. */
export interface OperatorPrincipal {
  kind: 'operator';
  tokenId: string;
  tokenName: string;
  userId: string;
  userEmail: string;
}

export type ApiPrincipal = TokenPrincipal | OperatorPrincipal;

/**
 * Resolves a presented bearer secret to its principal, or undefined when unknown or revoked, or
 * (operator tokens) when the user is disabled or no longer holds the operator role: the role is
 * read on every use, so taking it away stops the user's tokens at once. `last_used_at` is refreshed
 * at most once a minute per token so hot tokens do not become a write hot spot.
 */
export async function verifyApiToken(db: DbOrTx, secret: string): Promise<ApiPrincipal | undefined> {
  if (!secret.startsWith(TOKEN_PREFIX) || secret.length > 200) return undefined;
  const [row] = await db
    .select({
      kind: apiTokens.kind,
      tokenId: apiTokens.id,
      tokenName: apiTokens.name,
      projectId: apiTokens.projectId,
      projectSlug: projects.slug,
      clusterName: apiTokens.clusterName,
      role: apiTokens.role,
      userId: users.id,
      userEmail: users.email,
      userRoles: users.platformRoles,
      userDisabledAt: users.disabledAt,
      lastUsedAt: apiTokens.lastUsedAt,
    })
    .from(apiTokens)
    .leftJoin(projects, eq(projects.id, apiTokens.projectId))
    .leftJoin(users, eq(users.id, apiTokens.userId))
    .where(and(eq(apiTokens.tokenHash, hashToken(secret)), isNull(apiTokens.revokedAt)));
  if (!row) return undefined;
  let principal: ApiPrincipal;
  if (row.kind === 'project') {
    if (!row.projectId || !row.projectSlug) return undefined;
    principal = { kind: 'project', tokenId: row.tokenId, tokenName: row.tokenName, projectId: row.projectId, projectSlug: row.projectSlug, clusterName: row.clusterName, role: row.role };
  } else {
    if (!row.userId || !row.userEmail || row.userDisabledAt || !hasPlatformRole({ platformRoles: row.userRoles ?? [] }, OPERATOR_ROLE)) return undefined;
    principal = { kind: 'operator', tokenId: row.tokenId, tokenName: row.tokenName, userId: row.userId, userEmail: row.userEmail };
  }
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > 60_000) {
    await db.update(apiTokens).set({ lastUsedAt: sql`now()` }).where(eq(apiTokens.id, row.tokenId));
  }
  return principal;
}

/**
 * Who the audit log records for a token. An operator token names its operator too, and carries
 * the user's id, so operator decisions are attributed to the person behind the automation.
 */
export const tokenActor = (p: ApiPrincipal): Actor =>
  p.kind === 'operator'
    ? { type: 'token', id: p.tokenId, label: `${p.userEmail} (token:${p.tokenName})`, userId: p.userId }
    : { type: 'token', id: p.tokenId, label: `token:${p.tokenName}` };
