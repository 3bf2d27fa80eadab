import { createHash, timingSafeEqual } from 'node:crypto';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { sql } from 'drizzle-orm';
import { batchStatistics } from '@/db/batch';
import type { DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query } from '@/db/query';
import { env } from '@/server/env';
import { capacityMetricsText } from './capacity-metrics';

const capacityMetricsMax = () => env().CAPACITY_METRICS_MAX_SERIES;

/**
 * In-process metrics (this web process) live in a prom-client registry on `globalThis` (Next may
 * load this module in several bundles). Metrics that must add up across replicas — job outcomes,
 * retries — are counters in PostgreSQL (`metric_counters`), incremented by whichever process did
 * the work and read by `/metrics`, so one scrape of any web replica shows the fleet-wide totals.
 */
interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  domainCounter: Counter<'name' | 'outcome'>;
}

const g = globalThis as typeof globalThis & { __meridianMetrics?: Metrics };

export function metrics(): Metrics {
  if (!g.__meridianMetrics) {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: 'meridian_process_' });
    g.__meridianMetrics = {
      registry,
      httpDuration: new Histogram({
        name: 'meridian_http_request_duration_seconds',
        help: 'HTTP request latency by method, route group and status',
        labelNames: ['method', 'route', 'status'],
        buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers: [registry],
      }),
      domainCounter: new Counter({
        name: 'meridian_decisions_total',
        help: 'Domain decisions made by this process (allocations, quota decisions) by outcome',
        labelNames: ['name', 'outcome'],
        registers: [registry],
      }),
    };
    // Group commit (db/batch.ts), read at each scrape: items ÷ statements is the mean batch.
    const batchCounter = (name: string, help: string, field: 'statements' | 'items' | 'fallbacks') =>
      new Counter({
        name,
        help,
        labelNames: ['function'],
        registers: [registry],
        collect() {
          this.reset();
          for (const b of batchStatistics()) this.inc({ function: b.fn }, b[field]);
        },
      });
    batchCounter('meridian_batch_statements_total', 'Statements sent by each batched SQL function (a lone item is a statement of one)', 'statements');
    batchCounter('meridian_batch_items_total', 'Items carried by those statements', 'items');
    batchCounter('meridian_batch_fallbacks_total', 'Batches that raised and whose items ran again one by one', 'fallbacks');
  }
  return g.__meridianMetrics;
}

/**
 * The `route` label of a request, from a fixed set, so that no path a client makes up adds a label
 * set (each one would be kept, with all its buckets, for the life of the process):
 * - REST v1: the matched route's pattern from the route table (`restRoute`, e.g.
 *   `/api/v1/projects/{project}/ipclaims`), anything unmatched `unmatched`;
 * - the console's endpoints by prefix (`/api/trpc`, `/api/auth`, `/api/live`, other `/api/…` as
 *   `/api/(other)`), Next's assets `/_next`, the probes and `/metrics` as themselves;
 * - every other path (pages, including ones that do not exist) `(pages)`.
 */
export function routeLabel(pathname: string, restRoute: (pathname: string) => string | undefined): string {
  if (pathname === '/api/v1' || pathname.startsWith('/api/v1/')) return restRoute(pathname) ?? 'unmatched';
  for (const prefix of ['/api/trpc', '/api/auth', '/api/live']) if (pathname === prefix || pathname.startsWith(`${prefix}/`)) return prefix;
  if (pathname === '/api' || pathname.startsWith('/api/')) return '/api/(other)';
  if (pathname.startsWith('/_next/')) return '/_next';
  if (FIXED_PATHS.has(pathname)) return pathname;
  return '(pages)';
}

const FIXED_PATHS = new Set(['/healthz', '/readyz', '/metrics', '/sign-in']);

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The `method` label: the methods the app serves, any other `OTHER`. */
export function methodLabel(method: string | undefined): string {
  const m = method ?? 'GET';
  return METHODS.has(m) ? m : 'OTHER';
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether `authorization` carries `Bearer <token>` (compared in constant time); never without a token configured. */
export function metricsAuthorized(authorization: string | null, token: string | undefined): boolean {
  if (token === undefined) return false;
  const match = /^Bearer[ ]+(\S+)$/i.exec(authorization ?? '');
  return match !== null && timingSafeEqual(digest(match[1]), digest(token));
}

/** Who may scrape: the holder of `token` everything; anyone, when `public`, the aggregate series only. */
export interface MetricsAccess {
  token: string | undefined;
  public: boolean;
}

/** The scrape access from the environment's values (METRICS_TOKEN, METRICS_PUBLIC). */
export function metricsAccess(e: { METRICS_TOKEN?: string; METRICS_PUBLIC: '0' | '1' }): MetricsAccess {
  return { token: e.METRICS_TOKEN, public: e.METRICS_PUBLIC === '1' };
}

/**
 * The `/metrics` answer. With the bearer token: this process's metrics plus the cluster-wide
 * counters from the database, the per-pool and per-bucket capacity gauges included (their labels
 * name projects, networks and pools). Without it: 401 — unless METRICS_PUBLIC=1, which answers
 * the same exposition without any series labelled by a tenant's names (the capacity gauges are
 * cut to their totals). With no token configured and METRICS_PUBLIC unset, nobody may scrape.
 */
export async function metricsResponse(req: Request, db: DbOrTx, access: MetricsAccess): Promise<Response> {
  const authorized = metricsAuthorized(req.headers.get('authorization'), access.token);
  if (!authorized && !access.public) {
    const message = access.token
      ? 'a valid bearer token (METRICS_TOKEN) is required'
      : 'metrics are closed: set METRICS_TOKEN (npm start generates one) or METRICS_PUBLIC=1';
    return Response.json({ error: { code: 'Unauthenticated', message } }, { status: 401, headers: { 'www-authenticate': 'Bearer realm="metrics"' } });
  }
  const { registry } = metrics();
  let dbText: string;
  try {
    dbText = await databaseMetricsText(db, { tenantSeries: authorized });
  } catch (e) {
    dbText = `# database metrics unavailable: ${(e as Error).message.replace(/\n/g, ' ')}\n`;
  }
  return new Response((await registry.metrics()) + dbText, { headers: { 'content-type': registry.contentType, 'cache-control': 'no-store' } });
}

/** Adds `by` to a cluster-wide counter (one row per metric name and label set). */
export async function incrementCounter(db: DbOrTx, metric: string, labels: Record<string, string>, by = 1) {
  const key = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k].replace(/["\\\n]/g, '_')}"`)
    .join(',');
  await db.execute(sql`
    insert into metric_counters (metric, labels, value) values (${metric}, ${key}, ${by})
    on conflict (metric, labels) do update set value = metric_counters.value + excluded.value, updated_at = now()`);
}

/**
 * Prometheus text for the database-held counters and queue gauges; the per-pool and per-bucket
 * capacity gauges (labelled with projects, networks and pools) only with `tenantSeries`.
 */
export async function databaseMetricsText(db: DbOrTx, { tenantSeries }: { tenantSeries: boolean }): Promise<string> {
  const rows = await query(
    db,
    sql`select metric, labels, value::text as value from metric_counters order by metric, labels`,
    z.object({ metric: z.string(), labels: z.string(), value: z.string() }),
  );
  const out: string[] = [];
  let last = '';
  for (const r of rows) {
    if (r.metric !== last) {
      out.push(`# TYPE ${r.metric} counter`);
      last = r.metric;
    }
    out.push(`${r.metric}${r.labels ? `{${r.labels}}` : ''} ${r.value}`);
  }
  const queue = await query(
    db,
    sql`
    select count(*) filter (where locked_at is null and attempts < max_attempts)::int as pending,
           count(*) filter (where locked_at is not null)::int as running,
           count(*) filter (where attempts >= max_attempts)::int as dead
    from graphile_worker.jobs`,
    z.object({ pending: z.number(), running: z.number(), dead: z.number() }),
  );
  const q = queue[0] ?? { pending: 0, running: 0, dead: 0 };
  out.push('# TYPE meridian_jobs gauge');
  out.push(`meridian_jobs{state="pending"} ${q.pending}`, `meridian_jobs{state="running"} ${q.running}`, `meridian_jobs{state="dead"} ${q.dead}`);
  // Project deletion: how many are under way, and what their objects wait on (the retries are the
  // counter meridian_project_deletion_retries_total above).
  const deleting = await query(
    db,
    sql`
    select (select count(*)::int from projects where phase = 'Deleting') as projects,
           coalesce((select json_object_agg(waiting_on, n) from (select waiting_on, count(*)::int as n from project_deletion_blockers group by 1) b), '{}'::json) as blockers`,
    z.object({ projects: z.number(), blockers: z.record(z.string(), z.number()) }),
  );
  const d = deleting[0] ?? { projects: 0, blockers: {} };
  out.push('# TYPE meridian_projects_deleting gauge', `meridian_projects_deleting ${d.projects}`);
  out.push('# TYPE meridian_project_deletion_blockers gauge');
  for (const dependency of ['provider', 'fleet', 'meridian'])
    out.push(`meridian_project_deletion_blockers{waiting_on="${dependency}"} ${d.blockers[dependency] ?? 0}`);
  return out.join('\n') + '\n' + (await capacityMetricsText(db, tenantSeries ? capacityMetricsMax() : 0));
}
