import path from 'node:path';
import { EnvError, EXIT_CONFIG, parseEnv, type Env, type EnvName, type RawEnv } from '@/lib/env-schema';

/**
 * The validated environment of the server's programs (web, worker, admin CLI, `npm start`'s
 * supervisor): read from the process once, on first use. The variables themselves are declared in
 * lib/env-schema.ts.
 */

let cached: Env | undefined;
/** Values set by {@link overrideEnv} on top of the process environment. */
let overrides: RawEnv = {};

/** The validated environment of this process, parsed on first use; throws {@link EnvError} when invalid. */
export function env(): Env {
  cached ??= parseEnv({ ...process.env, ...overrides });
  return cached;
}

/**
 * The validated environment, or — when it is invalid — the reason on stderr and exit code
 * {@link EXIT_CONFIG}. Each program's entry point calls this first, so a bad value stops start-up.
 */
export function envOrExit(program: string): Env {
  try {
    return env();
  } catch (e) {
    if (!(e instanceof EnvError)) throw e;
    process.stderr.write(`${program}: ${e.message}\n`);
    process.exit(EXIT_CONFIG);
  }
}

/**
 * For tests that run server code in their own process: the environment with `values` set on top
 * (validated like the real one; undefined unsets a variable), until the returned function restores
 * what was there before. Processes a test starts get their variables in their own environment.
 */
export function overrideEnv(values: Partial<Record<EnvName, string | undefined>>): () => void {
  const before = { cached, overrides };
  const next = { ...overrides, ...values };
  cached = parseEnv({ ...process.env, ...next });
  overrides = next;
  return () => {
    ({ cached, overrides } = before);
  };
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
 * The process-wide pool's URL, size and timeouts for a web process (statements and lock waits
 * bounded by the request budget) or a worker (longer, for jobs). Abandoned transactions end after
 * 60 s either way. Throws when DATABASE_URL is unset (`npm start` sets it for the embedded database).
 */
export function dbPoolSettings(role: 'web' | 'worker') {
  const e = env();
  if (!e.DATABASE_URL) throw new Error(`DATABASE_URL is required for start:${role} (npm start sets it for the embedded database)`);
  const long = role === 'worker';
  return {
    url: e.DATABASE_URL,
    max: e.DB_POOL_SIZE,
    statementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS ?? (long ? 60_000 : e.DB_REQUEST_TIMEOUT_MS),
    lockTimeoutMs: e.DB_LOCK_TIMEOUT_MS ?? (long ? 30_000 : e.DB_REQUEST_TIMEOUT_MS),
    idleInTransactionTimeoutMs: 60_000,
    connectTimeoutSeconds: e.DB_CONNECT_TIMEOUT_SECONDS,
  };
}

/** Lanes of CNI ADD batches in flight at once: CNI_ADD_LANES, or a fifth of the main pool's connections (at least 1). */
export function cniAddLanes(): number {
  const e = env();
  return e.CNI_ADD_LANES ?? Math.max(1, Math.floor(e.DB_POOL_SIZE / 5));
}

/** Lanes of IP claim create batches in flight at once: IPAM_CLAIM_LANES, or two fifths of the main pool's connections (at least 1). */
export function ipamClaimLanes(): number {
  const e = env();
  return e.IPAM_CLAIM_LANES ?? Math.max(1, Math.floor((e.DB_POOL_SIZE * 2) / 5));
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
