import { z } from 'zod';
import { decodeContinue, encodeContinue, parseQuery } from '@/server/http/pagination';
import { operatorRoute } from '@/server/http/rest';
import { listIncreaseRequests } from '@/server/quota/increases';
import { increaseResource } from '@/server/quota/resources';

export const dynamic = 'force-dynamic';

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  continue: z.string().max(100).optional(),
  status: z.enum(['Pending', 'Approved', 'Rejected']).default('Pending'),
});

/** The operators' queue across projects: Pending oldest first (or the decided history, newest first). */
export const GET = operatorRoute({ module: 'quota' }, async ({ db, url }) => {
  const q = parseQuery(url, listQuery);
  const page = await listIncreaseRequests(db, { status: q.status, limit: q.limit, offset: decodeContinue(q.continue ?? null) });
  return { apiVersion: 'v1', kind: 'QuotaIncreaseRequestList', items: page.items.map(increaseResource), metadata: { continue: encodeContinue(page.nextOffset), total: page.total } };
});
