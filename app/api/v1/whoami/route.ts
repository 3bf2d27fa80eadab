import { anyTokenRoute } from '@/server/http/rest';

export const dynamic = 'force-dynamic';

/** The project (and cluster) a project token acts for, or the operator an operator token acts for. */
export const GET = anyTokenRoute(async ({ principal }) =>
  principal.kind === 'project'
    ? { project: principal.projectSlug, cluster: principal.clusterName, token: { id: principal.tokenId, name: principal.tokenName, kind: 'project', role: principal.role } }
    : { project: null, cluster: null, operator: principal.userEmail, token: { id: principal.tokenId, name: principal.tokenName, kind: 'operator' } },
);
