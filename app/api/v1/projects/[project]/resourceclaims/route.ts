import { z } from 'zod';
import { decodeContinue, encodeContinue, parseQuery } from '@/server/http/pagination';
import { tokenRoute } from '@/server/http/rest';
import { listClaimLog } from '@/server/quota/buckets';
import { claimResource } from '@/server/quota/resources';
import { resourceType } from '@/server/quota/schemas';

export const dynamic = 'force-dynamic';

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  continue: z.string().max(100).optional(),
  status: z.enum(['Granted', 'Denied', 'Released']).optional(),
  resourceType: resourceType.optional(),
  search: z.string().max(100).optional(),
});

export const GET = tokenRoute<{ project: string }>({ minRole: 'viewer', module: 'quota' }, async ({ db, url, principal }) => {
  const q = parseQuery(url, listQuery);
  const page = await listClaimLog(db, principal.projectId, { status: q.status, resourceType: q.resourceType, search: q.search, limit: q.limit, offset: decodeContinue(q.continue ?? null) });
  return {
    apiVersion: 'v1',
    kind: 'ResourceClaimList',
    items: page.items.map((c) => claimResource(c, principal.projectSlug)),
    metadata: { continue: encodeContinue(page.nextOffset), total: page.total },
  };
});
