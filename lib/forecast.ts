/**
 * Time to exhaustion from a series' recent trend: a least-squares line through the samples of the
 * window (each weighted by the seconds it stands for, so the last two days' per-minute samples do not
 * outweigh the hourly ones before them), projected from the latest sample to the capacity.
 *
 * - `full`: the latest sample is at or above the capacity;
 * - `notGrowing`: the fitted slope is ≤ 0 (flat or shrinking: no exhaustion date);
 * - `growing`: full in `(capacity − latest used) / slope` seconds from the latest sample;
 * - `insufficientData`: fewer than two samples, or all at one instant.
 *
 * Pure arithmetic on doubles: IPv6 counts lose precision beyond 2^53, which a forecast can afford.
 */
export interface TrendPoint {
  /** Start of the sample's period, epoch milliseconds. */
  at: number;
  used: number;
  /** The seconds this sample stands for (its period); 1 when all samples weigh the same. */
  weight?: number;
}

export type Forecast =
  | { state: 'full'; slopePerDay: number; fullAt: string; secondsToFull: 0 }
  | { state: 'growing'; slopePerDay: number; fullAt: string; secondsToFull: number }
  | { state: 'notGrowing'; slopePerDay: number }
  | { state: 'insufficientData' };

/** The weighted least-squares slope of used over time, in units per second, or null when undefined. */
export function trendSlope(points: readonly TrendPoint[]): number | null {
  if (points.length < 2) return null;
  const t0 = points[0].at;
  let sw = 0;
  let st = 0;
  let su = 0;
  for (const p of points) {
    const w = p.weight ?? 1;
    sw += w;
    st += w * ((p.at - t0) / 1000);
    su += w * p.used;
  }
  const mt = st / sw;
  const mu = su / sw;
  let num = 0;
  let den = 0;
  for (const p of points) {
    const w = p.weight ?? 1;
    const dt = (p.at - t0) / 1000 - mt;
    num += w * dt * (p.used - mu);
    den += w * dt * dt;
  }
  if (den === 0) return null;
  return num / den;
}

/** The forecast for a series whose samples are `points` (oldest first) and whose capacity is `capacity`. */
export function forecastExhaustion(points: readonly TrendPoint[], capacity: number): Forecast {
  if (points.length === 0) return { state: 'insufficientData' };
  const latest = points[points.length - 1];
  const slope = trendSlope(points);
  if (latest.used >= capacity) return { state: 'full', slopePerDay: (slope ?? 0) * 86_400, fullAt: new Date(latest.at).toISOString(), secondsToFull: 0 };
  if (slope === null) return { state: 'insufficientData' };
  if (slope <= 0) return { state: 'notGrowing', slopePerDay: slope * 86_400 };
  const secondsToFull = (capacity - latest.used) / slope;
  const fullAtMs = latest.at + secondsToFull * 1000;
  // Beyond what a Date can hold (an IPv6 pool at a trickle): still growing, just never in practice.
  const fullAt = Number.isFinite(fullAtMs) && Math.abs(fullAtMs) < 8.64e15 ? new Date(fullAtMs).toISOString() : '+275760-09-13T00:00:00.000Z';
  return { state: 'growing', slopePerDay: slope * 86_400, fullAt, secondsToFull };
}

/** "full in ~12 days", "full in ~5 hours", "not growing", … for the console beside a utilization bar. */
export function describeForecast(f: Forecast, windowDays: number): string {
  const rate = `at the last ${windowDays === 1 ? 'day' : `${windowDays} days`}' rate`;
  switch (f.state) {
    case 'insufficientData':
      return 'not enough history for a forecast';
    case 'notGrowing':
      return `not growing ${rate}`;
    case 'full':
      return 'full';
    case 'growing': {
      const s = f.secondsToFull;
      const [n, unit] = s < 3600 ? [Math.max(1, Math.round(s / 60)), 'minute'] : s < 172_800 ? [Math.round(s / 3600), 'hour'] : [Math.round(s / 86_400), 'day'];
      if (unit === 'day' && n > 3650) return `full in over 10 years ${rate}`;
      return `full in ~${n} ${unit}${n === 1 ? '' : 's'} ${rate}`;
    }
  }
}
