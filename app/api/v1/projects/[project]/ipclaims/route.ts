import { jsonReply } from '@/server/http/buffered';
import { z } from 'zod';
import { decodeContinue, encodeContinue, parseQuery } from '@/server/http/pagination';
import { readJson, tokenRoute } from '@/server/http/rest';
import { createClaim, listClaims } from '@/server/ipam/claims';
import { claimInputFromResource, claimResource, claimResourceInput } from '@/server/ipam/resources';
import { resourceName } from '@/server/ipam/schemas';
import { tokenActor } from '@/server/tenancy/tokens';

export const dynamic = 'force-dynamic';

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  continue: z.string().max(100).optional(),
  network: resourceName.optional(),
  pool: resourceName.optional(),
  family: z.enum(['IPv4', 'IPv6', '4', '6']).optional(),
  search: z.string().max(100).optional(),
  sort: z.enum(['name', 'createdAt', 'cidr']).default('createdAt'),
  order: z.enum(['asc', 'desc']).default('desc'),
});

export const GET = tokenRoute<{ project: string }>({ minRole: 'viewer', module: 'ipam' }, async ({ db, url, principal }) => {
  const q = parseQuery(url, listQuery);
  const family = q.family === undefined ? undefined : q.family === 'IPv4' || q.family === '4' ? 4 : 6;
  const page = await listClaims(db, principal.projectId, {
    network: q.network,
    pool: q.pool,
    family,
    search: q.search,
    sort: q.sort,
    order: q.order,
    limit: q.limit,
    offset: decodeContinue(q.continue ?? null),
  });
  return { apiVersion: 'v1', kind: 'IPClaimList', items: page.items.map((c) => claimResource(c)), metadata: { continue: encodeContinue(page.nextOffset), total: page.total } };
});

const postQuery = z.object({ dryRun: z.enum(['true', 'false', 'All']).optional() });

export const POST = tokenRoute<{ project: string }>({ minRole: 'editor', module: 'ipam' }, async ({ db, req, url, principal }) => {
  const { dryRun } = parseQuery(url, postQuery);
  const body = claimResourceInput.parse(await readJson(req));
  const preview = dryRun === 'true' || dryRun === 'All';
  const result = await createClaim(db, principal.projectId, claimInputFromResource(body), tokenActor(principal), { dryRun: preview });
  return jsonReply(claimResource(result.claim, { dryRun: preview }), { status: result.created ? 201 : 200 });
});
