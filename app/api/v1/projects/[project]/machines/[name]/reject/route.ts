import { getMachine, rejectMachine } from '@/server/fleet/machines';
import { machineRejectInput, machineResource } from '@/server/fleet/resources';
import { machineAddress } from '@/server/fleet/rest';
import { operatorRoute, readJson } from '@/server/http/rest';

export const dynamic = 'force-dynamic';

/** Operator: rejects a machine awaiting approval with the reason the tenant reads; its quota and addresses are returned. */
export const POST = operatorRoute<{ project: string; name: string }>({ module: 'fleet' }, async ({ db, req, params, actor }) => {
  const body = machineRejectInput.parse(await readJson(req));
  const { projectId, machine } = await machineAddress(db, params);
  await rejectMachine(db, machine.id, body.reason, actor);
  return machineResource(await getMachine(db, projectId, machine.name));
});
