import { jsonReply } from '@/server/http/buffered';
import { operatorRoute, readJson } from '@/server/http/rest';
import { createGrantPolicy, listGrantPolicies } from '@/server/quota/policies';
import { grantPolicyResource, grantPolicyResourceInput } from '@/server/quota/resources';

export const dynamic = 'force-dynamic';

export const GET = operatorRoute({ module: 'quota' }, async ({ db }) => {
  const items = await listGrantPolicies(db);
  return { apiVersion: 'v1', kind: 'GrantCreationPolicyList', items: items.map(grantPolicyResource), metadata: { continue: null, total: items.length } };
});

/**
 * Saves a GrantCreationPolicy (201). Expressions that do not compile are stored not Ready, with the
 * CEL compiler's message in `status.conditions[Ready]`, and never applied.
 */
export const POST = operatorRoute({ module: 'quota' }, async ({ db, req, actor }) => {
  const body = grantPolicyResourceInput.parse(await readJson(req));
  const policy = await createGrantPolicy(db, { ...body.spec, name: body.metadata.name }, actor);
  return jsonReply(grantPolicyResource(policy!), { status: 201 });
});
