import path from 'node:path';
import { z } from 'zod';
import { parseTrustedProxies } from './http/client-address';

/**
 * The validated process environment. Parsed once, lazily: an invalid value fails the process at
 * start with the variable named, instead of surfacing later as a confusing runtime error.
 */
/**
 * A PostgreSQL URL. Several hosts may be named for failover (`postgres://h1:5432,h2:5433/db?target_session_attrs=read-write`),
 * which a WHATWG URL parser refuses; so only the scheme is checked here.
 */
const postgresUrl = z.string().regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// URL');

const schema = z.object({
  DATABASE_URL: postgresUrl.optional(),
  /**
   * The schema owner's URL, for migrations (`npm start`, `meridian migrate`, restore): with it, the
   * processes connect as DATABASE_URL's role, which is granted row access only (db/roles.ts).
   */
  DATABASE_OWNER_URL: postgresUrl.optional(),
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
  /** Sign-in failures one client may make at one account before progressive delays begin (server/tenancy/sign-in.ts). */
  SIGN_IN_FREE_FAILURES: z.coerce.number().int().min(1).max(1000).default(5),
  /** Sign-in failures one client may make across all accounts before progressive delays begin. */
  SIGN_IN_CLIENT_FREE_FAILURES: z.coerce.number().int().min(1).max(100_000).default(50),
  /** The longest delay between sign-in attempts of a throttled client (delays double from 1 s). */
  SIGN_IN_MAX_DELAY_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  /** A throttled client or (client, account) without a failure for this long starts afresh. */
  SIGN_IN_FORGET_SECONDS: z.coerce.number().int().min(60).max(604_800).default(3600),
  /** Sign-in posts one client may make per minute (per web process), cut before any password hashing. */
  SIGN_IN_RATE_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(60),
  /**
   * Proxies whose `X-Forwarded-For` is believed (addresses or CIDRs, comma-separated), for the
   * client address that sign-in throttling and sessions record. Unset: the socket's peer is the client.
   */
  TRUSTED_PROXIES: z
    .string()
    .default('')
    .superRefine((value, ctx) => {
      try {
        parseTrustedProxies(value);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
      }
    }),
  /** Connections of a web or worker process's main pool. */
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(10),
  /** A request's whole budget (connection, statements, commit); past it the answer is 503 DatabaseUnavailable. */
  DB_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  /** statement_timeout of a web process's connections (default: the request budget) and of a worker's (default 60 s). */
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).optional(),
  /** lock_timeout of a web process's connections (default: the request budget) and of a worker's (default 30 s). */
  DB_LOCK_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).optional(),
  /** How long opening a database connection may take. */
  DB_CONNECT_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(600).default(5),
  /** npm start: how long a supervised web, worker or simulator may send no heartbeat before it is killed and restarted. */
  SUPERVISOR_HEARTBEAT_TIMEOUT_SECONDS: z.coerce.number().int().min(3).max(600).default(20),
  /** npm start: how long to keep trying to restart an embedded PostgreSQL that died before stopping Meridian. */
  DB_RESTART_WINDOW_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /**
   * When set, `/metrics` answers only requests carrying `Authorization: Bearer <METRICS_TOKEN>`
   * (401 otherwise); unset, it is open to anyone who can reach the web port.
   */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
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

/**
 * The process-wide pool's size and timeouts for a web process (statements and lock waits bounded by
 * the request budget) or a worker (longer, for jobs). Abandoned transactions end after 60 s either way.
 */
export function dbPoolSettings(role: 'web' | 'worker') {
  const e = env();
  const long = role === 'worker';
  return {
    max: e.DB_POOL_SIZE,
    statementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS ?? (long ? 60_000 : e.DB_REQUEST_TIMEOUT_MS),
    lockTimeoutMs: e.DB_LOCK_TIMEOUT_MS ?? (long ? 30_000 : e.DB_REQUEST_TIMEOUT_MS),
    idleInTransactionTimeoutMs: 60_000,
    connectTimeoutSeconds: e.DB_CONNECT_TIMEOUT_SECONDS,
  };
}

/** The sign-in throttling policy from the environment. */
export function signInPolicy() {
  const e = env();
  return {
    accountFreeFailures: e.SIGN_IN_FREE_FAILURES,
    clientFreeFailures: e.SIGN_IN_CLIENT_FREE_FAILURES,
    maxDelaySeconds: e.SIGN_IN_MAX_DELAY_SECONDS,
    forgetSeconds: e.SIGN_IN_FORGET_SECONDS,
  };
}
