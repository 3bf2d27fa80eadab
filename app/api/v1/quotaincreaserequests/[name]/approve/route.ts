import { z } from 'zod';
import { operatorRoute, readOptionalJson } from '@/server/http/rest';
import { approveIncreaseRequest } from '@/server/quota/increases';
import { increaseApproveInput, increaseResource } from '@/server/quota/resources';

export const dynamic = 'force-dynamic';

/**
 * Approves a pending request: a grant of the requested amount (or `amount`) is created for the
 * project in the same transaction, so its bucket's limit grows at once. Deciding twice is 409.
 */
export const POST = operatorRoute<{ name: string }>({ module: 'quota' }, async ({ db, req, params, actor }) => {
  const { name } = z.object({ name: z.uuid() }).parse(params);
  const body = increaseApproveInput.parse(await readOptionalJson(req));
  return increaseResource(await approveIncreaseRequest(db, { id: name, ...body }, actor));
});
