import 'server-only';
import { notFound, redirect } from 'next/navigation';
import { hasPlatformRole, type PlatformRole } from '@/server/tenancy/roles';
import { currentUser } from './session';

/** For staff pages: the signed-in user holding one of `roles`, else the not-found page. */
export async function requirePlatformRole(...roles: PlatformRole[]) {
  const user = await currentUser();
  if (!user) redirect('/sign-in');
  if (!hasPlatformRole(user, ...roles)) notFound();
  return user;
}
