import { tokenRoute } from '@/server/http/rest';
import { releaseRetainedByName } from '@/server/ipam/claims';
import { resourceName } from '@/server/ipam/schemas';
import { tokenActor } from '@/server/tenancy/tokens';

export const dynamic = 'force-dynamic';

type Params = { project: string; name: string };

/** Releases the retained allocation now: its block returns to the pool and the name is free again. */
export const DELETE = tokenRoute<Params>({ minRole: 'editor', module: 'ipam' }, async ({ db, params, principal }) => {
  const result = await releaseRetainedByName(db, principal.projectId, resourceName.parse(params.name), tokenActor(principal));
  return { kind: 'Status', status: 'Success', details: { name: result.name, kind: 'RetainedAllocation', cidr: result.cidr, released: result.released } };
});
