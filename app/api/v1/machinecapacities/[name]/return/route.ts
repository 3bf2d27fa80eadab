import { getCapacity, setCapacityState } from '@/server/fleet/operator';
import { capacityResource, capacityReturnInput } from '@/server/fleet/resources';
import { deviceRefParam } from '@/server/fleet/rest';
import { jsonReply } from '@/server/http/buffered';
import { operatorRoute, readOptionalJson } from '@/server/http/rest';

export const dynamic = 'force-dynamic';

/**
 * Operator: returns Quarantined capacity to the pool (409 otherwise). 202 with the capacity
 * Cleaning: the provider cleans it again and it is Available once verified (Quarantined again if
 * the cleanup fails). `force: true` with a reason: Available at once (200), audited. A request
 * waiting for such capacity is woken when it becomes Available.
 */
export const POST = operatorRoute<{ name: string }>({ module: 'fleet' }, async ({ db, req, params, actor }) => {
  const { name } = deviceRefParam.parse(params);
  const body = capacityReturnInput.parse(await readOptionalJson(req));
  const capacity = await getCapacity(db, name);
  await setCapacityState(db, capacity.id, 'returnToPool', body.reason, actor, { force: body.force });
  return jsonReply(capacityResource(await getCapacity(db, name)), { status: body.force ? 200 : 202 });
});
