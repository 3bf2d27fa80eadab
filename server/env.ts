import path from 'node:path';
import { z } from 'zod';

/**
 * The validated process environment. Parsed once, lazily: an invalid value fails the process at
 * start with the variable named, instead of surfacing later as a confusing runtime error.
 */
const schema = z.object({
  DATABASE_URL: z.string().url().optional(),
  DATA_DIR: z.string().default('.data'),
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  HOSTNAME: z.string().default('0.0.0.0'),
  EMBEDDED_PG_PORT: z.coerce.number().int().min(1024).max(65535).refine((p) => p !== 5432, {
    message: 'must not be 5432, which a system PostgreSQL may hold',
  }).default(54329),
  AUTH_SECRET: z.string().min(32).optional(),
  AUTH_URL: z.string().url().optional(),
  AUTH_OIDC_ISSUER: z.string().url().optional(),
  AUTH_OIDC_CLIENT_ID: z.string().optional(),
  AUTH_OIDC_CLIENT_SECRET: z.string().optional(),
  AUTH_OIDC_NAME: z.string().default('Single sign-on'),
  MERIDIAN_DEMO_PASSWORD: z.string().min(8).optional(),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  SIGN_IN_MAX_FAILURES: z.coerce.number().int().min(1).default(5),
  SIGN_IN_LOCK_SECONDS: z.coerce.number().int().min(1).default(300),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
});

export type Env = z.infer<typeof schema>;

let cached: Env | undefined;

/** Returns the parsed environment, exiting the process with the offending variable named. */
export function env(): Env {
  if (cached) return cached;
  // An empty variable means unset (so `FOO= npm start` clears an inherited value).
  const present = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid environment:\n${lines.join('\n')}`);
  }
  cached = parsed.data;
  return cached;
}

/** Absolute path of the data directory (embedded database, generated secrets, simulator state). */
export function dataDir(): string {
  return path.resolve(env().DATA_DIR);
}

/** Whether the OIDC provider is configured (all three variables set). */
export function oidcEnabled(): boolean {
  const e = env();
  return Boolean(e.AUTH_OIDC_ISSUER && e.AUTH_OIDC_CLIENT_ID && e.AUTH_OIDC_CLIENT_SECRET);
}
