import { servedGroups, servedRoutes } from './catalog';

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

/** The OpenAPI 3.1 document for the routes this deployment serves. */
export function openApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of servedRoutes()) {
    const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const query = (route.query ?? []).map((q) => ({ name: q.name, in: 'query', required: false, description: q.description, schema: q.schema }));
    (paths[route.path] ??= {})[route.method.toLowerCase()] = {
      summary: route.summary,
      ...(route.minRole === 'operator'
        ? { description: 'Needs an operator token (acts for a platform operator); project and cluster tokens are refused with 403.' }
        : route.operatorReadable || route.operatorAllowed
          ? { description: `Project tokens of this project (${route.minRole} and up), or an operator token for any project.` }
          : {}),
      'x-meridian-token': route.minRole === 'operator' ? 'operator' : `project:${route.minRole}${route.operatorReadable || route.operatorAllowed ? '+operator' : ''}`,
      tags: [route.group],
      security: [{ bearer: [] }],
      parameters: [...params, ...query],
      ...(route.requestBody ? { requestBody: { required: true, content: { 'application/json': { schema: route.requestBody } } } } : {}),
      responses: {
        '200': { description: 'OK' },
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
    tags: servedGroups().map((g) => ({ name: g.name, description: g.description })),
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}
