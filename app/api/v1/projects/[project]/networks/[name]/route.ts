import { tokenRoute } from '@/server/http/rest';
import { resourceName } from '@/server/ipam/schemas';
import { deleteNetwork, getNetwork } from '@/server/ipam/networks';
import { networkResource } from '@/server/ipam/resources';
import { tokenActor } from '@/server/tenancy/tokens';

export const dynamic = 'force-dynamic';

type Params = { project: string; name: string };

export const GET = tokenRoute<Params>({ minRole: 'viewer', module: 'ipam' }, async ({ db, params, principal }) =>
  networkResource(await getNetwork(db, principal.projectId, resourceName.parse(params.name))),
);

export const DELETE = tokenRoute<Params>({ minRole: 'editor', module: 'ipam' }, async ({ db, params, principal }) => {
  await deleteNetwork(db, principal.projectId, resourceName.parse(params.name), tokenActor(principal));
  return { kind: 'Status', status: 'Success', details: { name: params.name, kind: 'Network' } };
});
