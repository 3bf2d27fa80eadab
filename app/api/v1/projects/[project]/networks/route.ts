import { jsonReply } from '@/server/http/buffered';
import { z } from 'zod';
import { decodeContinue, encodeContinue, parseQuery } from '@/server/http/pagination';
import { readJson, tokenRoute } from '@/server/http/rest';
import { tokenActor } from '@/server/tenancy/tokens';
import { createNetwork, listNetworks } from '@/server/ipam/networks';
import { networkInputFromResource, networkResource, networkResourceInput } from '@/server/ipam/resources';

export const dynamic = 'force-dynamic';

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  continue: z.string().max(100).optional(),
  search: z.string().max(100).optional(),
});

export const GET = tokenRoute<{ project: string }>({ minRole: 'viewer', module: 'ipam' }, async ({ db, url, principal }) => {
  const q = parseQuery(url, listQuery);
  const page = await listNetworks(db, principal.projectId, { limit: q.limit, offset: decodeContinue(q.continue ?? null), search: q.search });
  return { apiVersion: 'v1', kind: 'NetworkList', items: page.items.map(networkResource), metadata: { continue: encodeContinue(page.nextOffset) } };
});

export const POST = tokenRoute<{ project: string }>({ minRole: 'editor', module: 'ipam' }, async ({ db, req, principal }) => {
  const body = networkResourceInput.parse(await readJson(req));
  const network = await createNetwork(db, principal.projectId, networkInputFromResource(body), tokenActor(principal));
  return jsonReply(networkResource(network), { status: 201 });
});
