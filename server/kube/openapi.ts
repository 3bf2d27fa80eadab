import { createHash } from 'node:crypto';
import { z } from 'zod';
import { apiVersionOf, type KindDeclaration } from './declare';
import { groupsOf } from './discovery';

/**
 * OpenAPI of a control plane, from the declared kinds' zod schemas: v3 per group-version
 * (`/openapi/v3/apis/{group}/{version}`, listed by `/openapi/v3`) and one v2 document
 * (`/openapi/v2`, JSON). Each kind's schema carries `x-kubernetes-group-version-kind`, so
 * `kubectl explain` finds it, and each PATCH operation names its query parameters
 * (`fieldValidation` among them), so kubectl leaves validation to the server.
 */

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

const objectMeta = {
  type: 'object',
  description: 'Standard object metadata: name, namespace, labels, annotations, and what the system sets.',
  properties: {
    name: { type: 'string', description: 'The name, unique in its namespace and kind.' },
    namespace: { type: 'string', description: 'The namespace (default: "default").' },
    uid: { type: 'string', description: 'Set by the system: unique in time and space.' },
    resourceVersion: {
      type: 'string',
      description: 'Set by the system: the version of this object, for optimistic concurrency (a stale one is refused with 409).',
    },
    generation: { type: 'integer', format: 'int64', description: 'Set by the system: bumped when the spec changes.' },
    creationTimestamp: { type: 'string', format: 'date-time', description: 'Set by the system: when the object was created.' },
    labels: { type: 'object', additionalProperties: { type: 'string' }, description: 'Labels: selectable key/value pairs.' },
    annotations: { type: 'object', additionalProperties: { type: 'string' }, description: 'Annotations: unselectable key/value pairs.' },
    finalizers: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set', description: 'Finalizers.' },
    managedFields: {
      type: 'array',
      description: 'Which field manager set which fields (server-side apply).',
      items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  },
};

/** The OpenAPI definition name of a kind: `com.miloapis.ipam.v1alpha1.IPClaim`. */
export function definitionName(k: Pick<KindDeclaration, 'group' | 'version' | 'kind'>): string {
  return `${k.group.split('.').reverse().join('.')}.${k.version}.${k.kind}`;
}

/** Lists are atomic in these kinds (no merge keys): said so for clients that merge. */
function markLists(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(markLists);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) out[key] = markLists(value);
  if (out.type === 'array') out['x-kubernetes-list-type'] = 'atomic';
  return out;
}

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return markLists(rest) as Record<string, unknown>;
}

function kindSchemas(k: KindDeclaration, ref: (name: string) => string) {
  const name = definitionName(k);
  const gvk = { group: k.group, version: k.version, kind: k.kind };
  return {
    [name]: {
      type: 'object',
      description: k.description,
      properties: {
        apiVersion: { type: 'string', description: `APIVersion: ${apiVersionOf(k)}` },
        kind: { type: 'string', description: `Kind: ${k.kind}` },
        metadata: { $ref: ref(`${META}.ObjectMeta`) },
        spec: { ...jsonSchema(k.spec), description: `The desired state of the ${k.kind}.` },
        status: { ...jsonSchema(k.status), description: `The observed state of the ${k.kind}, written by the system (read-only).` },
      },
      'x-kubernetes-group-version-kind': [gvk],
    },
    [`${name}List`]: {
      type: 'object',
      description: `A list of ${k.kind}.`,
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { type: 'object', properties: { resourceVersion: { type: 'string' }, continue: { type: 'string' } } },
        items: { type: 'array', items: { $ref: ref(name) } },
      },
      required: ['items'],
      'x-kubernetes-group-version-kind': [{ ...gvk, kind: `${k.kind}List` }],
    },
  };
}

const query = (name: string, description: string, type = 'string') => ({ name, in: 'query', description, schema: { type }, uniqueItems: true });
const writeParameters = [
  query('dryRun', 'All: decide everything, write nothing'),
  query('fieldManager', 'the name of the actor making the change'),
  query('fieldValidation', 'Strict, Warn (default) or Ignore: what unknown fields do'),
];

function paths(k: KindDeclaration, ref: (name: string) => string, v2: boolean) {
  const gvk = { group: k.group, version: k.version, kind: k.kind };
  const base = `/apis/${k.group}/${k.version}${k.namespaced ? '/namespaces/{namespace}' : ''}/${k.plural}`;
  const body = (name: string) =>
    v2
      ? { parameters: [{ name: 'body', in: 'body', required: true, schema: { $ref: ref(name) } }] }
      : { requestBody: { content: { '*/*': { schema: { $ref: ref(name) } } } } };
  const ok = (name: string) =>
    v2
      ? { '200': { description: 'OK', schema: { $ref: ref(name) } } }
      : { '200': { description: 'OK', content: { 'application/json': { schema: { $ref: ref(name) } } } } };
  const op = (action: string, id: string, schema: string, extra: Record<string, unknown> = {}) => ({
    operationId: `${id}${k.kind}`,
    tags: [`${k.group}_${k.version}`],
    responses: ok(schema),
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
    ...extra,
  });
  const pathParams = (withName: boolean) => [
    ...(withName
      ? [{ name: 'name', in: 'path', required: true, description: `name of the ${k.kind}`, ...(v2 ? { type: 'string' } : { schema: { type: 'string' } }) }]
      : []),
    ...(k.namespaced
      ? [
          {
            name: 'namespace',
            in: 'path',
            required: true,
            description: 'object name and auth scope',
            ...(v2 ? { type: 'string' } : { schema: { type: 'string' } }),
          },
        ]
      : []),
  ];
  const params = (list: ReturnType<typeof query>[]) => (v2 ? list.map(({ schema, ...p }) => ({ ...p, type: schema.type })) : list);
  const name = definitionName(k);
  return {
    [base]: {
      get: op('list', 'list', `${name}List`, {
        parameters: params([
          query('labelSelector', 'label selector'),
          query('fieldSelector', 'field selector'),
          query('limit', 'page size', 'integer'),
          query('continue', 'next page'),
        ]),
      }),
      ...(k.storage.create
        ? {
            post: op(
              'post',
              'create',
              name,
              v2 ? { parameters: [...body(name).parameters!, ...params(writeParameters)] } : { ...body(name), parameters: params(writeParameters) },
            ),
          }
        : {}),
      parameters: pathParams(false),
    },
    [`${base}/{name}`]: {
      get: op('get', 'read', name),
      put: op(
        'put',
        'replace',
        name,
        v2 ? { parameters: [...body(name).parameters!, ...params(writeParameters)] } : { ...body(name), parameters: params(writeParameters) },
      ),
      patch: op('patch', 'patch', name, {
        parameters: params([...writeParameters, query('force', 'server-side apply: take over conflicting fields', 'boolean')]),
        ...(v2
          ? {}
          : {
              requestBody: {
                content: { 'application/merge-patch+json': { schema: { type: 'object' } }, 'application/apply-patch+yaml': { schema: { type: 'object' } } },
              },
            }),
      }),
      delete: op('delete', 'delete', name, { parameters: params([query('dryRun', 'All: decide everything, write nothing')]) }),
      parameters: pathParams(true),
    },
    [`${base}/{name}/status`]: { get: op('get', 'readStatus', name), parameters: pathParams(true) },
  };
}

/** The OpenAPI v3 document of one group-version (undefined when none is declared). */
export function openApiV3(kinds: readonly KindDeclaration[], group: string, version: string) {
  const mine = kinds.filter((k) => k.group === group && k.version === version);
  if (mine.length === 0) return undefined;
  const ref = (name: string) => `#/components/schemas/${name}`;
  return {
    openapi: '3.0.0',
    info: { title: 'Meridian', version: 'v1.32.0' },
    paths: Object.assign({}, ...mine.map((k) => paths(k, ref, false))),
    components: { schemas: Object.assign({ [`${META}.ObjectMeta`]: objectMeta }, ...mine.map((k) => kindSchemas(k, ref))) },
  };
}

/** The OpenAPI v3 document of the core group (namespaces). */
export function openApiV3Core() {
  const ref = (name: string) => `#/components/schemas/${name}`;
  return {
    openapi: '3.0.0',
    info: { title: 'Meridian', version: 'v1.32.0' },
    paths: {},
    components: {
      schemas: {
        [`${META}.ObjectMeta`]: objectMeta,
        'io.k8s.api.core.v1.Namespace': {
          type: 'object',
          description: 'A namespace of the project: objects of namespaced kinds live in one.',
          properties: {
            apiVersion: { type: 'string' },
            kind: { type: 'string' },
            metadata: { $ref: ref(`${META}.ObjectMeta`) },
            spec: { type: 'object' },
            status: { type: 'object' },
          },
          'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'Namespace' }],
        },
      },
    },
  };
}

/** A content hash of a document: the `?hash=` of its URL in the v3 index. */
export const documentHash = (doc: unknown) => createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 64).toUpperCase();

/** `/openapi/v3`: the URL of each group-version's document (server-relative, under the control plane's root). */
export function openApiV3Index(kinds: readonly KindDeclaration[], root: string) {
  const entries: Record<string, { serverRelativeURL: string }> = {
    'api/v1': { serverRelativeURL: `${root}/openapi/v3/api/v1?hash=${documentHash(openApiV3Core())}` },
  };
  for (const g of groupsOf(kinds)) {
    for (const v of g.versions) {
      const path = `apis/${g.name}/${v.version}`;
      entries[path] = { serverRelativeURL: `${root}/openapi/v3/${path}?hash=${documentHash(openApiV3(kinds, g.name, v.version))}` };
    }
  }
  return { paths: entries };
}

/** `/openapi/v2`: every kind in one Swagger 2.0 document (JSON). */
export function openApiV2(kinds: readonly KindDeclaration[]) {
  const ref = (name: string) => `#/definitions/${name}`;
  const toV2 = (schemas: Record<string, unknown>) =>
    JSON.parse(JSON.stringify(schemas).replaceAll('#/components/schemas/', '#/definitions/').replaceAll('"nullable":true', '"x-nullable":true'));
  return {
    swagger: '2.0',
    info: { title: 'Meridian', version: 'v1.32.0' },
    paths: Object.assign({}, ...kinds.map((k) => paths(k, ref, true))),
    definitions: toV2(Object.assign({ [`${META}.ObjectMeta`]: objectMeta }, ...kinds.map((k) => kindSchemas(k, ref)))),
  };
}
