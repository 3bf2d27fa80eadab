import { z } from 'zod';
import { expectSameAsPath, operatorRoute, readJson } from '@/server/http/rest';
import { deleteRegistration, getRegistration, updateRegistration } from '@/server/quota/registrations';
import { registrationPatchInput, registrationResource } from '@/server/quota/resources';
import { resourceType } from '@/server/quota/schemas';

export const dynamic = 'force-dynamic';

type Params = { group: string; resource: string };

/** The registration's name is its resource type, `<group>/<resource>`: two path segments. */
const typeFromPath = (params: Params) => z.object({ resourceType }).parse({ resourceType: `${params.group}/${params.resource}` }).resourceType;

export const GET = operatorRoute<Params>({ module: 'quota' }, async ({ db, params }) => registrationResource(await getRegistration(db, typeFromPath(params))));

/** Changes only the fields named in `spec`; the resource type itself is immutable. */
export const PATCH = operatorRoute<Params>({ module: 'quota' }, async ({ db, req, params, actor }) => {
  const type = typeFromPath(params);
  const { spec } = registrationPatchInput.parse(await readJson(req));
  const { resourceType: named, ...changes } = spec;
  expectSameAsPath('spec.resourceType', named, type);
  return registrationResource(await updateRegistration(db, type, changes, actor));
});

/** Unregisters a type; 409 while any grant allows it or any live claim holds it. */
export const DELETE = operatorRoute<Params>({ module: 'quota' }, async ({ db, params, actor }) => deleteRegistration(db, typeFromPath(params), actor));
