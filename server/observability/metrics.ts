import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';

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

const g = globalThis as unknown as { __meridianMetrics?: Metrics };

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
  }
  return g.__meridianMetrics;
}

/** Collapses a request path to a bounded route label (ids and names become placeholders). */
export function routeLabel(pathname: string): string {
  if (pathname.startsWith('/_next/')) return '/_next';
  if (pathname.startsWith('/api/trpc/')) return '/api/trpc';
  if (pathname.startsWith('/api/auth/')) return '/api/auth';
  if (pathname.startsWith('/api/v1')) {
    const parts = pathname.split('/').filter(Boolean);
    // /api/v1/projects/{project}/{resource}/{name}/...
    if (parts[2] === 'projects') return ['/api/v1/projects/{project}', parts[4], parts[5] ? '{name}' : undefined, parts[6]].filter(Boolean).join('/');
    return '/' + parts.slice(0, 3).join('/');
  }
  if (['/healthz', '/readyz', '/metrics', '/sign-in'].includes(pathname)) return pathname;
  return '/(pages)';
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

/** Prometheus text for the database-held counters and queue gauges. */
export async function databaseMetricsText(db: DbOrTx): Promise<string> {
  const rows = (await db.execute(sql`select metric, labels, value::text as value from metric_counters order by metric, labels`)) as unknown as {
    metric: string;
    labels: string;
    value: string;
  }[];
  const out: string[] = [];
  let last = '';
  for (const r of rows) {
    if (r.metric !== last) {
      out.push(`# TYPE ${r.metric} counter`);
      last = r.metric;
    }
    out.push(`${r.metric}${r.labels ? `{${r.labels}}` : ''} ${r.value}`);
  }
  const queue = (await db.execute(sql`
    select count(*) filter (where locked_at is null and attempts < max_attempts)::int as pending,
           count(*) filter (where locked_at is not null)::int as running,
           count(*) filter (where attempts >= max_attempts)::int as dead
    from graphile_worker.jobs`)) as unknown as { pending: number; running: number; dead: number }[];
  const q = queue[0] ?? { pending: 0, running: 0, dead: 0 };
  out.push('# TYPE meridian_jobs gauge');
  out.push(`meridian_jobs{state="pending"} ${q.pending}`, `meridian_jobs{state="running"} ${q.running}`, `meridian_jobs{state="dead"} ${q.dead}`);
  // Project deletion: how many are under way, and what their objects wait on (the retries are the
  // counter meridian_project_deletion_retries_total above).
  const deleting = (await db.execute(sql`
    select (select count(*)::int from projects where phase = 'Deleting') as projects,
           coalesce((select json_object_agg(waiting_on, n) from (select waiting_on, count(*)::int as n from project_deletion_blockers group by 1) b), '{}'::json) as blockers`)) as unknown as {
    projects: number;
    blockers: Record<string, number>;
  }[];
  const d = deleting[0] ?? { projects: 0, blockers: {} };
  out.push('# TYPE meridian_projects_deleting gauge', `meridian_projects_deleting ${d.projects}`);
  out.push('# TYPE meridian_project_deletion_blockers gauge');
  for (const dependency of ['provider', 'fleet', 'meridian']) out.push(`meridian_project_deletion_blockers{waiting_on="${dependency}"} ${d.blockers[dependency] ?? 0}`);
  return out.join('\n') + '\n';
}
