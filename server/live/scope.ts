import type { DbOrTx } from '@/db/client';
import { DomainError } from '@/server/errors';
import { resolveProjectAccess, slugPattern } from '@/server/tenancy/projects';
import { hasPlatformRole, type SessionUser } from '@/server/tenancy/roles';
import type { LiveScope } from './stream';

/**
 * What a signed-in user may follow live. With a project: any member of it (viewer and up; a
 * non-member gets NotFound, as everywhere, so the project's existence is not revealed). Without:
 * every project and the fleet, for operators only.
 */
export async function resolveLiveScope(db: DbOrTx, user: SessionUser, project: string | null): Promise<LiveScope> {
  if (project !== null) {
    if (!slugPattern.test(project)) throw new DomainError('ValidationFailed', 'project must be a project slug', 'project');
    const access = await resolveProjectAccess(db, user, project);
    return { projectId: access.project.id };
  }
  if (!hasPlatformRole(user, 'operator')) throw new DomainError('Forbidden', 'live updates for every project need the operator role');
  return { allProjects: true };
}
