import { expect, test } from 'vitest';
import { RateLimiter } from './rate-limit';

test('allows the burst, then refuses with a retry time, then refills at the rate', () => {
  const l = new RateLimiter(2, 3);
  const t0 = 1_000_000;
  expect([l.take('a', t0), l.take('a', t0), l.take('a', t0)].every((r) => r.ok)).toBe(true);
  expect(l.take('a', t0)).toEqual({ ok: false, retryAfterSeconds: 1 });
  expect(l.take('b', t0).ok).toBe(true);
  expect(l.take('a', t0 + 500).ok).toBe(true);
  expect(l.take('a', t0 + 500).ok).toBe(false);
});
