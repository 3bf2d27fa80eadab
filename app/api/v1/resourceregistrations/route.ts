import { jsonReply } from '@/server/http/buffered';
import { operatorRoute, readJson } from '@/server/http/rest';
import { createRegistration, listRegistrations } from '@/server/quota/registrations';
import { registrationResource, registrationResourceInput } from '@/server/quota/resources';

export const dynamic = 'force-dynamic';

/** Every ResourceRegistration (a short list: one per quota-managed type). */
export const GET = operatorRoute({ module: 'quota' }, async ({ db }) => {
  const items = await listRegistrations(db);
  return { apiVersion: 'v1', kind: 'ResourceRegistrationList', items: items.map(registrationResource), metadata: { continue: null, total: items.length } };
});

/** Registers a resource type; grants waiting for it turn Active in the same transaction. */
export const POST = operatorRoute({ module: 'quota' }, async ({ db, req, actor }) => {
  const body = registrationResourceInput.parse(await readJson(req));
  return jsonReply(registrationResource(await createRegistration(db, body.spec, actor)), { status: 201 });
});
