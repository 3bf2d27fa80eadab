import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createApiToken, revokeApiToken } from '@/server/tenancy/tokens';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { createApiServer } from './api-server';
import { checkCsrf } from './csrf';
import { jsonBody, tokenRoute } from './declare';
import { routeTable } from './route-table';

const actor = systemActor('test');
const group = { name: 'test', description: 'routes of this test' };
/** A route of its own, served by the real REST server: it answers the token's project and the body it read. */
const echo = tokenRoute({
  method: 'POST',
  path: '/api/v1/projects/{project}/echo',
  group,
  summary: 'echo',
  output: z.object({ project: z.string(), body: z.unknown() }),
  minRole: 'editor',
  body: jsonBody(z.unknown()),
  handler: async ({ principal, body }) => ({ project: principal.projectSlug, body: body() }),
});
let server: Server;
let base = '';

beforeAll(async () => {
  const api = createApiServer(routeTable([group], [echo]));
  server = createServer((req, res) => void api.handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const call = (project: string, token: string | null, body = '{}', headers: Record<string, string> = {}) =>
  fetch(`${base}/api/v1/projects/${project}/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body,
  });

describe('REST token routes', () => {
  test('authenticate, scope to the token project, enforce the role, code errors', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const other = await makeProject(db);
    const rw = await createApiToken(db, { projectId: project.id, name: 'rw' }, actor);
    const ro = await createApiToken(db, { projectId: project.id, name: 'ro', role: 'viewer' }, actor);

    expect((await call(project.slug, null)).status).toBe(401);
    expect((await call(project.slug, 'mrd_bogus')).status).toBe(401);
    const ok = await call(project.slug, rw.secret, '{"a":1}');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ project: project.slug, body: { a: 1 } });

    const foreign = await call(other.project.slug, rw.secret);
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toEqual({ error: { code: 'NotFound', message: `project "${other.project.slug}" not found`, field: 'project' } });

    expect((await call(project.slug, ro.secret)).status).toBe(403);
    const malformed = await call(project.slug, rw.secret, '{nope');
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error).toMatchObject({ code: 'ValidationFailed', field: 'body' });
    const big = await call(project.slug, rw.secret, JSON.stringify({ x: 'y'.repeat(70_000) }));
    expect(big.status).toBe(413);

    await revokeApiToken(db, project.id, rw.id, actor);
    expect((await call(project.slug, rw.secret)).status).toBe(401);
  });
});

describe('CSRF check', () => {
  const req = (headers: Record<string, string>, method = 'POST') =>
    new Request('http://localhost:3000/api/trpc/x', { method, headers: { host: 'localhost:3000', ...headers } });
  test('refuses state-changing calls without the header or from another site', () => {
    expect(checkCsrf(req({}))?.status).toBe(403);
    expect(checkCsrf(req({ 'x-meridian-csrf': '1', origin: 'http://evil.example' }))?.status).toBe(403);
    expect(checkCsrf(req({ 'x-meridian-csrf': '1', 'sec-fetch-site': 'cross-site' }))?.status).toBe(403);
    expect(checkCsrf(req({ 'x-meridian-csrf': '1', origin: 'http://localhost:3000', 'sec-fetch-site': 'same-origin' }))).toBeNull();
    expect(checkCsrf(req({}, 'GET'))).toBeNull();
  });
});

describe('CSRF check of an Origin that names no site', () => {
  const req = (origin: string) =>
    new Request('http://localhost:3000/api/trpc/x', { method: 'POST', headers: { host: 'localhost:3000', 'x-meridian-csrf': '1', origin } });
  test.each(['null', 'not a url', 'http://', 'localhost:3000', '', 'file:///etc/passwd'])('Origin %j is refused with 403 and a clear body', async (origin) => {
    const refused = checkCsrf(req(origin));
    expect(refused?.status).toBe(403);
    expect(await refused?.json()).toEqual({ error: { code: 'Forbidden', message: 'cross-site request refused (CSRF check)' } });
  });
});
