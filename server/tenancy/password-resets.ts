import { createHash, randomBytes } from 'node:crypto';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { passwordResets, users } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError } from '@/server/errors';
import { setPassword } from './users';

/** How long a password-reset link works. */
export const PASSWORD_RESET_TTL_HOURS = 24;
const LINK_PREFIX = 'pwr_';
const hashOf = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** The console path that uses a reset link. */
export const passwordResetPath = (secret: string) => `/reset-password/${secret}`;

/**
 * Makes a one-time password-reset link for a user (administrators; the admin CLI). The secret is
 * returned exactly once; only its hash is kept. Earlier unused links of the user stop working, so
 * only the newest one does. The user's current password keeps working until the link is used.
 */
export async function createPasswordReset(db: Db, userId: string, createdBy: string | null, actor: Actor) {
  const secret = LINK_PREFIX + randomBytes(32).toString('base64url');
  return db.transaction(async (tx) => {
    const [user] = await tx.select({ id: users.id, email: users.email }).from(users).where(eq(users.id, userId));
    if (!user) throw new DomainError('NotFound', `user ${userId} not found`, 'user');
    await tx
      .update(passwordResets)
      .set({ usedAt: sql`now()` })
      .where(and(eq(passwordResets.userId, userId), isNull(passwordResets.usedAt)));
    const [row] = await tx
      .insert(passwordResets)
      .values({ userId, tokenHash: hashOf(secret), createdBy, expiresAt: sql`now() + ${sql.raw(`interval '${PASSWORD_RESET_TTL_HOURS} hours'`)}` })
      .returning({ id: passwordResets.id, expiresAt: passwordResets.expiresAt });
    await recordEvent(tx, {
      actor,
      action: 'user.resetPassword',
      objectType: 'user',
      objectId: user.id,
      objectName: user.email,
      after: { expiresAt: row.expiresAt },
    });
    return { email: user.email, expiresAt: row.expiresAt, secret, path: passwordResetPath(secret) };
  });
}

async function usableReset(db: DbOrTx, secret: string) {
  if (!secret.startsWith(LINK_PREFIX) || secret.length > 100) return undefined;
  const [row] = await db
    .select({ id: passwordResets.id, userId: passwordResets.userId, email: users.email })
    .from(passwordResets)
    .innerJoin(users, eq(users.id, passwordResets.userId))
    .where(and(eq(passwordResets.tokenHash, hashOf(secret)), isNull(passwordResets.usedAt), sql`${passwordResets.expiresAt} > now()`));
  return row;
}

/** The e-mail a reset link is for (the page shows it), or LinkUnusable. */
export async function previewPasswordReset(db: DbOrTx, secret: string) {
  const row = await usableReset(db, secret);
  if (!row) throw new DomainError('LinkUnusable', 'this password-reset link was used, replaced or has expired', 'token');
  return { email: row.email };
}

/**
 * Uses a reset link, once (a conditional update: of two uses exactly one wins): sets the password
 * and ends every session of the user.
 */
export async function usePasswordReset(db: Db, secret: string, newPassword: string) {
  return db.transaction(async (tx) => {
    const row = await usableReset(tx, secret);
    const used = row
      ? await tx
          .update(passwordResets)
          .set({ usedAt: sql`now()` })
          .where(and(eq(passwordResets.id, row.id), isNull(passwordResets.usedAt)))
          .returning({ id: passwordResets.id })
      : [];
    if (!row || used.length === 0) throw new DomainError('LinkUnusable', 'this password-reset link was used, replaced or has expired', 'token');
    await setPassword(tx, { userId: row.userId, newPassword }, { type: 'system', label: `password-reset:${row.email}` });
    return { email: row.email };
  });
}
