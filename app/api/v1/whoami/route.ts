import { tokenRoute } from '@/server/http/rest';

export const dynamic = 'force-dynamic';

export const GET = tokenRoute({ minRole: 'viewer' }, async ({ principal }) => ({
  project: principal.projectSlug,
  cluster: principal.clusterName,
  token: { id: principal.tokenId, name: principal.tokenName, role: principal.role },
}));
