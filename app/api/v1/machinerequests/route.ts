import { z } from 'zod';
import { approvalQueue } from '@/server/fleet/operator';
import { machineRequestResource } from '@/server/fleet/resources';
import { decodeContinue, encodeContinue, parseQuery } from '@/server/http/pagination';
import { operatorRoute } from '@/server/http/rest';

export const dynamic = 'force-dynamic';

const listQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50), continue: z.string().max(100).optional() });

/**
 * The approval queue: machine requests of every project awaiting an operator, oldest first, each
 * with the free capacity matching its class and location. Act on one at
 * `/api/v1/projects/{project}/machines/{name}/approve` (or `/reject`).
 */
export const GET = operatorRoute({ module: 'fleet' }, async ({ db, url }) => {
  const q = parseQuery(url, listQuery);
  const offset = decodeContinue(q.continue ?? null);
  const rows = await approvalQueue(db, { limit: q.limit, offset });
  return { apiVersion: 'v1', kind: 'MachineList', items: rows.map(machineRequestResource), metadata: { continue: encodeContinue(rows.length === q.limit ? offset + rows.length : null) } };
});
