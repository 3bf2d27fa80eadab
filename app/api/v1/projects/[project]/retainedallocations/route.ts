import { z } from 'zod';
import { decodeContinue, encodeContinue, parseQuery } from '@/server/http/pagination';
import { tokenRoute } from '@/server/http/rest';
import { listRetainedAllocations } from '@/server/ipam/claims';
import { retainedAllocationResource } from '@/server/ipam/resources';
import { resourceName } from '@/server/ipam/schemas';

export const dynamic = 'force-dynamic';

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  continue: z.string().max(100).optional(),
  network: resourceName.optional(),
});

export const GET = tokenRoute<{ project: string }>({ minRole: 'viewer', module: 'ipam' }, async ({ db, url, principal }) => {
  const q = parseQuery(url, listQuery);
  const offset = decodeContinue(q.continue ?? null);
  // One row more than the page says whether there is a next one.
  const rows = await listRetainedAllocations(db, { projectId: principal.projectId, network: q.network, limit: q.limit + 1, offset });
  return {
    apiVersion: 'v1',
    kind: 'RetainedAllocationList',
    items: rows.slice(0, q.limit).map(retainedAllocationResource),
    metadata: { continue: encodeContinue(rows.length > q.limit ? offset + q.limit : null) },
  };
});
