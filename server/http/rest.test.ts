import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createApiToken, revokeApiToken } from '@/server/tenancy/tokens';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { checkCsrf } from './csrf';
import { readJson, tokenRoute } from './rest';

const actor = systemActor('test');
const echo = tokenRoute<{ project: string }>({ minRole: 'editor' }, async ({ principal, req }) => ({ project: principal.projectSlug, body: await readJson(req) }));
const call = (project: string, token: string | null, body = '{}', headers: Record<string, string> = {}) =>
  echo(
    new Request(`http://x/api/v1/projects/${project}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body,
    }),
    { params: Promise.resolve({ project }) },
  );

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
  const req = (headers: Record<string, string>, method = 'POST') => new Request('http://localhost:3000/api/trpc/x', { method, headers: { host: 'localhost:3000', ...headers } });
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
