import { z } from 'zod';
import { anyTokenRoute, jsonReply, projectOrOperatorRoute, projectReadRoute, type ApiGroup, type RestRoute } from '@/server/http/declare';
import { getDeletionStatus, requestProjectDeletion } from '@/server/workflows/project-deletion';
import { findProject } from './projects';
import { projectOutput, projectResource } from '@/server/workflows/project-resource';

/** The core group: who a token acts for, and the project itself. */
export const coreApi: ApiGroup = { name: 'core', description: 'Identity of the calling token; the project (read its phase, delete it)' };

/** The REST v1 routes of tenancy: identity and the project. */
export const tenancyRoutes: RestRoute[] = [
  anyTokenRoute({
    method: 'GET',
    path: '/api/v1/whoami',
    group: coreApi,
    summary: 'The project (and cluster) a project token acts for, or the operator an operator token acts for',
    output: z.union([
      z.object({
        project: z.string(),
        cluster: z.string().nullish().describe('the cluster of a cluster-scoped token'),
        token: z.object({ id: z.uuid(), name: z.string(), kind: z.literal('project'), role: z.enum(['viewer', 'editor', 'owner']) }),
      }),
      z.object({
        project: z.null(),
        cluster: z.null(),
        operator: z.string(),
        token: z.object({ id: z.uuid(), name: z.string(), kind: z.literal('operator') }),
      }),
    ]),
    handler: async ({ principal }) =>
      principal.kind === 'project'
        ? {
            project: principal.projectSlug,
            cluster: principal.clusterName,
            token: { id: principal.tokenId, name: principal.tokenName, kind: 'project', role: principal.role },
          }
        : { project: null, cluster: null, operator: principal.userEmail, token: { id: principal.tokenId, name: principal.tokenName, kind: 'operator' } },
  }),

  projectReadRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}',
    group: coreApi,
    summary:
      'Read the project: its phase (Active or Deleting) and, while Deleting, what is left and which objects wait on which dependency (attempts, next attempt, last error). Operator tokens may read any project.',
    output: projectOutput,
    handler: async ({ db, project }) => projectResource(await findProject(db, project.slug), await getDeletionStatus(db, project.id)),
  }),

  projectOrOperatorRoute({
    method: 'DELETE',
    path: '/api/v1/projects/{project}',
    group: coreApi,
    summary:
      'Delete the project (202): phase Deleting at once (creates in it answer 409 ProjectDeleting, reads still work), every token of the project revoked, then its claims, leases, clusters, machines (verified provider cleanup), quota claims, grants and networks released by the worker; what waits on the provider is retried with capped backoff and shown in status. An owner-role project token, or an operator token for any project. Idempotent.',
    output: projectOutput,
    minRole: 'owner',
    // Every token of the project is revoked (this one too, when it is the project's); asking again answers the same 202.
    handler: async ({ db, project, actor }) => {
      const status = await requestProjectDeletion(db, project.id, actor, 'deleted through the API');
      return jsonReply(projectResource(await findProject(db, project.slug), status), { status: 202 });
    },
  }),
];
