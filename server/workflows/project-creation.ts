import type { Db } from '@/db/client';
import type { Actor } from '@/server/audit/events';
import { applyGrantPolicies } from '@/server/quota/grants';
import { createProjectWith } from '@/server/tenancy/projects';

/**
 * Creates a project in an organization with the quota grants its GrantCreationPolicies give it, in
 * one transaction: the project never exists without them. A taken slug is Conflict.
 */
export function createProject(db: Db, input: { organizationId: string; slug: string; name: string }, actor: Actor) {
  return createProjectWith(db, input, actor, (tx, project) => applyGrantPolicies(tx, project, actor));
}
