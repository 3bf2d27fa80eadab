import type { Db } from '@/db/client';
import type { EmailVerification, UserOrigin } from '@/db/schema';
import { systemActor } from '@/server/audit/events';
import { addMembership, createOrganization } from '@/server/tenancy/projects';
import { createProject } from '@/server/workflows/project-creation';
import type { MemberRole, PlatformRole, SessionUser } from '@/server/tenancy/roles';
import { createUser } from '@/server/tenancy/users';
import { uniq } from './db';

const actor = systemActor('test');

/** A fresh organization with one project, for a test that must not see anyone else's data. */
export async function makeProject(db: Db, name = uniq('p')) {
  const org = await createOrganization(db, { slug: `${name}-org`, name: `${name} org` }, actor);
  const project = await createProject(db, { organizationId: org.id, slug: name, name }, actor);
  return { org, project };
}

/**
 * A user with a role on a project (or none), and optional platform roles; made as an administrator
 * makes one (its address verified by `admin`) unless `origin` says otherwise.
 */
export async function makeUser(
  db: Db,
  options: {
    projectId?: string;
    role?: MemberRole;
    platformRoles?: PlatformRole[];
    password?: string;
    email?: string;
    origin?: { createdVia: UserOrigin; emailVerifiedBy: EmailVerification | null };
  } = {},
): Promise<SessionUser> {
  const user = await createUser(
    db,
    {
      email: options.email ?? `${uniq('u')}@example.com`,
      name: 'Test user',
      password: options.password,
      platformRoles: options.platformRoles,
      ...(options.origin ?? { createdVia: 'admin', emailVerifiedBy: 'admin' }),
    },
    actor,
  );
  if (options.projectId && options.role) await addMembership(db, { userId: user.id, role: options.role, projectId: options.projectId }, actor);
  return user;
}
