import { jsonReply } from '@/server/http/buffered';
import { projectOrOperatorRoute, projectReadRoute } from '@/server/http/rest';
import { getDeletionStatus, requestProjectDeletion } from '@/server/workflows/project-deletion';
import { findProject } from '@/server/tenancy/projects';
import { projectResource } from '@/server/workflows/project-resource';

export const dynamic = 'force-dynamic';

type Params = { project: string };

/** The project: phase, and while it is being deleted what is left and what waits on which dependency. */
export const GET = projectReadRoute<Params>({}, async ({ db, project }) => projectResource(await findProject(db, project.slug), await getDeletionStatus(db, project.id)));

/**
 * Deletes the project (202): phase Deleting at once, every token of the project revoked (this one
 * too, when it is the project's), everything released by the worker. Owners' tokens and operator
 * tokens only; asking again answers the same 202.
 */
export const DELETE = projectOrOperatorRoute<Params>({ minRole: 'owner' }, async ({ db, project, actor }) => {
  const status = await requestProjectDeletion(db, project.id, actor, 'deleted through the API');
  return jsonReply(projectResource(await findProject(db, project.slug), status), { status: 202 });
});
