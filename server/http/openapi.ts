import { z } from 'zod';
import type { ApiGroup, BodySpec, RestRoute } from './declare';
import { moduleEnabled } from './modules';
import type { RouteTable } from './route-table';

/**
 * What REST v1 says about itself, from the route table: `GET /api/v1` (the groups this deployment
 * serves and their routes) and `GET /api/v1/openapi.json` (the OpenAPI 3.1 document). Their JSON
 * schemas are the routes' own zod schemas (zod's toJSONSchema), so the document cannot disagree
 * with what a route accepts.
 */

const errorSchema = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, field: { type: 'string' }, details: { type: 'object' } },
    },
  },
};

const served = (g: ApiGroup) => !g.module || moduleEnabled(g.module);

/** The groups (and their routes) this deployment serves: a module switched off by configuration is absent. */
export function servedGroups(table: RouteTable): ApiGroup[] {
  return table.groups.filter(served);
}

export function servedRoutes(table: RouteTable): RestRoute[] {
  return table.routes.filter((r) => served(r.group));
}

/** `GET /api/v1`: discovery. */
export function discoveryDocument(table: RouteTable) {
  const routes = servedRoutes(table);
  return {
    version: 'v1',
    groups: servedGroups(table).map((g) => ({
      name: g.name,
      description: g.description,
      routes: routes.filter((r) => r.group === g).map((r) => `${r.method} ${r.path}`),
    })),
    openapi: '/api/v1/openapi.json',
  };
}

/** A zod schema as JSON schema — what a request may send (its input side), or what an answer holds (`output`) — without the `$schema` line. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

const outputs = new WeakMap<RestRoute, Record<string, unknown>>();

/** A route's successful answer as OpenAPI describes it (computed once per route). */
function outputOf(route: RestRoute): Record<string, unknown> {
  let output = outputs.get(route);
  if (!output) outputs.set(route, (output = jsonSchema(route.output, 'output')));
  return output;
}

const memo = new WeakMap<RestRoute, { query: unknown[]; body?: Record<string, unknown> }>();

/** A route's query parameters and request body as OpenAPI describes them (computed once per route). */
function inputsOf(route: RestRoute) {
  let inputs = memo.get(route);
  if (!inputs) {
    const query = route.query ? jsonSchema(route.query) : undefined;
    const required = new Set((query?.required as string[] | undefined) ?? []);
    inputs = {
      query: Object.entries((query?.properties ?? {}) as Record<string, Record<string, unknown>>).map(([name, { description, ...schema }]) => ({
        name,
        in: 'query',
        required: required.has(name),
        ...(description ? { description } : {}),
        schema,
      })),
      body: route.body && bodySchema(route.body),
    };
    memo.set(route, inputs);
  }
  return inputs;
}

function bodySchema(body: BodySpec): Record<string, unknown> {
  // A body whose schema depends on a path parameter: one of the schemas (zod has no way to say "chosen by the path").
  return body.kind === 'json' ? jsonSchema(body.schema) : { oneOf: Object.values(body.schemas).map((schema) => jsonSchema(schema)) };
}

/** Who may call a route, for people (`description`) and for tools (`x-meridian-token`). */
function callers(route: RestRoute) {
  const { auth } = route;
  switch (auth.kind) {
    case 'operator':
      return { description: 'Needs an operator token (acts for a platform operator); project and cluster tokens are refused with 403.', token: 'operator' };
    case 'projectRead':
      return {
        description: 'Project tokens of this project (viewer and up), user tokens of its members, or an operator token for any project.',
        token: 'project:viewer+operator',
      };
    case 'projectOrOperator':
      return {
        description: `Project tokens of this project (${auth.minRole} and up, not cluster tokens), user tokens of its members with that role, or an operator token for any project.`,
        token: `project:${auth.minRole}+operator`,
      };
    case 'token':
      return { token: `project:${auth.minRole}` };
    case 'user':
      return {
        description:
          "Needs a user token (acts for the user who made it, with that user's current memberships) or an operator token (its operator); project and cluster tokens are refused with 403.",
        token: 'user+operator',
      };
    case 'anyToken':
      return { description: 'Any valid token: project, cluster, user or operator.', token: 'any' };
  }
}

/** `GET /api/v1/openapi.json`: the OpenAPI 3.1 document for the routes this deployment serves. */
export function openApiDocument(table: RouteTable) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of servedRoutes(table)) {
    const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const { query, body } = inputsOf(route);
    const { description, token } = callers(route);
    (paths[route.path] ??= {})[route.method.toLowerCase()] = {
      summary: route.summary,
      ...(description ? { description } : {}),
      'x-meridian-token': token,
      tags: [route.group.name],
      security: [{ bearer: [] }],
      parameters: [...params, ...query],
      ...(body ? { requestBody: { required: route.body?.kind !== 'json' || !route.body.optional, content: { 'application/json': { schema: body } } } } : {}),
      responses: {
        '2XX': {
          description: 'Success: 200, 201 when created, 202 when accepted and completed in the background',
          content: { 'application/json': { schema: outputOf(route) } },
        },
        '400': { description: 'Invalid input (field named)', content: { 'application/json': { schema: errorSchema } } },
        '401': { description: 'Missing, unknown or revoked token' },
        '403': { description: 'Forbidden (wrong kind of token, read-only token) or quota exceeded' },
        '404': { description: 'Not found (or not yours)' },
        '409': { description: 'Conflict' },
        '413': { description: 'Body too large' },
        '429': { description: 'Rate limited (Retry-After)' },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Meridian API', version: 'v1' },
    servers: [{ url: '/' }],
    tags: servedGroups(table).map((g) => ({ name: g.name, description: g.description })),
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}
