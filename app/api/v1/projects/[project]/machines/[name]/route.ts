import { jsonReply } from '@/server/http/buffered';
import { deleteMachine, getMachine } from '@/server/fleet/machines';
import { machineResource } from '@/server/fleet/resources';
import { tokenRoute } from '@/server/http/rest';
import { resourceName } from '@/server/ipam/schemas';
import { tokenActor } from '@/server/tenancy/tokens';

export const dynamic = 'force-dynamic';

type Params = { project: string; name: string };

export const GET = tokenRoute<Params>({ minRole: 'viewer', module: 'fleet' }, async ({ db, params, principal }) =>
  machineResource(await getMachine(db, principal.projectId, resourceName.parse(params.name))),
);

/** Starts the release (202): cleanup runs through the provider and is verified before the machine is Released. */
export const DELETE = tokenRoute<Params>({ minRole: 'editor', module: 'fleet' }, async ({ db, params, principal }) => {
  await deleteMachine(db, principal.projectId, resourceName.parse(params.name), tokenActor(principal));
  return jsonReply(machineResource(await getMachine(db, principal.projectId, params.name)), { status: 202 });
});
