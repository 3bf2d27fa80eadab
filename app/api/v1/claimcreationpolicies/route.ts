import { jsonReply } from '@/server/http/buffered';
import { operatorRoute, readJson } from '@/server/http/rest';
import { createClaimPolicy, listClaimPolicies } from '@/server/quota/policies';
import { claimPolicyResource, claimPolicyResourceInput } from '@/server/quota/resources';

export const dynamic = 'force-dynamic';

export const GET = operatorRoute({ module: 'quota' }, async ({ db }) => {
  const items = await listClaimPolicies(db);
  return { apiVersion: 'v1', kind: 'ClaimCreationPolicyList', items: items.map(claimPolicyResource), metadata: { continue: null, total: items.length } };
});

/**
 * Saves a ClaimCreationPolicy (201). Expressions that do not compile are stored not Ready, with the
 * CEL compiler's message in `status.conditions[Ready]`, and never applied.
 */
export const POST = operatorRoute({ module: 'quota' }, async ({ db, req, actor }) => {
  const body = claimPolicyResourceInput.parse(await readJson(req));
  const policy = await createClaimPolicy(db, { ...body.spec, name: body.metadata.name }, actor);
  return jsonReply(claimPolicyResource(policy!), { status: 201 });
});
