import { jsonReply } from '@/server/http/buffered';
import { createCluster, listClusters } from '@/server/cni/clusters';
import { clusterCreateInput } from '@/server/cni/schemas';
import { DomainError } from '@/server/errors';
import { readJson, tokenRoute } from '@/server/http/rest';
import { tokenActor } from '@/server/tenancy/tokens';

export const dynamic = 'force-dynamic';

export const GET = tokenRoute<{ project: string }>({ minRole: 'viewer', module: 'ipam' }, async ({ db, principal }) => {
  const items = await listClusters(db, principal.projectId);
  const visible = principal.clusterName ? items.filter((c) => c.name === principal.clusterName) : items;
  return { kind: 'ClusterList', items: visible };
});

export const POST = tokenRoute<{ project: string }>({ minRole: 'editor', module: 'ipam' }, async ({ db, req, principal }) => {
  if (principal.clusterName) throw new DomainError('Forbidden', 'a cluster-scoped token cannot register clusters');
  const input = clusterCreateInput.parse(await readJson(req));
  return jsonReply(await createCluster(db, principal.projectId, { ...input, issueToken: true }, tokenActor(principal)), { status: 201 });
});
