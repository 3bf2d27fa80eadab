/**
 * Time to exhaustion from a series' recent trend. The trend itself (the least-squares line through
 * the hourly peaks of the window, and the latest sample) is computed by one SQL function,
 * `capacity_trend` (server/capacity/sql/capacity_trend.sql), which the alert evaluation reads too,
 * so that an alert's "full within N days" and the time to full shown here agree. This turns it
 * into a forecast:
 *
 * - `full`: the latest sample is at or above the capacity;
 * - `insufficientData`: no samples, fewer than two hourly peaks, or all at one instant;
 * - `notGrowing`: the fitted slope is ≤ 0 (flat or shrinking: no exhaustion date);
 * - `growing`: full in `(capacity − latest used) / slope` seconds from the latest sample.
 *
 * Pure arithmetic on doubles: IPv6 counts lose precision beyond 2^53, which a forecast can afford.
 */
export interface Trend {
  /** Units per second; null when the fit is undefined. */
  slope: number | null;
  /** The latest sample: when (epoch milliseconds), its used and capacity. */
  latestAt: number;
  latestUsed: number;
  latestCapacity: number;
}

export type Forecast =
  | { state: 'full'; slopePerDay: number; fullAt: string; secondsToFull: 0 }
  | { state: 'growing'; slopePerDay: number; fullAt: string; secondsToFull: number }
  | { state: 'notGrowing'; slopePerDay: number }
  | { state: 'insufficientData' };

/** The forecast of a series from its trend (null: the series has no samples in the window). */
export function forecastFromTrend(trend: Trend | null): Forecast {
  if (!trend) return { state: 'insufficientData' };
  const { slope, latestAt, latestUsed, latestCapacity } = trend;
  if (latestUsed >= latestCapacity) return { state: 'full', slopePerDay: (slope ?? 0) * 86_400, fullAt: new Date(latestAt).toISOString(), secondsToFull: 0 };
  if (slope === null) return { state: 'insufficientData' };
  if (slope <= 0) return { state: 'notGrowing', slopePerDay: slope * 86_400 };
  const secondsToFull = (latestCapacity - latestUsed) / slope;
  const fullAtMs = latestAt + secondsToFull * 1000;
  // Beyond what a Date can hold (an IPv6 pool at a trickle): still growing, just never in practice.
  const fullAt = Number.isFinite(fullAtMs) && Math.abs(fullAtMs) < 8.64e15 ? new Date(fullAtMs).toISOString() : '+275760-09-13T00:00:00.000Z';
  return { state: 'growing', slopePerDay: slope * 86_400, fullAt, secondsToFull };
}

/** Whether a forecast says "full within `days` days" (what the forecast alert fires on). */
export function fullWithin(f: Forecast, days: number): boolean {
  return f.state === 'full' || (f.state === 'growing' && f.secondsToFull <= days * 86_400);
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
