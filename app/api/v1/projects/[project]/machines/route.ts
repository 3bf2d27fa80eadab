import { jsonReply } from '@/server/http/buffered';
import { z } from 'zod';
import { listMachines, requestMachine } from '@/server/fleet/machines';
import { machinePhases } from '@/server/fleet/phases';
import { machineResource, machineResourceInput } from '@/server/fleet/resources';
import { decodeContinue, encodeContinue, parseQuery } from '@/server/http/pagination';
import { readJson, tokenRoute } from '@/server/http/rest';
import { tokenActor } from '@/server/tenancy/tokens';

export const dynamic = 'force-dynamic';

const query = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50), continue: z.string().max(100).optional(), phase: z.enum(machinePhases).optional(), search: z.string().max(100).optional() });

/** The live machines; `?phase=Released` lists the released ones (their names may be in use again). */
export const GET = tokenRoute<{ project: string }>({ minRole: 'viewer', module: 'fleet' }, async ({ db, url, principal }) => {
  const q = parseQuery(url, query);
  const offset = decodeContinue(q.continue ?? null);
  const page = await listMachines(db, principal.projectId, { phase: q.phase, search: q.search, limit: q.limit, offset });
  const next = offset + page.items.length < page.total ? offset + page.items.length : null;
  return { kind: 'MachineList', items: page.items.map(machineResource), metadata: { total: page.total, continue: encodeContinue(next) } };
});

export const POST = tokenRoute<{ project: string }>({ minRole: 'editor', module: 'fleet' }, async ({ db, req, principal }) => {
  const body = machineResourceInput.parse(await readJson(req));
  const machine = await requestMachine(db, principal.projectId, { ...body.spec, name: body.metadata.name }, tokenActor(principal));
  return jsonReply(machineResource(machine), { status: 201 });
});
