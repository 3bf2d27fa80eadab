import { jsonReply } from '@/server/http/buffered';
import { z } from 'zod';
import { decodeContinue, encodeContinue, parseQuery } from '@/server/http/pagination';
import { expectSameAsPath, operatorRoute, projectReadRoute, readJson } from '@/server/http/rest';
import { createGrant, listGrants } from '@/server/quota/grants';
import { projectIdBySlug } from '@/server/tenancy/projects';
import { grantResource, grantResourceInput } from '@/server/quota/resources';

export const dynamic = 'force-dynamic';

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  continue: z.string().max(100).optional(),
});

/** The project's grants: its own project for a project token, any project for an operator token. */
export const GET = projectReadRoute<{ project: string }>({ module: 'quota' }, async ({ db, url, project }) => {
  const q = parseQuery(url, listQuery);
  const page = await listGrants(db, { projectId: project.id, limit: q.limit, offset: decodeContinue(q.continue ?? null) });
  return { apiVersion: 'v1', kind: 'ResourceGrantList', items: page.items.map(grantResource), metadata: { continue: encodeContinue(page.nextOffset), total: page.total } };
});

/** Operator: gives the project a grant (source Operator); its buckets' limits follow in the same transaction. */
export const POST = operatorRoute<{ project: string }>({ module: 'quota' }, async ({ db, req, params, actor }) => {
  const body = grantResourceInput.parse(await readJson(req));
  expectSameAsPath('spec.consumerRef.name', body.spec.consumerRef?.name, params.project);
  const projectId = await projectIdBySlug(db, params.project);
  const { grant } = await createGrant(db, { projectId, name: body.metadata.name, allowances: body.spec.allowances, source: 'Operator' }, actor);
  return jsonReply(grantResource(grant), { status: 201 });
});
