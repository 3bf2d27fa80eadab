import { jsonReply } from '@/server/http/buffered';
import { getMachine } from '@/server/fleet/machines';
import { forceReleaseMachine, releaseMachineAsOperator } from '@/server/fleet/operator';
import { machineReleaseInput, machineResource } from '@/server/fleet/resources';
import { machineAddress } from '@/server/fleet/rest';
import { operatorRoute, readOptionalJson } from '@/server/http/rest';

export const dynamic = 'force-dynamic';

/**
 * Operator release (202): the same verified cleanup as the tenant's delete. With `force: true` (and
 * a reason) the binding ends without the provider and the capacity is quarantined for inspection.
 */
export const POST = operatorRoute<{ project: string; name: string }>({ module: 'fleet' }, async ({ db, req, params, actor }) => {
  const body = machineReleaseInput.parse(await readOptionalJson(req));
  const { projectId, machine } = await machineAddress(db, params);
  if (body.force) await forceReleaseMachine(db, machine.id, body.reason, actor);
  else await releaseMachineAsOperator(db, machine.id, body.reason, actor);
  return jsonReply(machineResource(await getMachine(db, projectId, machine.name)), { status: 202 });
});
