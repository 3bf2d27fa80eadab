/**
 * What makes the route table one table: a route is declared with its handler and schemas or not
 * at all, a method and path are declared once, and every route of every domain is in it.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { describe, expect, test } from 'vitest';
import { apiRoutes, apiTable } from '@/server/api/routes';
import { jsonBody, jsonBodyByParam, operatorRoute, projectReadRoute, tokenRoute, type RestRoute } from './declare';
import { routeTable } from './route-table';

const group = { name: 'test', description: 'routes of this test' };
const handler = async () => ({});
const output = z.object({});
const route = (p: string, method: 'GET' | 'POST' = 'GET') => operatorRoute({ method, path: p, group, summary: 's', output, handler });

describe('declaring a route', () => {
  test('a path under /api/v1 of lower-case segments and {params}, a handler, a body only where a request has one', () => {
    expect(() => route('/api/v2/things')).toThrow(/REST v1 path/);
    expect(() => route('/api/v1/Things')).toThrow(/REST v1 path/);
    expect(() => route('/api/v1/things/[name]')).toThrow(/REST v1 path/);
    expect(() => route('/api/v1')).toThrow(/REST v1 path/);
    expect(() => operatorRoute({ method: 'GET', path: '/api/v1/things', group, summary: 's', output, handler: undefined as never })).toThrow(/no handler/);
    expect(() => operatorRoute({ method: 'GET', path: '/api/v1/things', group, summary: 's', output, body: jsonBody(z.object({})) as never, handler })).toThrow(
      /GET has no body/,
    );
    expect(() =>
      operatorRoute({
        method: 'POST',
        path: '/api/v1/things',
        group,
        summary: 's',
        output,
        body: jsonBodyByParam('kind', { a: z.object({}) }, () => new Error('x')),
        handler,
      }),
    ).toThrow(/lacks/);
    expect(() => projectReadRoute({ method: 'POST' as 'GET', path: '/api/v1/projects/{project}/things', group, summary: 's', output, handler })).toThrow(
      /GET only/,
    );
    expect(route('/api/v1/things/{name}')).toMatchObject({ method: 'GET', path: '/api/v1/things/{name}', auth: { kind: 'operator' } });
  });

  test('the table refuses a route declared twice, two paths one request would match, and a group it does not list', () => {
    expect(() => routeTable([group], [route('/api/v1/things'), route('/api/v1/things')])).toThrow('GET /api/v1/things is declared twice');
    expect(() => routeTable([group], [route('/api/v1/things/{name}'), route('/api/v1/things/{id}', 'POST')])).toThrow(/match the same requests/);
    expect(() => routeTable([{ ...group }], [route('/api/v1/things')])).toThrow(/not one of the API's groups/);
    const table = routeTable([group], [route('/api/v1/things'), route('/api/v1/things', 'POST'), route('/api/v1/things/{name}')]);
    expect(table.routes.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /api/v1/things', 'POST /api/v1/things', 'GET /api/v1/things/{name}']);
  });

  test('a project token route names its least role; operators reach projects only through routes that say so', () => {
    const own = tokenRoute({ method: 'GET', path: '/api/v1/projects/{project}/things', group, summary: 's', output, minRole: 'editor', handler });
    expect(own.auth).toEqual({ kind: 'token', minRole: 'editor' });
    const auths = new Set(apiRoutes.map((r: RestRoute) => r.auth.kind));
    expect([...auths].sort()).toEqual(['anyToken', 'operator', 'projectOrOperator', 'projectRead', 'token', 'user']);
  });
});

describe('the REST v1 table', () => {
  test('holds every route every domain declares (each server/<domain>/rest.ts, and server/api/tenancy.ts for tenancy), each once', async () => {
    const server = path.join(process.cwd(), 'server');
    const files = [
      ...readdirSync(server)
        .map((d) => path.join(server, d, 'rest.ts'))
        .filter((f) => existsSync(f)),
      path.join(server, 'api', 'tenancy.ts'),
    ];
    const declared: RestRoute[] = [];
    for (const f of files) {
      const exported = Object.values((await import(f)) as Record<string, unknown>);
      declared.push(
        ...exported
          .filter(Array.isArray)
          .flat()
          .filter((r): r is RestRoute => typeof r?.handler === 'function' && typeof r?.path === 'string'),
      );
    }
    expect(files.length).toBeGreaterThanOrEqual(5);
    expect(
      declared.filter((r) => !apiRoutes.includes(r)).map((r) => `${r.method} ${r.path}`),
      'add them to server/api/routes.ts',
    ).toEqual([]);
    expect(declared.length).toBe(apiRoutes.length);
    expect(new Set(apiRoutes.map((r) => `${r.method} ${r.path}`)).size).toBe(apiRoutes.length);
    for (const r of apiRoutes) expect(apiTable.groups, `${r.method} ${r.path}`).toContain(r.group);
  });
});
