import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { createDb, type DbHandle } from '@/db/client';
import { systemActor } from '@/server/audit/events';
import { createApiToken } from '@/server/tenancy/tokens';
import { startAggregated } from '@/test/aggregator';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { TcpProxy } from '@/test/tcp-proxy';
import { AGGREGATED_DISCOVERY_TYPE } from './discovery';

/**
 * Discovery that is never stale (docs/aggregated-api.md): a group-version is listed only while it
 * can be served. The database is reached through a TCP proxy the test cuts (the database stops
 * answering) and restores; the requests are the aggregator's own availability checks (the front
 * proxy's certificate, `system:kube-aggregator` in `system:masters`).
 */

const GV = '/apis/ipam.miloapis.com/v1alpha1';
const aggregator = { user: 'system:kube-aggregator', groups: ['system:masters'] };
const AGGREGATED_ACCEPT = `${AGGREGATED_DISCOVERY_TYPE},application/json`;
const groupsOf = (body: { groups: { name: string }[] }) => body.groups.map((g) => g.name);

describe('the database stops answering', () => {
  let proxy: TcpProxy;
  let through: DbHandle;
  let aggr: Awaited<ReturnType<typeof startAggregated>>;

  beforeAll(async () => {
    const target = new URL(inject('databaseUrl'));
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
    const url = new URL(target);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    through = createDb(url.toString(), { max: 4, applicationName: 'discovery-availability', connectTimeoutSeconds: 2 });
    aggr = await startAggregated({ db: () => through.db });
  });

  afterAll(async () => {
    await aggr?.stop();
    proxy?.resume();
    await through?.close();
    await proxy?.close();
  });

  /** Asks `get` until `done` holds of its answer (the probe's outcome is reused for a short while), at most 15 s. */
  async function until<T>(get: () => Promise<T>, done: (t: T) => boolean): Promise<T> {
    let last = await get();
    for (let i = 0; i < 75 && !done(last); i++) {
      await new Promise((r) => setTimeout(r, 200));
      last = await get();
    }
    return last;
  }

  test('the group-version answers 503 while the database is away, is absent from /apis, and answers 200 again when it is back', async () => {
    const get = (p: string, accept?: string) => aggr.request('GET', p, { cert: aggr.clients.proxy, as: aggregator, accept });
    expect((await get(GV)).status).toBe(200);
    expect(groupsOf((await get('/apis')).body)).toContain('ipam.miloapis.com');

    proxy.cut();
    const down = await until(
      () => get(GV),
      (r) => r.status !== 200,
    );
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable', code: 503 });
    expect(down.body.message).toContain('ipam.miloapis.com/v1alpha1 cannot be served');
    expect(down.headers['retry-after']).toBe('1');
    expect((await get('/apis/ipam.miloapis.com')).status).toBe(503);
    // A group Meridian does not serve is not found, database or not.
    expect((await get('/apis/nothing.example.com/v1')).status).toBe(404);
    expect(groupsOf((await get('/apis')).body)).toEqual([]);
    expect((await get('/apis', AGGREGATED_ACCEPT)).body.items).toEqual([]);
    const ready = await get('/readyz');
    expect(ready.status).toBe(500);
    expect(ready.text).toContain('[-]database failed: ');
    expect((await get('/livez')).status).toBe(200);

    proxy.resume();
    const back = await until(
      () => get(GV),
      (r) => r.status === 200,
    );
    expect(back.status).toBe(200);
    expect(back.body.resources.map((r: { name: string }) => r.name)).toContain('ipclaims');
    expect(groupsOf((await get('/apis')).body)).toContain('ipam.miloapis.com');
    expect((await get('/readyz')).status).toBe(200);
  });
});

describe('a module switched off', () => {
  let aggr: Awaited<ReturnType<typeof startAggregated>>;
  let token: string;
  let slug: string;

  beforeAll(async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    slug = project.slug;
    token = (await createApiToken(db, { projectId: project.id, name: 'modules', role: 'viewer' }, systemActor('test'))).secret;
    aggr = await startAggregated({ db: () => testDb().db, env: { MERIDIAN_DISABLED_MODULES: 'ipam' } });
  });

  afterAll(async () => {
    await aggr?.stop();
  });

  test('MERIDIAN_DISABLED_MODULES=ipam: its group is absent from /apis, aggregated discovery and OpenAPI, and its paths 404', async () => {
    const views = [
      (p: string, accept?: string) => aggr.request('GET', p, { cert: aggr.clients.proxy, as: aggregator, accept }),
      (p: string, accept?: string) => aggr.request('GET', `/apis/resourcemanager.miloapis.com/v1alpha1/projects/${slug}/control-plane${p}`, { token, accept }),
    ];
    for (const get of views) {
      const legacy = await get('/apis');
      expect(legacy.status).toBe(200);
      expect(groupsOf(legacy.body)).not.toContain('ipam.miloapis.com');
      const aggregated = await get('/apis', AGGREGATED_ACCEPT);
      expect(aggregated.headers['content-type']).toBe(AGGREGATED_DISCOVERY_TYPE);
      expect(aggregated.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).not.toContain('ipam.miloapis.com');
      expect((await get(GV)).status).toBe(404);
      expect((await get('/apis/ipam.miloapis.com')).status).toBe(404);
      expect(Object.keys((await get('/openapi/v3')).body.paths)).not.toContain('apis/ipam.miloapis.com/v1alpha1');
      expect((await get(`${GV}/namespaces/default/ipclaims`)).status).toBe(404);
    }
  });
});
