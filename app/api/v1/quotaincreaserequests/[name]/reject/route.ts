import { z } from 'zod';
import { operatorRoute, readJson } from '@/server/http/rest';
import { rejectIncreaseRequest } from '@/server/quota/increases';
import { increaseRejectInput, increaseResource } from '@/server/quota/resources';

export const dynamic = 'force-dynamic';

/** Rejects a pending request with the reason the tenant reads. Deciding twice is 409. */
export const POST = operatorRoute<{ name: string }>({ module: 'quota' }, async ({ db, req, params, actor }) => {
  const { name } = z.object({ name: z.uuid() }).parse(params);
  const body = increaseRejectInput.parse(await readJson(req));
  return increaseResource(await rejectIncreaseRequest(db, { id: name, reason: body.reason }, actor));
});
