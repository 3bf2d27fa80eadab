/**
 * The OpenAPI document says what the routes accept, because it is made from the schemas they
 * parse: every bound and every value it documents for a query parameter holds when a client sends
 * it to the real REST server — the documented maximum of `limit` is answered and one more is a 400
 * naming it, and every documented enum value is answered.
 */
import { apiTable } from '@/server/api/routes';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createCluster } from '@/server/cni/clusters';
import { createNetwork } from '@/server/ipam/networks';
import { createApiToken, createOperatorToken } from '@/server/tenancy/tokens';
import { testDb } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { createApiServer } from './api-server';

const actor = systemActor('test');

interface QueryParameter {
  name: string;
  in: string;
  schema: { type?: string; minimum?: number; maximum?: number; enum?: string[] };
}
type Operation = { parameters: QueryParameter[]; 'x-meridian-token': string };

let server: Server;
let base = '';
let slug = '';
let token = '';
let operatorToken = '';

beforeAll(async () => {
  const { db } = testDb();
  const { project } = await makeProject(db);
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24' }] }, actor);
  await createCluster(db, project.id, { name: 'k1', network: 'vpc' }, actor);
  slug = project.slug;
  token = (await createApiToken(db, { projectId: project.id, name: 'openapi', role: 'viewer' }, actor)).secret;
  const operator = await makeUser(db, { platformRoles: ['operator'] });
  operatorToken = (await createOperatorToken(db, { userId: operator.id, name: 'openapi' }, actor)).secret;
  const api = createApiServer(apiTable);
  server = createServer((req, res) => void api.handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('OpenAPI query parameters', () => {
  test('every documented bound and enum value of a read holds on the real server', async () => {
    const doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const checked: string[] = [];
    for (const [pattern, operations] of Object.entries(doc.paths)) {
      const op = operations.get;
      if (!op) continue;
      const path = pattern.replace('{project}', slug).replace('{cluster}', 'k1').replace('{command}', 'status');
      if (/\{\w+\}/.test(path)) continue; // reads of one object take no query
      const bearer = op['x-meridian-token'] === 'operator' ? operatorToken : token;
      const get = async (query: string) => {
        const res = await fetch(`${base}${path}?${query}`, { headers: { authorization: `Bearer ${bearer}` } });
        return { status: res.status, body: (await res.json()) as { error?: { field?: string } } };
      };
      for (const p of op.parameters.filter((q) => q.in === 'query')) {
        const where = `GET ${pattern} ?${p.name}`;
        if (p.schema.type === 'integer' && p.schema.maximum !== undefined) {
          expect((await get(`${p.name}=${p.schema.maximum}`)).status, `${where}=${p.schema.maximum} (documented maximum)`).toBe(200);
          const over = await get(`${p.name}=${p.schema.maximum + 1}`);
          expect({ status: over.status, field: over.body.error?.field }, `${where}=${p.schema.maximum + 1}`).toEqual({ status: 400, field: p.name });
          checked.push(where);
        }
        if (p.schema.type === 'integer' && p.schema.minimum !== undefined) {
          const under = await get(`${p.name}=${p.schema.minimum - 1}`);
          expect({ status: under.status, field: under.body.error?.field }, `${where}=${p.schema.minimum - 1}`).toEqual({ status: 400, field: p.name });
        }
        for (const value of p.schema.enum ?? []) {
          expect((await get(`${p.name}=${encodeURIComponent(value)}`)).status, `${where}=${value} (documented value)`).toBe(200);
          checked.push(`${where}=${value}`);
        }
      }
    }
    // The reads with paging were really checked, project and operator routes alike.
    expect(checked).toEqual(
      expect.arrayContaining([
        'GET /api/v1/projects/{project}/networks ?limit',
        'GET /api/v1/projects/{project}/ipclaims ?limit',
        'GET /api/v1/projects/{project}/machines ?limit',
        'GET /api/v1/projects/{project}/ipclaims ?family=4',
        'GET /api/v1/machinecapacities ?limit',
        'GET /api/v1/quotaincreaserequests ?status=Rejected',
      ]),
    );
  });
});
