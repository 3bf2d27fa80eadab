import { deleteCluster, listClusters } from '@/server/cni/clusters';
import { clusterForToken } from '@/server/cni/rest';
import { DomainError } from '@/server/errors';
import { tokenRoute } from '@/server/http/rest';
import { tokenActor } from '@/server/tenancy/tokens';

export const dynamic = 'force-dynamic';

type Params = { project: string; cluster: string };

export const GET = tokenRoute<Params>({ minRole: 'viewer', module: 'ipam' }, async ({ db, params, principal }) => {
  const cluster = await clusterForToken(db, principal, params.cluster);
  const [detail] = (await listClusters(db, principal.projectId)).filter((c) => c.id === cluster.id);
  return detail;
});

export const DELETE = tokenRoute<Params>({ minRole: 'editor', module: 'ipam' }, async ({ db, params, principal }) => {
  await clusterForToken(db, principal, params.cluster);
  if (principal.clusterName) throw new DomainError('Forbidden', 'a cluster-scoped token cannot delete clusters');
  return deleteCluster(db, principal.projectId, params.cluster, tokenActor(principal));
});
