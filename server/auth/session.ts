import 'server-only';
import { getDb } from '@/db/client';
import { getSessionUser } from '@/server/tenancy/users';
import type { SessionUser } from '@/server/tenancy/roles';
import { auth } from './config';

/**
 * The signed-in user for this request, re-read from the database (so a disabled user or a
 * removed platform role takes effect immediately), or null.
 */
export async function currentUser(): Promise<SessionUser | null> {
  const session = await auth();
  const id = (session?.user as { id?: string } | undefined)?.id;
  if (!id) return null;
  return (await getSessionUser(getDb(), id)) ?? null;
}
