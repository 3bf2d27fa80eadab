import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query } from '@/db/query';

const escape = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labels = (l: Record<string, string | number | null>) =>
  Object.entries(l)
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `${k}="${escape(String(v))}"`)
    .join(',');

/**
 * Prometheus text for capacity: per pool (the `maxSeries` most utilized, network roots and child
 * pools; node blocks are the clusters') its addresses as capacity, allocated, reserved and free; per
 * allowance bucket (the `maxSeries` most utilized) its limit, allocated and available; the firing
 * capacity alerts of those series; and fixed-label totals (series omitted beyond the cap, alerts
 * firing by condition and kind). So the label sets number at most 4·maxSeries + 3·maxSeries + the
 * firing alerts' (at most 3 per series shown) + a fixed few, however many pools and buckets exist.
 * Read from capacity_counters() (the exact counters), never from the allocations.
 */
export async function capacityMetricsText(db: DbOrTx, maxSeries: number): Promise<string> {
  const pools = await query(
    db,
    sql`
    select pr.slug as project, n.name as network, p.name as pool, c.family, (c.capacity + c.reserved)::text as size, c.used::text as allocated,
           c.reserved::text as reserved, (c.capacity - c.used)::text as free, c.key
      from capacity_counters() c join ip_pools p on p.id = c.object_id join networks n on n.id = p.network_id join projects pr on pr.id = c.project_id
     where c.kind = 'pool'
     order by case when c.capacity > 0 then c.used / c.capacity else 1 end desc, c.key limit ${maxSeries}`,
    z.object({
      project: z.string(),
      network: z.string(),
      pool: z.string(),
      family: z.number(),
      size: z.string(),
      allocated: z.string(),
      reserved: z.string(),
      free: z.string(),
      key: z.string(),
    }),
  );
  const buckets = await query(
    db,
    sql`
    select pr.slug as project, c.resource_type as "resourceType", c.capacity::text as "limit", c.used::text as allocated,
           greatest(c.capacity - c.used, 0)::text as available, c.key
      from capacity_counters() c join projects pr on pr.id = c.project_id
     where c.kind = 'bucket'
     order by case when c.capacity > 0 then c.used / c.capacity else 0 end desc, c.key limit ${maxSeries}`,
    z.object({ project: z.string(), resourceType: z.string(), limit: z.string(), allocated: z.string(), available: z.string(), key: z.string() }),
  );
  const [totals] = await query(
    db,
    sql`
    select (select count(*)::int from ip_pools where kind <> 'NodeBlock') as pools, (select count(*)::int from allowance_buckets) as buckets`,
    z.object({ pools: z.number(), buckets: z.number() }),
  );
  const alerts = await query(
    db,
    sql`
    select s.key, s.kind, a.condition from capacity_alerts a join capacity_series s on s.id = a.series_id where a.firing`,
    z.object({ key: z.string(), kind: z.string(), condition: z.string() }),
  );

  const out: string[] = [];
  const gauge = (name: string, help: string, rows: string[]) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, ...rows);
  const poolLabels = (p: (typeof pools)[number]) => labels({ project: p.project, network: p.network, pool: p.pool, family: p.family === 4 ? 'IPv4' : 'IPv6' });
  gauge(
    'meridian_pool_capacity_addresses',
    'Every address of the pool CIDR',
    pools.map((p) => `meridian_pool_capacity_addresses{${poolLabels(p)}} ${p.size}`),
  );
  gauge(
    'meridian_pool_allocated_addresses',
    'Addresses allocated in the pool',
    pools.map((p) => `meridian_pool_allocated_addresses{${poolLabels(p)}} ${p.allocated}`),
  );
  gauge(
    'meridian_pool_reserved_addresses',
    'Addresses held back by the pool reservations',
    pools.map((p) => `meridian_pool_reserved_addresses{${poolLabels(p)}} ${p.reserved}`),
  );
  gauge(
    'meridian_pool_free_addresses',
    'Addresses that can still be allocated in the pool',
    pools.map((p) => `meridian_pool_free_addresses{${poolLabels(p)}} ${p.free}`),
  );
  const bucketLabels = (b: (typeof buckets)[number]) => labels({ project: b.project, resource_type: b.resourceType });
  gauge(
    'meridian_bucket_limit',
    'Allowance bucket limit (sum of active grants)',
    buckets.map((b) => `meridian_bucket_limit{${bucketLabels(b)}} ${b.limit}`),
  );
  gauge(
    'meridian_bucket_allocated',
    'Allowance bucket allocated (sum of live granted claims)',
    buckets.map((b) => `meridian_bucket_allocated{${bucketLabels(b)}} ${b.allocated}`),
  );
  gauge(
    'meridian_bucket_available',
    'Allowance bucket available = max(0, limit - allocated)',
    buckets.map((b) => `meridian_bucket_available{${bucketLabels(b)}} ${b.available}`),
  );
  gauge('meridian_capacity_series_omitted', 'Pools and buckets left out of the per-series gauges by CAPACITY_METRICS_MAX_SERIES', [
    `meridian_capacity_series_omitted{kind="pool"} ${Math.max(0, totals.pools - pools.length)}`,
    `meridian_capacity_series_omitted{kind="bucket"} ${Math.max(0, totals.buckets - buckets.length)}`,
  ]);
  const firingBy = new Map<string, number>();
  for (const a of alerts) firingBy.set(`${a.condition}\u0000${a.kind}`, (firingBy.get(`${a.condition}\u0000${a.kind}`) ?? 0) + 1);
  const rows: string[] = [];
  for (const condition of ['warning', 'critical', 'forecast'])
    for (const kind of ['pool', 'network', 'cluster-pods', 'cluster-blocks', 'bucket'])
      rows.push(`meridian_capacity_alerts_firing{${labels({ condition, kind })}} ${firingBy.get(`${condition}\u0000${kind}`) ?? 0}`);
  gauge('meridian_capacity_alerts_firing', 'Capacity alerts firing, by condition and series kind', rows);
  const shown = new Map<string, string>([...pools.map((p) => [p.key, poolLabels(p)] as const), ...buckets.map((b) => [b.key, bucketLabels(b)] as const)]);
  gauge(
    'meridian_capacity_alert_firing',
    'A firing capacity alert of a pool or bucket shown above (1), by condition',
    alerts.filter((a) => shown.has(a.key)).map((a) => `meridian_capacity_alert_firing{${shown.get(a.key)},condition="${a.condition}"} 1`),
  );
  return out.join('\n') + '\n';
}
