/**
 * Each route declares what it answers: the OpenAPI document shows it as the route's success
 * schema, and the test suites' in-process REST caller (test/rest.ts) checks every successful answer
 * against it — so an answer that leaves the declaration fails the test that made it.
 */
import { apiTable } from '@/server/api/routes';
import { z } from 'zod';
import { describe, expect, test } from 'vitest';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { createApiToken } from '@/server/tenancy/tokens';
import { systemActor } from '@/server/audit/events';
import { apiEndpoints } from './api-server';
import { BufferedRequest } from './buffered';
import { listOutput, timestamp, tokenRoute } from './declare';
import { openApiDocument } from './openapi';
import { routeTable } from './route-table';

describe('declared outputs', () => {
  test('every route of the document has a JSON schema for its success, made from its declared output', () => {
    const doc = openApiDocument(apiTable) as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
    };
    let routes = 0;
    for (const route of apiTable.routes) {
      const operation = doc.paths[route.path]?.[route.method.toLowerCase()];
      if (!operation) continue; // a module switched off in this environment
      routes++;
      const schema = operation.responses['2XX']?.content?.['application/json']?.schema;
      const { $schema: _, ...expected } = z.toJSONSchema(route.output, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
      expect(schema, `${route.method} ${route.path}`).toEqual(expected);
    }
    expect(routes).toBeGreaterThan(50);
  });

  test('an answer its declaration refuses fails the checked caller, naming the route and the field; a matching one passes', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const { secret } = await createApiToken(db, { projectId: project.id, name: 'outputs', role: 'viewer' }, systemActor('test'));
    const group = { name: 'test', description: 'routes of this test' };
    const route = (path: string, answer: unknown) =>
      tokenRoute({
        method: 'GET',
        path,
        group,
        summary: 'answers what it is told',
        minRole: 'viewer',
        output: listOutput('ThingList', z.object({ name: z.string(), createdAt: timestamp })),
        handler: async () => answer,
      });
    const good = { kind: 'ThingList', items: [{ name: 'a', createdAt: new Date('2026-01-02T03:04:05Z') }], metadata: { continue: null } };
    const bad = { kind: 'ThingList', items: [{ name: 'a', createdAt: '2026-01-02 03:04:05+00' }], metadata: { continue: null } };
    const table = routeTable([group], [route('/api/v1/projects/{project}/good', good), route('/api/v1/projects/{project}/bad', bad)]);
    const endpoint = (path: string) => apiEndpoints(table, { checkOutputs: true }).find((e) => e.pattern === path)!.methods.GET!;
    const request = (path: string) => new BufferedRequest('GET', `http://localhost${path}`, { authorization: `Bearer ${secret}` }, Buffer.alloc(0));

    const ok = await endpoint('/api/v1/projects/{project}/good')(request(`/api/v1/projects/${project.slug}/good`), { project: project.slug });
    expect(ok.status).toBe(200);
    await expect(endpoint('/api/v1/projects/{project}/bad')(request(`/api/v1/projects/${project.slug}/bad`), { project: project.slug })).rejects.toThrow(
      /GET \/api\/v1\/projects\/\{project\}\/bad answered 200 with a body its declared output refuses: items\.0\.createdAt/,
    );
    // Unchecked (the REST server), the same answer is sent as it is.
    const unchecked = apiEndpoints(table).find((e) => e.pattern === '/api/v1/projects/{project}/bad')!.methods.GET!;
    expect((await unchecked(request(`/api/v1/projects/${project.slug}/bad`), { project: project.slug })).status).toBe(200);
  });
});
