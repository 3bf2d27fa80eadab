import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { settings } from '@/db/schema';
import { env } from '@/server/env';

/** Kept on `globalThis`: Next loads the auth configuration in a bundle of its own, in the same process. */
const g = globalThis as typeof globalThis & { __meridianAuthSecret?: string };

/**
 * Resolves the session-signing secret once, at web start-up: `AUTH_SECRET` when set; otherwise
 * generated once and kept in the database, so every web replica sharing the database signs and
 * verifies with the same secret.
 */
export async function resolveAuthSecret(db: Db): Promise<string> {
  const configured = env().AUTH_SECRET;
  if (configured) return (g.__meridianAuthSecret = configured);
  const candidate = randomBytes(32).toString('base64url');
  await db.insert(settings).values({ key: 'auth_secret', value: candidate }).onConflictDoNothing();
  const [row] = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, 'auth_secret'));
  return (g.__meridianAuthSecret = row.value);
}

/** The secret {@link resolveAuthSecret} resolved (AUTH_SECRET before it has run). */
export function authSecret(): string | undefined {
  return g.__meridianAuthSecret ?? env().AUTH_SECRET;
}
