import { z } from 'zod';
import { AssetIdSchema } from './provider-wire';
import { parseTrustedProxies } from './trusted-proxies';
import { isLoopbackHost } from './loopback';
import { parseAddressList } from './address-policy';

/**
 * Every environment variable Meridian's programs read — web, worker, admin CLI, `npm start`'s
 * supervisor and the provider simulator — declared once, here, and validated once at start-up:
 * an invalid value stops the program with the variable named and the reason, instead of turning
 * into a default or a confusing runtime error later. docs/configuration.md lists the
 * same variables (server/env.test.ts keeps the two equal). The CNI plugin runs on nodes, apart
 * from the server, and reads its own few variables (cni/config.ts).
 *
 * A shared library module (it imports only lib/ and zod): the server's programs read their
 * validated environment through server/env.ts, and the provider simulator — a program of its own,
 * which imports no server code — validates its part (`envSchema.pick`) in simulator/config.ts.
 *
 * Variables are strings; an empty one counts as unset (so `FOO= npm start` clears an inherited value).
 */

/** Exit code of a program that refuses to start on its configuration: restarting it will not help. */
export const EXIT_CONFIG = 78;

/**
 * A PostgreSQL URL. Several hosts may be named for failover (`postgres://h1:5432,h2:5433/db?target_session_attrs=read-write`),
 * which a WHATWG URL parser refuses; so only the scheme is checked here.
 */
const postgresUrl = z.string().regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// URL');

/** A whole number from `min` to `max` in decimal digits (`abc`, `1e3`, `-1` and `2.5` are refused). */
export const integer = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

/** Where a process reaches a service of ours over HTTP. */
const httpUrl = z
  .string()
  .url()
  .regex(/^https?:\/\//i, 'must be an http:// or https:// URL');

/** A bearer token of the provider simulator's APIs. */
const bearerToken = z.string().min(16, 'must be at least 16 characters').regex(/^\S+$/, 'must not contain whitespace');

/** The modules MERIDIAN_DISABLED_MODULES may switch off. */
export const MODULES = ['ipam', 'quota', 'fleet'] as const;
export type ModuleName = (typeof MODULES)[number];

const moduleList = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.enum(MODULES, { error: (issue) => `unknown module ${JSON.stringify(issue.input)} (modules: ${MODULES.join(', ')})` })));

/** A comma-separated list of names (empty entries dropped). */
const nameList = z.string().transform((value) =>
  value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean),
);

/** A comma-separated list of HTTP header names, lower-cased. */
const headerList = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().regex(/^[a-z0-9!#$%&'*+.^_`|~-]+$/, 'must be HTTP header names')).min(1, 'must name at least one header'));

/** A duration as Go writes one (`5m`, `30s`, `1m30s`, `500ms`, `1h`), as kube-apiserver's flags take it; parsed to milliseconds. */
const duration = z
  .string()
  .regex(/^(\d+(ms|s|m|h))+$/, 'must be a duration such as 30s, 5m or 1m30s')
  .transform((value) => {
    const units: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
    let ms = 0;
    for (const [, n, unit] of value.matchAll(/(\d+)(ms|s|m|h)/g)) ms += Number(n) * units[unit];
    return ms;
  })
  .pipe(z.number().max(86_400_000, 'must be at most 24h'));

const logLevel = z.enum(['debug', 'info', 'warn', 'error']);

export const envSchema = z.object({
  // ---- Database -------------------------------------------------------------------------------
  /** Unset: `npm start` runs an embedded PostgreSQL and gives its URL to the processes it starts. */
  DATABASE_URL: postgresUrl.optional(),
  /**
   * The schema owner's URL, for migrations (`npm start`, `meridian migrate`, restore): with it, the
   * processes connect as DATABASE_URL's role, which is granted row access only (db/roles.ts).
   */
  DATABASE_OWNER_URL: postgresUrl.optional(),
  DATA_DIR: z.string().default('.data'),
  EMBEDDED_PG_PORT: integer(1024, 65535)
    .refine((p) => p !== 5432, { message: 'must not be 5432, which a system PostgreSQL may hold' })
    .default(54329),
  /** Connections of a web or worker process's main pool. */
  DB_POOL_SIZE: integer(1, 500).default(10),
  /** A request's whole budget (REST, tRPC, page renders, auth routes: connection, statements, commit); past it the answer is 503 DatabaseUnavailable. */
  DB_REQUEST_TIMEOUT_MS: integer(100, 600_000).default(5_000),
  /** statement_timeout of a web process's connections (default: the request budget) and of a worker's (default 60 s). */
  DB_STATEMENT_TIMEOUT_MS: integer(100, 3_600_000).optional(),
  /** lock_timeout of a web process's connections (default: the request budget) and of a worker's (default 30 s). */
  DB_LOCK_TIMEOUT_MS: integer(100, 3_600_000).optional(),
  /** How long opening a database connection may take. */
  DB_CONNECT_TIMEOUT_SECONDS: integer(1, 600).default(5),

  // ---- Web ------------------------------------------------------------------------------------
  PORT: integer(1, 65535).default(3000),
  HOSTNAME: z.string().default('0.0.0.0'),
  /** The Kubernetes API's HTTPS port (kubectl sends tokens over TLS only); the console stays on PORT. 0: not served. */
  HTTPS_PORT: integer(0, 65535).default(3443),
  /**
   * The HTTPS serving certificate and key (PEM), reloaded when they change on disk (cert-manager
   * rotating them). Unset: a local CA and a certificate it signs for localhost, made once under
   * DATA_DIR/tls and reused (its CA is what `meridian kubeconfig` puts in a kubeconfig).
   */
  TLS_CERT_FILE: z.string().optional(),
  /** The key of TLS_CERT_FILE, named as kube-apiserver's `--tls-private-key-file`. */
  TLS_PRIVATE_KEY_FILE: z.string().optional(),
  /** TLS_PRIVATE_KEY_FILE's other name (either may be given; both must then name the same file). */
  TLS_KEY_FILE: z.string().optional(),
  /** The CA that signed TLS_CERT_FILE (PEM), for `meridian kubeconfig`; unset with TLS_CERT_FILE: the certificate itself. */
  TLS_CA_FILE: z.string().optional(),
  /**
   * The Kubernetes API's origin as clients reach it (`https://meridian.example.com:443`, behind a
   * load balancer or an ingress), named by the console's "Download kubeconfig". Unset: the console's
   * host name with HTTPS_PORT.
   */
  KUBE_API_URL: z.string().url().optional(),
  // ---- Aggregated API (behind Milo or kube-apiserver: docs/aggregated-api.md) -------------------
  /**
   * The CA (PEM) whose client certificates identify the front proxy (the aggregator); only such a
   * client's user, group and extra headers are believed. Unset: no front proxy is trusted.
   */
  REQUESTHEADER_CLIENT_CA_FILE: z.string().optional(),
  /** Common names the front proxy's certificate may carry (comma-separated); unset: any certificate of the CA. */
  REQUESTHEADER_ALLOWED_NAMES: nameList.default([]),
  /** Headers naming the user (the first one present wins). */
  REQUESTHEADER_USERNAME_HEADERS: headerList.default(['x-remote-user']),
  /** Headers naming the user's groups (every value of each). */
  REQUESTHEADER_GROUP_HEADERS: headerList.default(['x-remote-group']),
  /** Prefixes of the headers carrying the user's extras (`X-Remote-Extra-<key>`, the key percent-encoded). */
  REQUESTHEADER_EXTRA_HEADERS_PREFIX: headerList.default(['x-remote-extra-']),
  /**
   * A kubeconfig naming the SubjectAccessReview server (Milo, kube-apiserver) that authorizes every
   * front-proxied request and every token authenticated by AUTHENTICATION_WEBHOOK_CONFIG_FILE.
   * Unset: such requests reach health and nothing else.
   */
  AUTHORIZATION_WEBHOOK_CONFIG_FILE: z.string().optional(),
  /** How long an allowed SubjectAccessReview answer is reused (a duration: `5m`, `30s`, `1m30s`, `0s` for never). */
  AUTHORIZATION_WEBHOOK_CACHE_AUTHORIZED_TTL: duration.default(300_000),
  /** How long a denied SubjectAccessReview answer is reused. */
  AUTHORIZATION_WEBHOOK_CACHE_UNAUTHORIZED_TTL: duration.default(30_000),
  /** How long one call to a webhook (SubjectAccessReview, TokenReview) may take before the request is refused. */
  AUTHORIZATION_WEBHOOK_TIMEOUT: duration.default(10_000),
  /** Groups allowed everything without a SubjectAccessReview (comma-separated), as k8s.io/apiserver's `--authorization-always-allow-groups`. */
  AUTHORIZATION_ALWAYS_ALLOW_GROUPS: nameList.default(['system:masters']),
  /** A kubeconfig naming the TokenReview server that authenticates bearer tokens Meridian did not issue. Unset: only Meridian's tokens. */
  AUTHENTICATION_WEBHOOK_CONFIG_FILE: z.string().optional(),
  /** How long a TokenReview answer (authenticated or not) is reused. */
  AUTHENTICATION_WEBHOOK_CACHE_TTL: duration.default(120_000),

  AUTH_SECRET: z.string().min(32).optional(),
  AUTH_URL: z.string().url().optional(),
  /** https:// (plain http:// only with AUTH_OIDC_ALLOW_HTTP=1, to a loopback host: see {@link crossChecks}). */
  AUTH_OIDC_ISSUER: z
    .string()
    .url()
    .regex(/^https?:\/\//i, 'must be an https:// URL')
    .optional(),
  AUTH_OIDC_CLIENT_ID: z.string().optional(),
  AUTH_OIDC_CLIENT_SECRET: z.string().optional(),
  AUTH_OIDC_NAME: z.string().default('Single sign-on'),
  /** `1`: AUTH_OIDC_ISSUER may be a plain http:// URL on a loopback host (a provider on the same machine, as in tests). */
  AUTH_OIDC_ALLOW_HTTP: z.enum(['0', '1']).default('0'),
  MERIDIAN_DEMO_PASSWORD: z.string().min(8).optional(),
  /**
   * The SMTP server invitation links are mailed through (`smtp://user:pass@host:587`, STARTTLS when
   * the server offers it; `smtps://` for TLS from the start). Unset: nothing is mailed, and an
   * invitation is accepted only by someone who proves the address otherwise (server/tenancy/invitations.ts).
   */
  SMTP_URL: z
    .string()
    .url()
    .regex(/^smtps?:\/\//i, 'must be an smtp:// or smtps:// URL')
    .optional(),
  /** The From address of the mail Meridian sends (`Meridian <noreply@example.com>`); required with SMTP_URL. */
  SMTP_FROM: z.string().trim().min(3).max(320).regex(/@/, 'must contain an e-mail address').optional(),
  /** Sign-in failures one client may make at one account before progressive delays begin (server/tenancy/sign-in.ts). */
  SIGN_IN_FREE_FAILURES: integer(1, 1000).default(5),
  /** Sign-in failures one client may make across all accounts before progressive delays begin. */
  SIGN_IN_CLIENT_FREE_FAILURES: integer(1, 100_000).default(50),
  /** The longest delay between sign-in attempts of a throttled client (delays double from 1 s). */
  SIGN_IN_MAX_DELAY_SECONDS: integer(1, 86_400).default(900),
  /** A throttled client or (client, account) without a failure for this long starts afresh. */
  SIGN_IN_FORGET_SECONDS: integer(60, 604_800).default(3600),
  /** Sign-in posts one client may make per minute (per web process), cut before any password hashing. */
  SIGN_IN_RATE_PER_MINUTE: integer(1, 100_000).default(60),
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
  /**
   * The bearer token `/metrics` requires (`Authorization: Bearer <METRICS_TOKEN>`; 401 otherwise).
   * Unset, `npm start` generates one into `<DATA_DIR>/metrics-token` (mode 0600) and hands it to
   * the web process; a web process started alone without one refuses every scrape (see METRICS_PUBLIC).
   */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').regex(/^\S+$/, 'must not contain whitespace').optional(),
  /**
   * `1`: `/metrics` answers without a token too, but only its aggregate series: the per-pool and
   * per-bucket gauges, which name tenants' projects, networks and pools, need the token.
   */
  METRICS_PUBLIC: z.enum(['0', '1']).default('0'),
  /** Requests per second one API token may make to one web process (a token bucket refilled at this rate). */
  RATE_LIMIT_TOKEN_RPS: integer(1, 1_000_000).default(2000),
  /** The bucket's size: requests one API token may make at once before the rate applies. */
  RATE_LIMIT_TOKEN_BURST: integer(1, 1_000_000).default(4000),
  /** REST and console modules switched off (absent from discovery and OpenAPI, their routes 404). */
  MERIDIAN_DISABLED_MODULES: moduleList.default([]),

  // ---- Domains --------------------------------------------------------------------------------
  /** CNI GC spares leases younger than this (an ADD may still be in flight). */
  CNI_GC_GRACE_SECONDS: integer(0, 86_400).default(60),
  /** How long a node keeps a block its DELs emptied before it returns to the pool (0: at once). */
  CNI_BLOCK_GRACE_SECONDS: integer(0, 604_800).default(300),
  /**
   * Lanes of CNI ADD batches in flight at once, each on a connection of its own beside the main
   * pool (server/cni/add-batch.ts). Unset: a fifth of DB_POOL_SIZE, at least 1 (2 for the default
   * pool): more lanes contend on the same blocks more than they gain (bench/cni-add).
   */
  CNI_ADD_LANES: integer(1, 64).optional(),
  /** Capacity whose availability evidence is older than this is not offered (stale evidence fails closed). */
  FLEET_EVIDENCE_MAX_AGE_SECONDS: integer(60, 31_536_000).default(7 * 24 * 3600),
  /** The first wait of a project deletion whose pass found something still in flight; doubles per waiting pass. */
  PROJECT_DELETION_RETRY_BASE_MS: integer(1, 3_600_000).default(1_000),
  /** The longest wait between a project deletion's passes (at least the base). */
  PROJECT_DELETION_RETRY_CAP_MS: integer(1, 86_400_000).default(60_000),
  /** The worker samples every utilization series from the counters every this many minutes (crontab `*\/N`). */
  CAPACITY_SAMPLE_MINUTES: integer(1, 60).default(1),
  /** /metrics shows per-series capacity gauges for at most this many pools and this many buckets (the most utilized). */
  CAPACITY_METRICS_MAX_SERIES: integer(0, 100_000).default(500),
  /**
   * `1`: alert webhooks may use plain http:// to public addresses. It opens no address: loopback,
   * private and other non-public targets need WEBHOOK_ALLOWED_CIDRS whatever the scheme.
   */
  WEBHOOK_ALLOW_HTTP: z.enum(['0', '1']).default('0'),
  /**
   * Addresses or CIDRs (comma-separated) alert webhooks may reach although they are not public
   * (loopback, private, link-local…), over https:// or plain http://. Unset: public addresses only.
   */
  WEBHOOK_ALLOWED_CIDRS: z
    .string()
    .default('')
    .superRefine((value, ctx) => {
      try {
        parseAddressList(value);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
      }
    }),
  /**
   * An HTTP proxy (`http://host:port`, credentials allowed) webhook deliveries go through with
   * CONNECT, for platforms whose egress passes one. The proxy resolves the target's name: Meridian
   * checks the URL's host (a literal address, a loopback name) and trusts the proxy with the rest.
   */
  WEBHOOK_PROXY_URL: z
    .string()
    .url()
    .regex(/^http:\/\//i, 'must be an http:// URL (the proxy is reached with CONNECT)')
    .optional(),
  /** The first wait before a failed webhook delivery is retried; doubles per attempt (with jitter) up to the cap. */
  WEBHOOK_RETRY_BASE_MS: integer(10, 3_600_000).default(1_000),
  WEBHOOK_RETRY_CAP_MS: integer(10, 86_400_000).default(600_000),
  /** How long one webhook delivery may take before it counts as failed. */
  WEBHOOK_TIMEOUT_MS: integer(100, 60_000).default(5_000),

  // ---- Worker and provider --------------------------------------------------------------------
  WORKER_CONCURRENCY: integer(1, 64).default(4),
  /** Where web and worker reach the provider (the simulator); with SIMULATOR_TOKEN, the provider is configured. */
  SIMULATOR_URL: httpUrl.optional(),
  /** The provider's runtime bearer token: the simulator requires it, web and worker call with it. */
  SIMULATOR_TOKEN: bearerToken.optional(),
  /** The simulator's admin (fault injection) token; unset, its admin API is off and the QA page read-only. */
  SIMULATOR_ADMIN_TOKEN: bearerToken.optional(),
  /** How long one provider call may take. */
  PROVIDER_TIMEOUT_MS: integer(100, 600_000).default(5_000),
  /** The longest wait between retries of a provider operation (0.5 s doubling, with jitter). */
  PROVIDER_RETRY_CAP_MS: integer(100, 3_600_000).default(30_000),

  // ---- Provider simulator ---------------------------------------------------------------------
  /** The simulator's port (0: any free one, for a simulator started alone); `npm start` gives it this one. */
  SIMULATOR_PORT: integer(0, 65_535).default(4100),
  SIMULATOR_HOST: z.string().min(1).default('127.0.0.1'),
  /** The simulator's durable state; unset: `<DATA_DIR>/simulator/state.json`. */
  SIMULATOR_STATE_FILE: z.string().min(1).optional(),
  /** Simulated duration of every operation; 0 completes operations at submission. */
  SIMULATOR_OPERATION_MS: integer(0, 3_600_000).default(0),
  /** Assets created at start-up when missing (comma-separated ids). */
  SIMULATOR_ASSETS: z
    .string()
    .transform((value, ctx) => {
      const ids = value
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean);
      for (const id of ids) {
        const checked = AssetIdSchema.safeParse(id);
        if (!checked.success) ctx.addIssue({ code: 'custom', message: `asset id ${JSON.stringify(id)} ${checked.error.issues[0].message}` });
      }
      return ids;
    })
    .default([]),
  SIMULATOR_LOG_LEVEL: logLevel.default('info'),
  /** Terminal operations the simulator keeps beyond those still needed for replay. */
  SIMULATOR_RETAIN_OPERATIONS: integer(100, 1_000_000).default(250),
  /** Log entries the simulator's state keeps (the newest). */
  SIMULATOR_LOG_ENTRIES: integer(10, 100_000).default(250),

  // ---- Supervision and logging ----------------------------------------------------------------
  /** npm start: how long a supervised web, worker or simulator may send no heartbeat before it is killed and restarted. */
  SUPERVISOR_HEARTBEAT_TIMEOUT_SECONDS: integer(3, 600).default(20),
  /** npm start: how long to keep trying to restart an embedded PostgreSQL that died before stopping Meridian. */
  DB_RESTART_WINDOW_SECONDS: integer(1, 3600).default(60),
  LOG_LEVEL: logLevel.default('info'),
});

export type Env = z.infer<typeof envSchema>;

/**
 * Rules that involve more than one variable, checked when the whole environment is parsed (a
 * program's part, `envSchema.pick(...)`, has its own variables only). Each names the variable to fix.
 *
 * - AUTH_OIDC_ISSUER over plain http: the client secret, the authorization code and the tokens
 *   would cross the network unencrypted. Refused unless AUTH_OIDC_ALLOW_HTTP=1 says so, and even
 *   then only for a loopback host, where they never leave the machine.
 * - SMTP_URL without SMTP_FROM (mail needs a sender) or without AUTH_URL (mailed links start with
 *   the console's configured URL, never with a request's Host header, which a sender could choose).
 */
function crossChecks(e: Env, ctx: z.RefinementCtx) {
  if (e.TLS_PRIVATE_KEY_FILE && e.TLS_KEY_FILE && e.TLS_PRIVATE_KEY_FILE !== e.TLS_KEY_FILE) {
    ctx.addIssue({ code: 'custom', path: ['TLS_KEY_FILE'], message: 'names another file than TLS_PRIVATE_KEY_FILE (they are one setting: give one of them)' });
  }
  const key = e.TLS_PRIVATE_KEY_FILE ?? e.TLS_KEY_FILE;
  if ((e.TLS_CERT_FILE === undefined) !== (key === undefined)) {
    const [given, missing] = e.TLS_CERT_FILE
      ? ['TLS_CERT_FILE', 'TLS_PRIVATE_KEY_FILE']
      : [e.TLS_PRIVATE_KEY_FILE ? 'TLS_PRIVATE_KEY_FILE' : 'TLS_KEY_FILE', 'TLS_CERT_FILE'];
    ctx.addIssue({ code: 'custom', path: [given], message: `needs ${missing} too (the certificate and its key are given together)` });
  }
  if (e.REQUESTHEADER_ALLOWED_NAMES.length > 0 && !e.REQUESTHEADER_CLIENT_CA_FILE) {
    ctx.addIssue({ code: 'custom', path: ['REQUESTHEADER_ALLOWED_NAMES'], message: 'needs REQUESTHEADER_CLIENT_CA_FILE (the CA that signs those names)' });
  }
  if (e.SMTP_URL && !e.SMTP_FROM) ctx.addIssue({ code: 'custom', path: ['SMTP_FROM'], message: 'is required when SMTP_URL is set' });
  if (e.SMTP_URL && !e.AUTH_URL) ctx.addIssue({ code: 'custom', path: ['AUTH_URL'], message: 'is required when SMTP_URL is set (mailed links start with it)' });
  const issuer = e.AUTH_OIDC_ISSUER ? new URL(e.AUTH_OIDC_ISSUER) : undefined;
  if (issuer?.protocol === 'http:') {
    const loopback = isLoopbackHost(issuer.hostname);
    if (e.AUTH_OIDC_ALLOW_HTTP !== '1' || !loopback) {
      ctx.addIssue({
        code: 'custom',
        path: ['AUTH_OIDC_ISSUER'],
        message: loopback
          ? 'must be an https:// URL (a plain http:// issuer on a loopback host needs AUTH_OIDC_ALLOW_HTTP=1)'
          : 'must be an https:// URL (plain http:// only for a loopback host, with AUTH_OIDC_ALLOW_HTTP=1)',
      });
    }
  }
}

/** The whole product's environment: every variable's own rule, then {@link crossChecks}. */
const productSchema = envSchema.superRefine(crossChecks);
export type EnvName = keyof typeof envSchema.shape;
/** The variables as they are given: strings, or undefined for unset. */
export type RawEnv = Record<string, string | undefined>;

/** An environment that does not validate; its message names each offending variable and why. */
export class EnvError extends Error {
  constructor(readonly problems: { variable: string; message: string }[]) {
    super(`Invalid environment (see docs/configuration.md):\n${problems.map((p) => `  ${p.variable}: ${p.message}`).join('\n')}`);
    this.name = 'EnvError';
  }
}

/**
 * Validates `source` against `schema` (the whole product schema, or a program's part of it:
 * `envSchema.pick(...)`). Unknown variables are ignored. Throws {@link EnvError} naming every
 * invalid variable.
 */
export function parseEnv<S extends z.ZodObject>(source: RawEnv, schema: S): z.output<S>;
export function parseEnv(source: RawEnv): Env;
export function parseEnv(source: RawEnv, schema: z.ZodType = productSchema) {
  const present = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    // An issue's path is the variable, then (for a list) the entry: the message names the entry.
    throw new EnvError(parsed.error.issues.map((i) => ({ variable: String(i.path[0] ?? 'environment'), message: i.message })));
  }
  return parsed.data;
}
