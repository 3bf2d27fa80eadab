import pg from 'pg';

/**
 * node-postgres (`pg`: graphile-worker's driver, and the live-update listener's) for a DATABASE_URL
 * that may name several hosts, as libpq and the `postgres` driver accept them:
 * `postgres://user:pass@h1:5432,h2:5433/db?target_session_attrs=read-write`. `pg` itself connects
 * to one host only; clients made here connect to whichever of the hosts is the primary at the time
 * each connection is opened, so after a failover the pool's new connections find the promoted
 * server without a process restart.
 */
export interface PgTarget {
  /** One single-host URL per host, in the order given. */
  urls: string[];
  /** Whether a connection must land on a writable server (any multi-host URL, or target_session_attrs asking for it). */
  primaryOnly: boolean;
}

const URL_PARTS = /^(postgres(?:ql)?:\/\/)(?:([^@/]*)@)?([^/?]*)(\/[^?]*)?(?:\?(.*))?$/;

/** The hosts of a (possibly multi-host) PostgreSQL URL, each as a single-host URL. */
export function pgTarget(url: string): PgTarget {
  const m = URL_PARTS.exec(url);
  if (!m) return { urls: [url], primaryOnly: false };
  const [, scheme, auth, hosts, pathname = '', query = ''] = m;
  const params = new URLSearchParams(query);
  const attrs = params.get('target_session_attrs');
  params.delete('target_session_attrs');
  const rest = params.toString();
  const list = hosts.split(',').filter(Boolean);
  const urls = list.map((h) => `${scheme}${auth !== undefined ? `${auth}@` : ''}${h}${pathname}${rest ? `?${rest}` : ''}`);
  return { urls, primaryOnly: attrs === 'read-write' || attrs === 'primary' || (list.length > 1 && attrs !== 'any') };
}

/** The host (as a single-host URL) found to be the primary, reused for a moment by the next connections. */
let lastPrimary: { url: string; at: number } | undefined;
const PRIMARY_REUSE_MS = 1_000;

/** The first host that accepts connections and is not in recovery; throws when none is. */
async function findPrimary(target: PgTarget, config: pg.ClientConfig): Promise<string> {
  if (lastPrimary && Date.now() - lastPrimary.at < PRIMARY_REUSE_MS && target.urls.includes(lastPrimary.url)) return lastPrimary.url;
  const reasons: string[] = [];
  for (const url of target.urls) {
    const probe = new pg.Client({ ...config, connectionString: url });
    probe.on('error', () => {});
    try {
      await probe.connect();
      const { rows } = await probe.query<{ standby: boolean }>('select pg_is_in_recovery() as standby');
      if (!rows[0]?.standby) {
        lastPrimary = { url, at: Date.now() };
        return url;
      }
      reasons.push(`${new URL(url).host}: in recovery (a standby)`);
    } catch (e) {
      reasons.push(`${safeHost(url)}: ${(e as Error).message}`);
    } finally {
      await probe.end().catch(() => {});
    }
  }
  const error = new Error(`no primary among ${target.urls.length} host(s): ${reasons.join('; ')}`) as Error & { code: string };
  // Connection-class SQLSTATE: "sqlclient unable to establish sqlconnection" (server/errors.ts: DatabaseUnavailable).
  error.code = '08001';
  throw error;
}

const safeHost = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return 'host';
  }
};

/**
 * `findPrimary`, tried again with backoff while no host is the primary (the old one died and the
 * standby is not promoted yet) until `waitMs` has passed: a failover of a few seconds then looks
 * to the caller like a slow connection rather than an error.
 */
async function waitForPrimary(target: PgTarget, config: pg.ClientConfig, waitMs: number): Promise<string> {
  const deadline = Date.now() + waitMs;
  let delay = 100;
  for (;;) {
    try {
      return await findPrimary(target, config);
    } catch (e) {
      if (Date.now() + delay > deadline) throw e;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 1_000);
    }
  }
}

/**
 * `pg` reports a connection lost under a query ("Connection terminated unexpectedly") and a pool
 * that could not connect in time with no error code at all. Clients and pools made here give such
 * errors the SQLSTATE of a connection failure (08006), so callers tell them apart by code alone:
 * graphile-worker's retries (server/worker/runner.ts) and the web's DatabaseUnavailable.
 */
const CONNECTION_LOST = /^(Connection terminated|timeout exceeded when trying to connect)/;

export function withConnectionCode(e: unknown): unknown {
  if (e instanceof Error && (e as { code?: unknown }).code === undefined && CONNECTION_LOST.test(e.message)) {
    (e as Error & { code: string }).code = '08006';
  }
  return e;
}

const isPromise = (v: unknown): v is Promise<unknown> => typeof (v as Promise<unknown> | undefined)?.then === 'function';

/** Wraps `fn` (a method of `pg`'s with promise and callback forms) so that its promise form rejects with coded errors. */
function coded<F extends (...args: never[]) => unknown>(fn: F): F {
  return ((...args: never[]) => {
    const result = fn(...args);
    return isPromise(result)
      ? result.catch((e: unknown) => {
          throw withConnectionCode(e);
        })
      : result;
  }) as F;
}

/** A `pg.Client` whose promise-form queries reject connection losses with a code (`withConnectionCode`). */
class CodedClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.query = coded(this.query.bind(this));
  }
}

/** A `pg.Client` class whose connections go to the primary among `target`'s hosts. */
function primaryClientClass(target: PgTarget, probeConfig: pg.ClientConfig, waitMs: number): typeof pg.Client {
  return class PrimaryClient extends CodedClient {
    constructor(config?: pg.ClientConfig) {
      super(config);
    }

    // Chooses the host first, then connects as pg would (both the promise and the callback forms).
    connect(): Promise<pg.Client>;
    connect(callback: (err: Error) => void): void;
    connect(callback?: (err: Error) => void): Promise<pg.Client> | void {
      const done = waitForPrimary(target, probeConfig, waitMs).then(async (url) => {
        const u = new URL(url);
        const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
        self.host = self.connectionParameters.host = u.hostname;
        self.port = self.connectionParameters.port = Number(u.port || 5432);
        await super.connect();
        return this as pg.Client;
      });
      if (!callback) return done;
      done.then(() => callback(undefined as unknown as Error), callback);
    }
  };
}

/**
 * A `pg.Pool` on `url` (single- or multi-host). With several hosts, a new connection waits up to
 * `waitForPrimaryMs` (default 0) for one of them to become the primary.
 */
export function createPgPool(url: string, options: Omit<pg.PoolConfig, 'connectionString'> & { waitForPrimaryMs?: number } = {}): pg.Pool {
  const { waitForPrimaryMs = 0, ...config } = options;
  const target = pgTarget(url);
  const pool =
    target.urls.length === 1 && !target.primaryOnly
      ? new pg.Pool({ ...config, connectionString: url, Client: CodedClient })
      : new pg.Pool({
          ...config,
          connectionString: target.urls[0],
          Client: primaryClientClass(target, { connectionTimeoutMillis: config.connectionTimeoutMillis }, waitForPrimaryMs),
        });
  pool.connect = coded(pool.connect.bind(pool));
  return pool;
}

/** A `pg.Client` on `url` (single- or multi-host). */
export function createPgClient(url: string, options: Omit<pg.ClientConfig, 'connectionString'> = {}): pg.Client {
  const target = pgTarget(url);
  if (target.urls.length === 1 && !target.primaryOnly) return new CodedClient({ ...options, connectionString: url });
  const Client = primaryClientClass(target, { connectionTimeoutMillis: options.connectionTimeoutMillis }, 0);
  return new Client({ ...options, connectionString: target.urls[0] });
}
