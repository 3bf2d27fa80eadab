import { z } from 'zod';
import { expectSameAsPath, operatorRoute, readJson } from '@/server/http/rest';
import { deleteGrant, updateGrant } from '@/server/quota/grants';
import { projectIdBySlug } from '@/server/tenancy/projects';
import { grantReplaceInput, grantResource } from '@/server/quota/resources';
import { quotaName } from '@/server/quota/schemas';

export const dynamic = 'force-dynamic';

type Params = { project: string; name: string };
const paramsSchema = z.object({ project: z.string().min(1).max(63), name: quotaName });

/**
 * Operator: replaces the grant's allowances. Shrinking below what is allocated is allowed (nothing
 * is revoked; the bucket shows over its limit and new claims are denied).
 */
export const PUT = operatorRoute<Params>({ module: 'quota' }, async ({ db, req, params, actor }) => {
  const { project, name } = paramsSchema.parse(params);
  const body = grantReplaceInput.parse(await readJson(req));
  expectSameAsPath('metadata.name', body.metadata?.name, name);
  expectSameAsPath('spec.consumerRef.name', body.spec.consumerRef?.name, project);
  const { grant } = await updateGrant(db, await projectIdBySlug(db, project), name, body.spec.allowances, actor);
  return grantResource(grant);
});

/** Operator: deletes the grant; its types' limits drop in the same transaction (claims are not revoked). */
export const DELETE = operatorRoute<Params>({ module: 'quota' }, async ({ db, params, actor }) => {
  const { project, name } = paramsSchema.parse(params);
  return deleteGrant(db, await projectIdBySlug(db, project), name, actor);
});
