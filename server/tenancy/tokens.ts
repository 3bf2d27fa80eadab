import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { apiTokens, projects } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, invalid } from '@/server/errors';
import type { MemberRole } from './roles';

const TOKEN_PREFIX = 'mrd_';

export function hashToken(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
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
  const name = input.name.trim();
  if (!name || name.length > 100) throw invalid('name', 'must be 1-100 characters');
  if (input.clusterName !== undefined && input.clusterName !== null && !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(input.clusterName)) {
    throw invalid('cluster', 'must be a cluster name (lower-case letters, digits, dashes)');
  }
  const secret = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const [row] = await db
    .insert(apiTokens)
    .values({
      projectId: input.projectId,
      name,
      clusterName: input.clusterName ?? null,
      role: input.role ?? 'editor',
      prefix: secret.slice(0, 10),
      tokenHash: hashToken(secret),
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

export interface TokenPrincipal {
  tokenId: string;
  tokenName: string;
  projectId: string;
  projectSlug: string;
  clusterName: string | null;
  role: MemberRole;
}

/**
 * Resolves a presented bearer secret to its principal, or undefined when unknown or revoked.
 * `last_used_at` is refreshed at most once a minute per token so hot tokens do not become a
 * write hot spot.
 */
export async function verifyApiToken(db: DbOrTx, secret: string): Promise<TokenPrincipal | undefined> {
  if (!secret.startsWith(TOKEN_PREFIX) || secret.length > 200) return undefined;
  const [row] = await db
    .select({
      tokenId: apiTokens.id,
      tokenName: apiTokens.name,
      projectId: apiTokens.projectId,
      projectSlug: projects.slug,
      clusterName: apiTokens.clusterName,
      role: apiTokens.role,
      lastUsedAt: apiTokens.lastUsedAt,
    })
    .from(apiTokens)
    .innerJoin(projects, eq(projects.id, apiTokens.projectId))
    .where(and(eq(apiTokens.tokenHash, hashToken(secret)), isNull(apiTokens.revokedAt)));
  if (!row) return undefined;
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > 60_000) {
    await db.update(apiTokens).set({ lastUsedAt: sql`now()` }).where(eq(apiTokens.id, row.tokenId));
  }
  const { lastUsedAt: _ignored, ...principal } = row;
  return principal;
}

export const tokenActor = (p: TokenPrincipal): Actor => ({ type: 'token', id: p.tokenId, label: `token:${p.tokenName}` });
