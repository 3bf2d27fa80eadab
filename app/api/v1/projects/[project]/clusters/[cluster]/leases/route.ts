import { z } from 'zod';
import { listLeases } from '@/server/cni/leases';
import { clusterForToken } from '@/server/cni/rest';
import { decodeContinue, encodeContinue, parseQuery } from '@/server/http/pagination';
import { tokenRoute } from '@/server/http/rest';

export const dynamic = 'force-dynamic';

const query = z.object({ limit: z.coerce.number().int().min(1).max(500).default(100), continue: z.string().max(100).optional(), search: z.string().max(100).optional() });

export const GET = tokenRoute<{ project: string; cluster: string }>({ minRole: 'viewer', module: 'ipam' }, async ({ db, url, params, principal }) => {
  const q = parseQuery(url, query);
  const cluster = await clusterForToken(db, principal, params.cluster);
  const page = await listLeases(db, principal.projectId, { cluster: cluster.name, search: q.search, limit: q.limit, offset: decodeContinue(q.continue ?? null) });
  return { kind: 'PodLeaseList', items: page.items, metadata: { total: page.total, continue: encodeContinue(page.nextOffset) } };
});
