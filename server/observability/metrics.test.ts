import { describe, expect, test } from 'vitest';
import { sqlFunctionBatches } from '@/db/batch';
import { systemActor } from '@/server/audit/events';
import { createNetwork } from '@/server/ipam/networks';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { metricsAuthorized, metricsResponse } from './metrics';

const token = 'scrape-token-0123456789abcdef';
const scrape = (authorization?: string) => new Request('http://localhost:3000/metrics', { headers: authorization ? { authorization } : {} });

describe('/metrics is closed unless configured otherwise', () => {
  test('with neither METRICS_TOKEN nor METRICS_PUBLIC nobody may scrape', async () => {
    const res = await metricsResponse(scrape(), testDb().db, { token: undefined, public: false });
    expect(res.status).toBe(401);
    expect((await res.json()).error.message).toContain('METRICS_TOKEN');
    expect(metricsAuthorized(null, undefined)).toBe(false);
    expect(metricsAuthorized('Bearer anything-at-all-0123456789', undefined)).toBe(false);
  });

  test('with a token configured: 401 without it or with another, the whole exposition with it', async () => {
    const { db } = testDb();
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789abcdef', `Basic ${token}`, token, `Bearer ${token}x`]) {
      const res = await metricsResponse(scrape(authorization), db, { token, public: false });
      expect(res.status, String(authorization)).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await res.json()).toEqual({ error: { code: 'Unauthenticated', message: 'a valid bearer token (METRICS_TOKEN) is required' } });
    }
    const ok = await metricsResponse(scrape(`Bearer ${token}`), db, { token, public: false });
    expect(ok.status).toBe(200);
    const text = await ok.text();
    expect(text).toContain('meridian_jobs{state="pending"}');
    expect(text).toContain('# TYPE meridian_process_');
  });

  test("METRICS_PUBLIC=1 opens the aggregate series to anyone; tenants' names are labels for the token's holder only", async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    await createNetwork(db, project.id, { name: 'secret-net', cidrs: [{ cidr: '192.0.2.0/24' } as never] }, systemActor('test'));
    const tenantLabel = `project="${project.slug}"`;

    const anonymous = await metricsResponse(scrape(), db, { token, public: true });
    expect(anonymous.status).toBe(200);
    const open = await anonymous.text();
    expect(open).toContain('meridian_jobs{state="pending"}');
    expect(open).toContain('meridian_capacity_series_omitted{kind="pool"}');
    expect(open).not.toContain(tenantLabel);
    expect(open).not.toContain('secret-net');
    expect(open).not.toMatch(/\{[^}]*\b(project|network|pool)="/);

    const authorized = await (await metricsResponse(scrape(`Bearer ${token}`), db, { token, public: true })).text();
    expect(authorized).toContain(tenantLabel);
    expect(authorized).toContain('network="secret-net"');
    // Public without any token configured: the same aggregate view.
    const noToken = await (await metricsResponse(scrape(), db, { token: undefined, public: true })).text();
    expect(noToken).not.toContain(tenantLabel);
  });
});

describe('group commit in /metrics', () => {
  test('each batched SQL function counts its statements and items: a lone item goes alone, what arrives meanwhile in one batch', async () => {
    const { db } = testDb();
    // A built-in jsonb function as both the single and the batch statement: the batch's answer is its items.
    const strip = sqlFunctionBatches<Record<string, unknown>>({
      one: 'jsonb_strip_nulls',
      many: 'jsonb_strip_nulls',
      lockKeys: () => [],
      laneKeys: () => [],
      lanes: 1,
      maxBatch: 64,
    });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => strip(db, { i, gone: null })));
    expect(answers).toEqual(Array.from({ length: 10 }, (_, i) => ({ i })));
    const text = await (await metricsResponse(scrape(`Bearer ${token}`), db, { token, public: false })).text();
    expect(text).toContain('meridian_batch_statements_total{function="jsonb_strip_nulls"} 2');
    expect(text).toContain('meridian_batch_items_total{function="jsonb_strip_nulls"} 10');
    expect(text).toContain('meridian_batch_fallbacks_total{function="jsonb_strip_nulls"} 0');
  });
});
