/**
 * No error answer carries SQL, its parameters or stack frames, and a failure nobody coded answers a
 * generic message with a correlation id that the server log holds beside the details.
 *
 * Every REST v1 route (through the REST server, as machines call it) and every tRPC procedure (over
 * tRPC's HTTP adapter, as the console calls it) is driven into unexpected failures: the app's
 * database connections log in as a role that may read only what authenticating a token needs
 * (token, project, user, membership and cluster columns), so any other statement fails with a
 * PostgreSQL error whose message names the statement, the relation or the column.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import * as readyz from '@/app/readyz/route';
import { configureDbPool, createDb, getDbHandle, type DbHandle } from '@/db/client';
import { systemActor } from '@/server/audit/events';
import { createCluster } from '@/server/cni/clusters';
import { createNetwork } from '@/server/ipam/networks';
import { createApiToken, createOperatorToken } from '@/server/tenancy/tokens';
import { serveTrpc } from '@/server/trpc/http';
import { appRouter } from '@/server/trpc/root';
import { testDb, uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { validInputs, type World } from '@/test/trpc-inputs';
import { apiRoutes, apiTable } from '@/server/api/routes';
import { createApiServer } from './api-server';
import type { RestRoute } from './declare';

const actor = systemActor('test');

/** What no client may see: statements, their parameters, PostgreSQL's own reasons, stack frames. */
const internals = [
  /Failed query/i,
  /params:/i,
  /\bselect\b[\s\S]*\bfrom\b/i,
  /\binsert into\b/i,
  /\bupdate\s+"?\w+"?\s+set\b/i,
  /\bdelete from\b/i,
  /permission denied/i,
  /relation "/i,
  /\bat .+:\d+:\d+/,
  /\.(ts|js|mjs):\d+/,
  /node_modules/,
];

const role = `meridian_errors_${process.pid}`;
const logged: string[] = [];
const realWrite = process.stderr.write.bind(process.stderr);
let restricted: DbHandle;
let server: Server;
let base: string;
let world: World & { token: string; operatorToken: string; secrets: string[] };

beforeAll(async () => {
  const { db } = testDb();
  const { project } = await makeProject(db);
  const user = await makeUser(db, { projectId: project.id, role: 'owner', platformRoles: ['admin'] });
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24' }] }, actor);
  await createCluster(db, project.id, { name: 'k1', network: 'vpc' }, actor);
  const token = await createApiToken(db, { projectId: project.id, name: 'errors', role: 'owner' }, actor);
  const operator = await createOperatorToken(db, { userId: user.id, name: 'errors' }, actor);
  world = {
    user,
    project: project.slug,
    projectId: project.id,
    tag: uniq('eb'),
    token: token.secret,
    operatorToken: operator.secret,
    secrets: [token.secret, operator.secret, token.prefix],
  };

  // The role the app connects as: token authentication works, nothing else does.
  const password = randomBytes(12).toString('hex');
  await db.execute(sql.raw(`create role ${role} login password '${password}'`));
  await db.execute(sql.raw(`grant usage on schema public to ${role}`));
  for (const [table, columns] of Object.entries({
    api_tokens: 'id, kind, name, project_id, cluster_name, user_id, role, token_hash, created_by, last_used_at, revoked_at',
    projects: 'id, slug, organization_id',
    users: 'id, email, platform_roles, disabled_at',
    memberships: 'user_id, project_id, organization_id, role',
    clusters: 'id, project_id, name, network_id, node_block_prefix_v4, node_block_prefix_v6',
    networks: 'id, name',
  })) {
    await db.execute(sql.raw(`grant select (${columns}) on ${table} to ${role}`));
  }
  await db.execute(sql.raw(`grant update (last_used_at) on api_tokens to ${role}`));
  const url = new URL(inject('databaseUrl'));
  url.username = role;
  url.password = password;
  // The REST routes use the process's pool (db/client.ts getDb): on this restricted role's URL.
  configureDbPool({ url: url.toString(), max: 10 });
  restricted = createDb(url.toString(), { max: 4, applicationName: 'meridian-test-errors' });

  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(String(chunk));
    return (realWrite as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;

  const api = createApiServer(apiTable);
  server = createServer((req, res) => void api.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  process.stderr.write = realWrite;
  await new Promise((resolve) => server?.close(resolve));
  await restricted?.close();
  await getDbHandle().close();
  const { db } = testDb();
  await db.execute(sql.raw(`drop owned by ${role}`));
  await db.execute(sql.raw(`drop role if exists ${role}`));
});

/** The log line holding `errorId`, or undefined. */
const logLineOf = (errorId: string) =>
  logged
    .join('')
    .split('\n')
    .find((line) => line.includes(`"errorId":"${errorId}"`));

/** Checks one error answer: nothing internal in it; a 500 names an id the log holds with the details. */
function expectSafe(where: string, status: number, text: string, error: { message?: string; errorId?: unknown } | undefined) {
  for (const pattern of internals) expect(text, `${where}: ${text}`).not.toMatch(pattern);
  for (const secret of world.secrets) expect(text, where).not.toContain(secret);
  if (status < 500 || status === 503) return;
  const errorId = error?.errorId;
  expect(errorId, `${where}: ${text}`).toMatch(/^[0-9a-f]{12}$/);
  expect(error?.message, where).toContain(errorId as string);
  const line = logLineOf(errorId as string);
  expect(line, `${where}: the log holds ${errorId}`).toBeDefined();
  // The log has what the client did not get: the database's reason.
  expect(line, where).toMatch(/permission denied/);
}

describe('REST v1: an unexpected failure answers 500 with a correlation id and nothing internal', () => {
  const bodies: Record<string, unknown> = {
    'POST /api/v1/projects/{project}/networks': { metadata: { name: 'n2' }, spec: { cidrs: [{ cidr: '198.51.100.0/24' }] } },
    'POST /api/v1/projects/{project}/ipclaims': { metadata: { name: 'c1' }, spec: { network: 'vpc', prefixLength: 30 } },
    'POST /api/v1/projects/{project}/clusters': { name: 'k2', network: 'vpc' },
    'POST /api/v1/projects/{project}/clusters/{cluster}/cni/{command}': { cniNetwork: 'podnet', containerId: 'c1', ifname: 'eth0', node: 'n1' },
  };
  const pathOf = (r: RestRoute) =>
    r.path
      .replace('{project}', world.project)
      .replace('{cluster}', 'k1')
      .replace('{command}', 'add')
      .replace('{group}', 'example.com')
      .replace(/\{\w+\}/g, 'x');

  test('every route', async () => {
    const failed: string[] = [];
    for (const r of apiRoutes) {
      const key = `${r.method} ${r.path}`;
      const body = r.method === 'GET' || r.method === 'DELETE' ? undefined : JSON.stringify(bodies[key] ?? {});
      const res = await fetch(`${base}${pathOf(r)}`, {
        method: r.method,
        headers: {
          authorization: `Bearer ${r.auth.kind === 'operator' ? world.operatorToken : world.token}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        body,
      });
      const text = await res.text();
      const error = res.status >= 400 ? (JSON.parse(text) as { error: { message: string; details?: { errorId?: unknown } } }).error : undefined;
      if (error) expectSafe(key, res.status, text, { message: error.message, errorId: error.details?.errorId });
      if (res.status === 500) failed.push(key);
    }
    // The failures were really driven: every project read but identity, and the writes given a valid body.
    expect(failed).toEqual(
      expect.arrayContaining([
        'GET /api/v1/projects/{project}/networks',
        'GET /api/v1/projects/{project}/clusters',
        'GET /api/v1/projects/{project}/ipclaims',
        'GET /api/v1/projects/{project}/allowancebuckets',
        'GET /api/v1/machinerequests',
        ...Object.keys(bodies),
      ]),
    );
  });
});

describe('tRPC: an unexpected failure answers "internal error" with a correlation id and nothing internal', () => {
  const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { type: 'query' | 'mutation' | 'subscription' } }>;
  const paths = Object.keys(procedures)
    .filter((p) => procedures[p]._def.type !== 'subscription')
    .sort();

  test('every procedure', async () => {
    expect(
      paths.filter((p) => !validInputs[p]),
      'add them to validInputs in test/trpc-inputs.ts',
    ).toEqual([]);
    const failed: string[] = [];
    for (const path of paths) {
      const payload = JSON.stringify(superjson.serialize(validInputs[path](world)));
      const url = `http://localhost/api/trpc/${path}`;
      const req =
        procedures[path]._def.type === 'query'
          ? new Request(`${url}?input=${encodeURIComponent(payload)}`)
          : // As the console sends a mutation: with the CSRF header serveTrpc checks.
            new Request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-meridian-csrf': '1' }, body: payload });
      const res = await serveTrpc(req, async () => ({ db: restricted.db, session: { user: world.user } }));
      const text = await res.text();
      const error = (JSON.parse(text) as { error?: { json: { message: string; data: { errorId?: unknown } } } }).error?.json;
      if (error) expectSafe(path, res.status, text, { message: error.message, errorId: error.data.errorId });
      if (res.status === 500) failed.push(path);
    }
    expect(failed).toEqual(expect.arrayContaining(['projects.get', 'ipam.networks.list', 'ipam.claims.create', 'tokens.create', 'audit.list']));
  });
});

describe('/readyz (unauthenticated): a failing check is named, its statement is not', () => {
  test('the migrations and worker checks fail in PostgreSQL', async () => {
    const res = await readyz.GET();
    const text = await res.text();
    expect(res.status).toBe(503);
    const failing = (JSON.parse(text) as { dependencies: { name: string; status: string; detail: string }[] }).dependencies.filter(
      (d) => d.status === 'failing',
    );
    expect(failing.map((d) => d.name)).toEqual(expect.arrayContaining(['migrations', 'worker']));
    for (const d of failing) {
      const errorId = /error id ([0-9a-f]{12})/.exec(d.detail)?.[1];
      expect(errorId, `${d.name}: ${d.detail}`).toBeDefined();
      expectSafe(d.name, 500, text, { message: d.detail, errorId });
    }
  });
});
