import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { query } from '@/db/query';
import { DomainError, invalid } from '@/server/errors';
import { forecastFromTrend, type Forecast } from '@/lib/forecast';

const idRow = z.object({ id: z.string() });
const pointRow = z.object({ at: z.string(), used: z.string(), capacity: z.string() });

/**
 * The stored periods of every series and how long each is kept: per minute for 2 days, per hour for
 * 90 days, per day for 3 years (1096 days). A series therefore holds at most 2,880 + 2,160 + 1,096 =
 * 6,136 rows, whatever its age.
 */
export const TIERS = [
  { step: 60, keepSeconds: 2 * 86_400 },
  { step: 3600, keepSeconds: 90 * 86_400 },
  { step: 86_400, keepSeconds: 1096 * 86_400 },
] as const;

/** The most rows one series may hold (docs/capacity.md: storage per series). */
export const MAX_ROWS_PER_SERIES = TIERS.reduce((n, t) => n + t.keepSeconds / t.step, 0);

/** The most points one history read returns; a range and step that would give more are refused. */
export const MAX_POINTS = 2_500;

/** The forecast's default window: the last 7 days. */
export const FORECAST_WINDOW_SECONDS = 7 * 86_400;

/** The share of a database backend's time the worker's sampler may take (SamplePacing.duty). */
export const SAMPLE_DUTY = 0.03;

/** Networks per part of a paced sample (each network is a few series: its pools, families, clusters). */
export const SAMPLE_PART_NETWORKS = 250;

/**
 * How a sample is spread over time so that it never takes much of the database from the requests
 * running beside it: the series are recorded one part (a range of SAMPLE_PART_NETWORKS networks,
 * the buckets with the first) per statement, and after each part the sampler waits `1/duty − 1`
 * times as long as the part took, so it keeps a database backend busy for about `duty` of the
 * time — but waits no longer than lets it finish by `finishBy` (the next sample's tick).
 */
export interface SamplePacing {
  /** The share of time the sample may keep a backend busy (0–1]; 1 records the parts back to back. */
  duty: number;
  /** Epoch milliseconds by which the sample should be done; pauses shrink to fit. */
  finishBy?: number;
  /** Networks per part (default SAMPLE_PART_NETWORKS). */
  partNetworks?: number;
  /** Told each part's database time (ms), e.g. by the bench. */
  onPart?: (ms: number) => void;
  /** Stops the sample between parts (the worker shutting down): the parts not yet recorded are not. */
  signal?: AbortSignal;
}

const FIRST_ID = '00000000-0000-0000-0000-000000000000';
const LAST_ID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/** The uuid just below `id` (the inclusive end of the part before the one `id` begins). */
export function uuidBefore(id: string): string {
  const hex = (BigInt(`0x${id.replace(/-/g, '')}`) - 1n).toString(16).padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Records one sample of every series from the exact counters (SQL `capacity_sample`, never a scan
 * of allocations) at `at`. Without `pacing`, in one statement; with it, part by part as
 * `SamplePacing` says (every part at the same `at`: sampling an instant again changes nothing, so a
 * sample cut short and retried writes the same rows). Returns how many series were sampled.
 */
export async function recordSample(db: DbOrTx, at: Date = new Date(), pacing?: SamplePacing): Promise<number> {
  const when = at.toISOString();
  const part = async (lo: string, hi: string, buckets: boolean) => {
    const [row] = await query(db, sql`select capacity_sample(${when}::timestamptz, ${lo}::uuid, ${hi}::uuid, ${buckets}) as n`, z.object({ n: z.number() }));
    return row.n;
  };
  if (!pacing) return part(FIRST_ID, LAST_ID, true);
  const every = pacing.partNetworks ?? SAMPLE_PART_NETWORKS;
  // The parts: every `every`-th network id begins one; together they cover every possible id, so a
  // network created meanwhile falls in one of them.
  const starts = await query(
    db,
    sql`
    select id from (select id, row_number() over (order by id) as n from networks) x
     where n % ${every} = 1 and n > 1 order by id`,
    idRow,
  );
  const bounds = [FIRST_ID, ...starts.map((r) => r.id)];
  let series = 0;
  for (let i = 0; i < bounds.length && !pacing.signal?.aborted; i++) {
    const t = performance.now();
    series += await part(bounds[i], i + 1 < bounds.length ? uuidBefore(bounds[i + 1]) : LAST_ID, i === 0);
    const took = performance.now() - t;
    pacing.onPart?.(took);
    const left = bounds.length - 1 - i;
    if (left === 0 || pacing.duty >= 1) continue;
    const fit = pacing.finishBy === undefined ? Infinity : Math.max(0, (pacing.finishBy - Date.now()) / left - took);
    await sleep(Math.min((took * (1 - pacing.duty)) / pacing.duty, fit));
  }
  return series;
}

/**
 * Drops what each period keeps no longer (per index range of each series, no sequential scan), then
 * series left with no samples whose object is gone. Returns the rows deleted.
 */
export async function pruneHistory(db: DbOrTx, now: Date = new Date()): Promise<{ samples: number; series: number }> {
  let samples = 0;
  for (const tier of TIERS) {
    const cutoff = new Date(now.getTime() - tier.keepSeconds * 1000).toISOString();
    const rows = await query(
      db,
      sql`
      delete from capacity_samples cs using capacity_series s
       where cs.series_id = s.id and cs.step = ${tier.step} and cs.at < ${cutoff}::timestamptz
      returning 1`,
      z.unknown(),
    );
    samples += rows.length;
  }
  const gone = await query(
    db,
    sql`
    delete from capacity_series s
     where not exists (select 1 from capacity_samples cs where cs.series_id = s.id)
       and not exists (select 1 from capacity_counters() c where c.key = s.key)
    returning 1`,
    z.unknown(),
  );
  return { samples, series: gone.length };
}

export interface HistoryRange {
  from: Date;
  to: Date;
  /** Seconds between points. */
  step: number;
  /** The stored period the points come from. */
  source: number;
}

/** Steps a default range picks from: the finest that gives at most 500 points. */
const NICE_STEPS = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400];

/** Parses `step` as seconds (`300`) or a duration (`30s`, `5m`, `1h`, `1d`). */
export function parseStep(text: string): number | null {
  const m = /^(\d{1,7})([smhd]?)$/.exec(text.trim());
  if (!m) return null;
  const n = Number(m[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
  return n > 0 ? n : null;
}

/** Parses a time bound: RFC 3339, epoch seconds, or `-<duration>` before `now` (`-7d`). */
export function parseTime(text: string, now: Date): Date | null {
  const t = text.trim();
  if (/^-\d{1,7}[smhd]$/.test(t)) {
    const s = parseStep(t.slice(1));
    return s === null ? null : new Date(now.getTime() - s * 1000);
  }
  if (/^\d{1,12}$/.test(t)) return new Date(Number(t) * 1000);
  if (!/^\d{4}-\d{2}-\d{2}(T[0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(t)) return null;
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * The range a history read covers: `to` defaults to now, `from` to a day before `to`, `step` to the
 * finest stored period that gives at most 500 points. The points come from the finest period that
 * is at most `step` and still kept at `from`; a step finer than that period is raised to it.
 */
export function resolveRange(input: { from?: string; to?: string; step?: string }, now: Date = new Date()): HistoryRange {
  const to = input.to === undefined ? now : parseTime(input.to, now);
  if (!to) throw invalid('to', 'to must be an RFC 3339 time, epoch seconds or -<duration> (e.g. -7d)');
  const from = input.from === undefined ? new Date(to.getTime() - 86_400_000) : parseTime(input.from, now);
  if (!from) throw invalid('from', 'from must be an RFC 3339 time, epoch seconds or -<duration> (e.g. -7d)');
  if (from.getTime() >= to.getTime()) throw invalid('from', 'from must be before to');
  const span = (to.getTime() - from.getTime()) / 1000;
  let step: number;
  if (input.step === undefined) {
    step = NICE_STEPS.find((s) => span / s <= 500) ?? Math.ceil(span / 500 / 86_400) * 86_400;
  } else {
    const parsed = parseStep(input.step);
    if (parsed === null) throw invalid('step', 'step must be seconds or a duration such as 5m, 1h, 1d');
    step = parsed;
  }
  const age = (now.getTime() - from.getTime()) / 1000;
  const kept = TIERS.filter((t) => t.keepSeconds >= age);
  const tier = [...kept].reverse().find((t) => t.step <= step) ?? kept[0] ?? TIERS[TIERS.length - 1];
  const source: number = tier.step;
  if (step < source) step = source;
  if (step % source !== 0) step = Math.ceil(step / source) * source;
  if (span / step > MAX_POINTS) throw invalid('step', `from..to at this step gives more than ${MAX_POINTS} points; use a larger step`);
  return { from, to, step, source };
}

export interface HistoryPoint {
  at: string;
  /** Exact decimal: the highest value sampled in the point's period. */
  used: string;
  capacity: string;
  utilization: number;
}

const share = (used: string, capacity: string) => {
  const c = Number(capacity);
  return c === 0 ? (Number(used) > 0 ? 1 : 0) : Math.round((Number(used) / c) * 1e6) / 1e6;
};

/** A series' points over `range`: each the peak `used` and the latest `capacity` of its step. */
export async function readSeriesPoints(db: DbOrTx, seriesId: number, range: HistoryRange): Promise<HistoryPoint[]> {
  const from = new Date(Math.floor(range.from.getTime() / (range.step * 1000)) * range.step * 1000).toISOString();
  if (range.step === range.source) {
    // One stored row per point: read as stored, no grouping.
    const rows = await query(
      db,
      sql`
      select to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as at, used::text as used, capacity::text as capacity
        from capacity_samples
       where series_id = ${seriesId} and step = ${range.source} and at >= ${from}::timestamptz and at <= ${range.to.toISOString()}::timestamptz
       order by series_id, step, at`,
      pointRow,
    );
    return rows.map((r) => ({ ...r, utilization: share(r.used, r.capacity) }));
  }
  const rows = await query(
    db,
    sql`
    select to_char(date_bin(make_interval(secs => ${range.step}), at, 'epoch'::timestamptz) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as at,
           max(used)::text as used, (array_agg(capacity order by at desc))[1]::text as capacity
      from capacity_samples
     where series_id = ${seriesId} and step = ${range.source} and at >= ${from}::timestamptz and at <= ${range.to.toISOString()}::timestamptz
     group by 1 order by 1`,
    pointRow,
  );
  return rows.map((r) => ({ ...r, utilization: share(r.used, r.capacity) }));
}

/**
 * The forecast of one series at `now`: its trend over the window from SQL `capacity_trend` (the
 * method the alert evaluation uses too), made a forecast by lib/forecast.ts.
 */
export async function seriesForecast(
  db: DbOrTx,
  seriesId: number,
  now: Date = new Date(),
  windowSeconds = FORECAST_WINDOW_SECONDS,
): Promise<{ forecast: Forecast; windowDays: number }> {
  const [row] = await query(
    db,
    sql`
    select slope, extract(epoch from latest_at) * 1000 as "latestAt", latest_used as "latestUsed", latest_capacity as "latestCapacity"
      from capacity_trend(${now.toISOString()}::timestamptz, make_interval(secs => ${windowSeconds}), ${seriesId}::bigint)`,
    // float8 columns arrive as numbers, the numeric product (latestAt) as text.
    z.object({ slope: z.number().nullable(), latestAt: z.union([z.string(), z.number()]), latestUsed: z.number(), latestCapacity: z.number() }),
  );
  const trend = row
    ? {
        slope: row.slope === null ? null : Number(row.slope),
        latestAt: Number(row.latestAt),
        latestUsed: Number(row.latestUsed),
        latestCapacity: Number(row.latestCapacity),
      }
    : null;
  return { forecast: forecastFromTrend(trend), windowDays: Math.round(windowSeconds / 86_400) };
}

const seriesRefRow = z.object({
  id: z.number(),
  key: z.string(),
  kind: z.string(),
  family: z.number().nullable(),
  resourceType: z.string().nullable(),
  objectId: z.string(),
});

export interface SeriesRef {
  id: number;
  key: string;
  kind: string;
  family: number | null;
  resourceType: string | null;
  objectId: string;
}

/** The series of one object of a project (a network's families, a cluster's, a project's buckets), by key. */
export async function seriesOf(db: DbOrTx, projectId: string, objectId: string, kinds: string[]): Promise<SeriesRef[]> {
  return query(
    db,
    sql`
    select id, key, kind, family, resource_type as "resourceType", object_id as "objectId"
      from capacity_series where project_id = ${projectId} and object_id = ${objectId} and kind = any(string_to_array(${kinds.join(',')}, ','))
     order by kind, family nulls last, resource_type`,
    seriesRefRow,
  );
}

export interface SeriesHistory {
  key: string;
  kind: string;
  family: 'IPv4' | 'IPv6' | null;
  resourceType: string | null;
  points: HistoryPoint[];
  /** The counter as it is now (exact), when the object still exists. */
  current: { used: string; capacity: string; utilization: number } | null;
  forecast: Forecast;
  forecastWindowDays: number;
}

/** Every series of an object, each with its points over `range`, its current value and its forecast. */
export async function objectHistory(db: DbOrTx, projectId: string, objectId: string, kinds: string[], range: HistoryRange, now = new Date()) {
  const series = await seriesOf(db, projectId, objectId, kinds);
  const current = await query(
    db,
    sql`
    select key, used::text as used, capacity::text as capacity from capacity_counters()
     where project_id = ${projectId} and object_id = ${objectId} and kind = any(string_to_array(${kinds.join(',')}, ','))`,
    z.object({ key: z.string(), used: z.string(), capacity: z.string() }),
  );
  const out: SeriesHistory[] = [];
  for (const s of series) {
    const now_ = current.find((c) => c.key === s.key);
    const { forecast, windowDays } = await seriesForecast(db, s.id, now);
    out.push({
      key: s.key,
      kind: s.kind,
      family: s.family === 4 ? 'IPv4' : s.family === 6 ? 'IPv6' : null,
      resourceType: s.resourceType,
      points: await readSeriesPoints(db, s.id, range),
      current: now_ ? { used: now_.used, capacity: now_.capacity, utilization: share(now_.used, now_.capacity) } : null,
      forecast,
      forecastWindowDays: windowDays,
    });
  }
  return out;
}

/** A project's object id by name (network or cluster), or NotFound naming the field. */
export async function objectIdByName(db: DbOrTx, projectId: string, kind: 'network' | 'cluster', name: string): Promise<string> {
  const rows =
    kind === 'network'
      ? await query(db, sql`select id from networks where project_id = ${projectId} and name = ${name}`, idRow)
      : await query(db, sql`select id from clusters where project_id = ${projectId} and name = ${name}`, idRow);
  if (!rows.length) throw new DomainError('NotFound', `${kind} "${name}" not found`, 'name');
  return rows[0].id;
}

export interface FleetSeries {
  family: 'IPv4' | 'IPv6';
  points: HistoryPoint[];
  /** The sum of the counters now. */
  current: { used: string; capacity: string; utilization: number };
}

/**
 * Fleet-wide address utilization over `range`, per family: at each step, the sum over every
 * network of its peak `used` and its latest `capacity` in that step (networks with no sample in a
 * step add nothing to it), and the sum of the counters now. For the operators' overview.
 */
export async function fleetHistory(db: DbOrTx, range: HistoryRange): Promise<FleetSeries[]> {
  const from = new Date(Math.floor(range.from.getTime() / (range.step * 1000)) * range.step * 1000).toISOString();
  const rows = await query(
    db,
    sql`
    with per as (
      select s.family, date_bin(make_interval(secs => ${range.step}), cs.at, 'epoch'::timestamptz) as b,
             max(cs.used) as used, (array_agg(cs.capacity order by cs.at desc))[1] as capacity
        from capacity_series s join capacity_samples cs on cs.series_id = s.id
       where s.kind = 'network' and cs.step = ${range.source} and cs.at >= ${from}::timestamptz and cs.at <= ${range.to.toISOString()}::timestamptz
       group by s.family, cs.series_id, 2)
    select family, to_char(b at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as at, sum(used)::text as used, sum(capacity)::text as capacity
      from per group by family, b order by family, b`,
    pointRow.extend({ family: z.number() }),
  );
  const now = await query(
    db,
    sql`
    select family, sum(used)::text as used, sum(capacity)::text as capacity from capacity_counters() where kind = 'network' group by family order by family`,
    z.object({ family: z.number(), used: z.string(), capacity: z.string() }),
  );
  return now.map((c) => ({
    family: c.family === 4 ? 'IPv4' : 'IPv6',
    points: rows.filter((r) => r.family === c.family).map((r) => ({ at: r.at, used: r.used, capacity: r.capacity, utilization: share(r.used, r.capacity) })),
    current: { used: c.used, capacity: c.capacity, utilization: share(c.used, c.capacity) },
  }));
}
