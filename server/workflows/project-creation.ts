import type { Db } from '@/db/client';
import type { Actor } from '@/server/audit/events';
import { DomainError } from '@/server/errors';
import { applyGrantPolicies } from '@/server/quota/grants';
import { grantRole } from '@/server/tenancy/members';
import { resolveOrganizationAccess } from '@/server/tenancy/organizations';
import { createProjectWith } from '@/server/tenancy/projects';
import { hasPlatformRole, roleAtLeast, type SessionUser } from '@/server/tenancy/roles';

/**
 * Creates a project in an organization with the quota grants its GrantCreationPolicies give it
 * (and, with `owner`, that user as its owner), in one transaction: the project never exists
 * without them. A taken slug is Conflict.
 */
export function createProject(
  db: Db,
  input: { organizationId: string; slug: string; name: string; description?: string },
  actor: Actor,
  options: { owner?: string } = {},
) {
  return createProjectWith(db, input, actor, async (tx, project) => {
    await applyGrantPolicies(tx, project, actor);
    if (options.owner) await grantRole(tx, { projectId: project.id }, options.owner, 'owner', actor);
  });
}

/**
 * A user creates a project in the organization `input.organization`: its owners and members may,
 * as may platform operators; anyone else gets NotFound. The user
 * becomes the project's owner, and the project gets its grants (hence its allowance buckets), all
 * in one transaction: the project exists with its owner and quota, or not at all.
 */
export async function createProjectFor(
  db: Db,
  user: SessionUser,
  input: { organization: string; slug: string; name: string; description?: string },
  actor: Actor,
) {
  const { organization, role } = await resolveOrganizationAccess(db, user, input.organization);
  if (!hasPlatformRole(user, 'operator') && !(role && roleAtLeast(role, 'member'))) {
    throw new DomainError('Forbidden', `creating projects in "${organization.slug}" needs a role there`, 'organization');
  }
  const project = await createProject(db, { organizationId: organization.id, slug: input.slug, name: input.name, description: input.description }, actor, {
    owner: user.id,
  });
  return { ...project, organizationSlug: organization.slug };
}
