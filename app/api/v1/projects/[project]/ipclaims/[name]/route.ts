import { tokenRoute } from '@/server/http/rest';
import { deleteClaim, getClaim } from '@/server/ipam/claims';
import { claimResource } from '@/server/ipam/resources';
import { resourceName } from '@/server/ipam/schemas';
import { tokenActor } from '@/server/tenancy/tokens';

export const dynamic = 'force-dynamic';

type Params = { project: string; name: string };

export const GET = tokenRoute<Params>({ minRole: 'viewer', module: 'ipam' }, async ({ db, params, principal }) =>
  claimResource(await getClaim(db, principal.projectId, resourceName.parse(params.name))),
);

export const DELETE = tokenRoute<Params>({ minRole: 'editor', module: 'ipam' }, async ({ db, params, principal }) => {
  const result = await deleteClaim(db, principal.projectId, resourceName.parse(params.name), tokenActor(principal));
  return { kind: 'Status', status: 'Success', details: { name: params.name, kind: 'IPClaim', released: result.released, retainedUntil: result.retainedUntil } };
});
