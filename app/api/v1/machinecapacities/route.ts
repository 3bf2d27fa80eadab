import { z } from 'zod';
import { listCapacity } from '@/server/fleet/operator';
import { capacityResource } from '@/server/fleet/resources';
import { decodeContinue, encodeContinue, parseQuery } from '@/server/http/pagination';
import { operatorRoute } from '@/server/http/rest';

export const dynamic = 'force-dynamic';

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  continue: z.string().max(100).optional(),
  state: z.enum(['Available', 'Bound', 'Cleaning', 'Quarantined', 'Retired']).optional(),
  location: z.string().max(63).optional(),
  search: z.string().max(100).optional(),
});

/** The fleet's capacity by location, class and device, with state, health and what is bound to it. */
export const GET = operatorRoute({ module: 'fleet' }, async ({ db, url }) => {
  const q = parseQuery(url, listQuery);
  const offset = decodeContinue(q.continue ?? null);
  const page = await listCapacity(db, { state: q.state, location: q.location, search: q.search, limit: q.limit, offset });
  const next = offset + page.items.length < page.total ? offset + page.items.length : null;
  return { apiVersion: 'v1', kind: 'MachineCapacityList', items: page.items.map(capacityResource), metadata: { continue: encodeContinue(next), total: page.total } };
});
