import { redirect } from 'next/navigation';
import { currentUser } from '@/server/auth/session';
import { hasPlatformRole } from '@/server/tenancy/roles';

/** Home: tenants land on their projects, staff on their main queue. */
export default async function Home() {
  const user = await currentUser();
  if (!user) redirect('/sign-in');
  if (hasPlatformRole(user, 'admin') || user.platformRoles.length === 0) redirect('/projects');
  if (user.platformRoles.includes('operator')) redirect('/operator/queue');
  redirect('/qa/simulator');
}
