import { z } from 'zod';
import { expectSameAsPath, operatorRoute, readJson } from '@/server/http/rest';
import { deleteGrantPolicy, updateGrantPolicy } from '@/server/quota/policies';
import { grantPolicyReplaceInput, grantPolicyResource } from '@/server/quota/resources';
import { quotaName } from '@/server/quota/schemas';

export const dynamic = 'force-dynamic';

type Params = { name: string };
const paramsSchema = z.object({ name: quotaName });

/** Replaces the spec (recompiled, generation bumped); the Ready condition reports the compiler. */
export const PUT = operatorRoute<Params>({ module: 'quota' }, async ({ db, req, params, actor }) => {
  const { name } = paramsSchema.parse(params);
  const body = grantPolicyReplaceInput.parse(await readJson(req));
  expectSameAsPath('metadata.name', body.metadata?.name, name);
  return grantPolicyResource((await updateGrantPolicy(db, name, body.spec, actor))!);
});

export const DELETE = operatorRoute<Params>({ module: 'quota' }, async ({ db, params, actor }) => deleteGrantPolicy(db, paramsSchema.parse(params).name, actor));
