import { getCapacity, setCapacityState } from '@/server/fleet/operator';
import { capacityActionInput, capacityResource } from '@/server/fleet/resources';
import { deviceRefParam } from '@/server/fleet/rest';
import { operatorRoute, readOptionalJson } from '@/server/http/rest';

export const dynamic = 'force-dynamic';

/** Operator: retires Available or Quarantined capacity for good (409 otherwise). */
export const POST = operatorRoute<{ name: string }>({ module: 'fleet' }, async ({ db, req, params, actor }) => {
  const { name } = deviceRefParam.parse(params);
  const body = capacityActionInput.parse(await readOptionalJson(req));
  const capacity = await getCapacity(db, name);
  await setCapacityState(db, capacity.id, 'retire', body.reason, actor);
  return capacityResource(await getCapacity(db, name));
});
