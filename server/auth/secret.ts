import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { settings } from '@/db/schema';

/**
 * The session-signing secret: `AUTH_SECRET` when set; otherwise generated once and kept in the
 * database, so every web replica sharing the database signs and verifies with the same secret.
 */
export async function resolveAuthSecret(db: Db): Promise<string> {
  if (process.env.AUTH_SECRET) return process.env.AUTH_SECRET;
  const candidate = randomBytes(32).toString('base64url');
  await db.insert(settings).values({ key: 'auth_secret', value: candidate }).onConflictDoNothing();
  const [row] = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, 'auth_secret'));
  return row.value;
}
