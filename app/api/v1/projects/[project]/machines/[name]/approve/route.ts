import { approveMachine, getMachine } from '@/server/fleet/machines';
import { machineResource } from '@/server/fleet/resources';
import { machineAddress } from '@/server/fleet/rest';
import { operatorRoute } from '@/server/http/rest';

export const dynamic = 'force-dynamic';

/** Operator: approves a machine awaiting approval (409 in any other phase); it goes on to allocation. */
export const POST = operatorRoute<{ project: string; name: string }>({ module: 'fleet' }, async ({ db, params, actor }) => {
  const { projectId, machine } = await machineAddress(db, params);
  await approveMachine(db, machine.id, actor);
  return machineResource(await getMachine(db, projectId, machine.name));
});
