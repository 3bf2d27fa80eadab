import { describe, expect, test } from 'vitest';
import { sqlFunctionBatches } from '@/db/batch';
import { testDb } from '@/test/db';
import { metricsAuthorized, metricsResponse } from './metrics';

const token = 'scrape-token-0123456789abcdef';
const scrape = (authorization?: string) => new Request('http://localhost:3000/metrics', { headers: authorization ? { authorization } : {} });

describe('/metrics behind METRICS_TOKEN', () => {
  test('with a token configured: 401 without it or with another, the exposition with it', async () => {
    const { db } = testDb();
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789abcdef', `Basic ${token}`, token, `Bearer ${token}x`]) {
      const res = await metricsResponse(scrape(authorization), db, token);
      expect(res.status, String(authorization)).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await res.json()).toEqual({ error: { code: 'Unauthenticated', message: 'a valid bearer token (METRICS_TOKEN) is required' } });
    }
    const ok = await metricsResponse(scrape(`Bearer ${token}`), db, token);
    expect(ok.status).toBe(200);
    const text = await ok.text();
    expect(text).toContain('meridian_jobs{state="pending"}');
    expect(text).toContain('# TYPE meridian_process_');
  });

  test('without a token configured the exposition is open, as before', async () => {
    const res = await metricsResponse(scrape(), testDb().db, undefined);
    expect(res.status).toBe(200);
    expect(metricsAuthorized(null, undefined)).toBe(true);
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
    const text = await (await metricsResponse(scrape(), db, undefined)).text();
    expect(text).toContain('meridian_batch_statements_total{function="jsonb_strip_nulls"} 2');
    expect(text).toContain('meridian_batch_items_total{function="jsonb_strip_nulls"} 10');
    expect(text).toContain('meridian_batch_fallbacks_total{function="jsonb_strip_nulls"} 0');
  });
});
