import { jsonReply } from '@/server/http/buffered';
import { z } from 'zod';
import { decodeContinue, encodeContinue, parseQuery } from '@/server/http/pagination';
import { readJson, tokenRoute } from '@/server/http/rest';
import { createIncreaseRequest, listIncreaseRequests } from '@/server/quota/increases';
import { increaseResource, increaseResourceInput } from '@/server/quota/resources';
import { tokenActor } from '@/server/tenancy/tokens';

export const dynamic = 'force-dynamic';

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  continue: z.string().max(100).optional(),
  status: z.enum(['Pending', 'Approved', 'Rejected']).optional(),
});

export const GET = tokenRoute<{ project: string }>({ minRole: 'viewer', module: 'quota' }, async ({ db, url, principal }) => {
  const q = parseQuery(url, listQuery);
  const page = await listIncreaseRequests(db, { projectId: principal.projectId, status: q.status, limit: q.limit, offset: decodeContinue(q.continue ?? null) });
  return { apiVersion: 'v1', kind: 'QuotaIncreaseRequestList', items: page.items.map(increaseResource), metadata: { continue: encodeContinue(page.nextOffset), total: page.total } };
});

export const POST = tokenRoute<{ project: string }>({ minRole: 'editor', module: 'quota' }, async ({ db, req, principal }) => {
  const body = increaseResourceInput.parse(await readJson(req));
  const created = await createIncreaseRequest(db, principal.projectId, body.spec, tokenActor(principal));
  return jsonReply(increaseResource(created), { status: 201 });
});
