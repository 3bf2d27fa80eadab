import { apiTable } from '@/server/api/routes';
import { createServer, request, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { systemActor } from '@/server/audit/events';
import { createApiToken } from '@/server/tenancy/tokens';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { routeHandlers } from '@/test/rest';
import { apiEndpoints, createApiServer } from './api-server';
import { bySpecificity, matchPath, segmentsOf } from './route-table';

const actor = systemActor('test');
let server: Server;
let port = 0;
let token = '';
let projectSlug = '';

beforeAll(async () => {
  const api = createApiServer(apiTable);
  server = createServer((req, res) => void api.handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
  const { db } = testDb();
  const { project } = await makeProject(db);
  projectSlug = project.slug;
  token = (await createApiToken(db, { projectId: project.id, name: 'api-server' }, actor)).secret;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

/** A raw request (chunked bodies, HEAD, OPTIONS: what fetch will not send as asked). */
function send(method: string, path: string, options: { headers?: Record<string, string>; chunks?: Buffer[] } = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: options.headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString() }));
    });
    req.on('error', reject);
    for (const c of options.chunks ?? []) req.write(c);
    req.end();
  });
}

describe('the REST v1 server', () => {
  test('answers through the declared routes, with the security headers and no caching', async () => {
    const res = await send('GET', '/api/v1/whoami', { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ project: projectSlug });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['cache-control']).toBe('no-store');
    const anonymous = await send('GET', '/api/v1/whoami');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
    expect(anonymous.headers['x-frame-options']).toBe('DENY');
  });

  test('unknown paths are a JSON 404, other methods a 405 naming what is allowed', async () => {
    const missing = await send('GET', '/api/v1/nothing-here');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toEqual({ error: { code: 'NotFound', message: 'no API route /api/v1/nothing-here', field: 'path' } });
    const wrong = await send('PUT', '/api/v1/whoami', { headers: { authorization: `Bearer ${token}` } });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect(JSON.parse(wrong.body).error.code).toBe('MethodNotAllowed');
    const options = await send('OPTIONS', `/api/v1/projects/${projectSlug}/networks`);
    expect(options.status).toBe(204);
    expect(options.headers.allow).toBe('GET, POST, HEAD, OPTIONS');
  });

  test('HEAD answers as GET without a body; a trailing slash redirects to the canonical path', async () => {
    const head = await send('HEAD', '/api/v1/whoami', { headers: { authorization: `Bearer ${token}` } });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    const slash = await send('GET', '/api/v1/whoami/?x=1');
    expect(slash.status).toBe(308);
    expect(slash.headers.location).toBe('/api/v1/whoami?x=1');
  });

  test('a streamed body over the limit is refused with 413 before it is buffered, and nothing is created', async () => {
    const { db } = testDb();
    const before = await db.execute(sql`select count(*)::int as n from networks`);
    const big = Buffer.alloc(40 * 1024, 'a');
    const res = await send('POST', `/api/v1/projects/${projectSlug}/networks`, {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      chunks: [Buffer.from('{"metadata":{"name":"x"},"pad":"'), big, big, Buffer.from('"}')],
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'PayloadTooLarge', field: 'body' } });
    expect(await db.execute(sql`select count(*)::int as n from networks`)).toEqual(before);
  });

  test('bodies reach the handlers as sent, and the server answers as the same route called in-process', async () => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ metadata: { name: 'direct-net' }, spec: { cidrs: [{ cidr: '10.200.0.0/16' }] } });
    const created = await send('POST', `/api/v1/projects/${projectSlug}/networks`, {
      headers,
      chunks: [Buffer.from(body.slice(0, 10)), Buffer.from(body.slice(10))],
    });
    expect(created.status).toBe(201);
    expect(created.headers['content-type']).toBe('application/json');
    expect(JSON.parse(created.body)).toMatchObject({ metadata: { name: 'direct-net' } });
    const malformed = await send('POST', `/api/v1/projects/${projectSlug}/networks`, { headers, chunks: [Buffer.from('{nope')] });
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body)).toMatchObject({ error: { code: 'ValidationFailed', field: 'body' } });
    const untyped = await send('POST', `/api/v1/projects/${projectSlug}/networks`, {
      headers: { authorization: `Bearer ${token}` },
      chunks: [Buffer.from(body)],
    });
    expect(JSON.parse(untyped.body)).toMatchObject({ error: { code: 'ValidationFailed', field: 'content-type' } });

    // The same route called in-process with the parameters given (what the route tests do).
    const { GET } = routeHandlers('/api/v1/projects/{project}/networks/{name}');
    const inProcess = await GET(new Request(`http://x/api/v1/projects/${projectSlug}/networks/direct-net`, { headers }), {
      params: Promise.resolve({ project: projectSlug, name: 'direct-net' }),
    });
    const viaServer = await send('GET', `/api/v1/projects/${projectSlug}/networks/direct-net`, { headers });
    expect(viaServer.status).toBe(inProcess.status);
    expect(viaServer.headers['content-type']).toBe(inProcess.headers.get('content-type'));
    expect(JSON.parse(viaServer.body)).toEqual(await inProcess.json());
    // Discovery is served from the same table.
    const discovery = await send('GET', '/api/v1');
    expect(discovery.status).toBe(200);
    expect(JSON.parse(discovery.body)).toMatchObject({ version: 'v1' });
  });

  test('path parameters are percent-decoded; a name no project can have is not found', async () => {
    const encoded = await send('GET', `/api/v1/projects/${encodeURIComponent('a/b')}/networks`, { headers: { authorization: `Bearer ${token}` } });
    expect(encoded.status).toBe(404);
    expect(JSON.parse(encoded.body)).toMatchObject({ error: { code: 'NotFound', field: 'project' } });
    const malformed = await send('GET', '/api/v1/projects/%E0%A4%A/networks', { headers: { authorization: `Bearer ${token}` } });
    expect(malformed.status).toBe(404);
  });
});

describe('route matching', () => {
  test('finds every declared route; a static segment wins over a parameter, as in Next', () => {
    const routes = apiEndpoints(apiTable);
    expect(routes.map((r) => r.pattern)).toContain('/api/v1/projects/{project}/clusters/{cluster}/cni/{command}');
    const synthetic = [
      { pattern: 'a', segments: segmentsOf('/api/v1/things/{name}') },
      { pattern: 'b', segments: segmentsOf('/api/v1/things/special') },
    ];
    const sorted = [...synthetic].sort(bySpecificity);
    expect(matchPath(sorted, '/api/v1/things/special')?.entry.pattern).toBe('b');
    expect(matchPath(sorted, '/api/v1/things/other')).toMatchObject({ entry: { pattern: 'a' }, params: { name: 'other' } });
    expect(matchPath(routes, '/api/v1/projects/p1/machines/m1/release')).toMatchObject({ params: { project: 'p1', name: 'm1' } });
    expect(matchPath(routes, '/api/v1/projects/p1/machines/m1/release')?.entry.pattern).toBe('/api/v1/projects/{project}/machines/{name}/release');
  });
});
