import { env } from '@/server/env';

/**
 * Token-bucket rate limiting, per process (each web replica enforces its own budget; with N
 * replicas behind a balancer the cluster-wide ceiling is N × the limit). Buckets idle for a while
 * are forgotten so memory stays bounded.
 */
interface Bucket {
  tokens: number;
  updated: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private lastSweep = Date.now();

  constructor(
    /** Sustained rate, requests per second. */
    private readonly ratePerSecond: number,
    /** Burst size. */
    private readonly burst: number,
  ) {}

  /** Takes one token for `key`: `{ ok: true }`, or the seconds until one is available. */
  take(key: string, now = Date.now()): { ok: true } | { ok: false; retryAfterSeconds: number } {
    this.sweep(now);
    const b = this.buckets.get(key) ?? { tokens: this.burst, updated: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.updated) / 1000) * this.ratePerSecond);
    b.updated = now;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - b.tokens) / this.ratePerSecond)) };
  }

  private sweep(now: number) {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [k, b] of this.buckets) if (now - b.updated > 10 * 60_000) this.buckets.delete(k);
  }
}

const g = globalThis as typeof globalThis & { __meridianLimiters?: Record<string, RateLimiter> };

/** Process-wide limiters, on globalThis because Next may load this module in several bundles. */
export function limiter(name: 'token' | 'signIn'): RateLimiter {
  g.__meridianLimiters ??= {};
  if (!g.__meridianLimiters[name]) {
    g.__meridianLimiters[name] =
      name === 'token'
        ? new RateLimiter(env().RATE_LIMIT_TOKEN_RPS, env().RATE_LIMIT_TOKEN_BURST)
        : new RateLimiter(env().SIGN_IN_RATE_PER_MINUTE / 60, env().SIGN_IN_RATE_PER_MINUTE);
  }
  return g.__meridianLimiters[name];
}
