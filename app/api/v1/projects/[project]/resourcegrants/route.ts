import { z } from 'zod';
import { decodeContinue, encodeContinue, parseQuery } from '@/server/http/pagination';
import { tokenRoute } from '@/server/http/rest';
import { listGrants } from '@/server/quota/grants';
import { grantResource } from '@/server/quota/resources';

export const dynamic = 'force-dynamic';

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  continue: z.string().max(100).optional(),
});

export const GET = tokenRoute<{ project: string }>({ minRole: 'viewer', module: 'quota' }, async ({ db, url, principal }) => {
  const q = parseQuery(url, listQuery);
  const page = await listGrants(db, { projectId: principal.projectId, limit: q.limit, offset: decodeContinue(q.continue ?? null) });
  return { apiVersion: 'v1', kind: 'ResourceGrantList', items: page.items.map(grantResource), metadata: { continue: encodeContinue(page.nextOffset), total: page.total } };
});
