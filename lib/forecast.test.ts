import { describe, expect, test } from 'vitest';
import { describeForecast, forecastExhaustion, trendSlope, type TrendPoint } from './forecast';

const H = 3_600_000;
const t0 = Date.parse('2031-01-01T00:00:00Z');
/** Hourly points of `f(hour)`. */
const hourly = (n: number, f: (h: number) => number): TrendPoint[] => Array.from({ length: n }, (_, h) => ({ at: t0 + h * H, used: f(h) }));

describe('forecast of exhaustion (weighted least squares)', () => {
  test.each<[string, TrendPoint[], number, ReturnType<typeof forecastExhaustion>['state'], number | null]>([
    // name, points, capacity, state, seconds to full (null: not checked)
    ['no samples', [], 100, 'insufficientData', null],
    ['one sample', [{ at: t0, used: 10 }], 100, 'insufficientData', null],
    [
      'two samples at one instant',
      [
        { at: t0, used: 1 },
        { at: t0, used: 2 },
      ],
      100,
      'insufficientData',
      null,
    ],
    ['flat', hourly(24, () => 50), 100, 'notGrowing', null],
    ['shrinking', hourly(24, (h) => 90 - h), 100, 'notGrowing', null],
    ['+1 an hour from 10: 33 now, 67 hours left', hourly(24, (h) => 10 + h), 100, 'growing', 67 * 3600],
    ['+1 an hour from 0: 23 now, 77 hours left', hourly(24, (h) => h), 100, 'growing', 77 * 3600],
    ['already at capacity', hourly(3, (h) => 98 + h), 100, 'full', 0],
    ['over capacity after a grant shrank', [{ at: t0, used: 120 }], 100, 'full', 0],
    ['noise around a rising line', hourly(48, (h) => 100 + 2 * h + (h % 2 ? 3 : -3)), 1000, 'growing', null],
  ])('%s', (_name, points, capacity, state, seconds) => {
    const f = forecastExhaustion(points, capacity);
    expect(f.state).toBe(state);
    if (seconds !== null && (f.state === 'growing' || f.state === 'full')) expect(f.secondsToFull).toBeCloseTo(seconds, 3);
  });

  test('the slope of a noisy rising line is its rate', () => {
    expect(trendSlope(hourly(48, (h) => 100 + 2 * h + (h % 2 ? 3 : -3)))! * 3600).toBeCloseTo(2, 1);
  });

  test('per-minute samples weigh no more than the hours they cover', () => {
    // 5 days of hourly samples rising 1/h, then 2 days of per-minute samples, flat.
    const hours = Array.from({ length: 120 }, (_, h) => ({ at: t0 + h * H, used: h, weight: 3600 }));
    const minutes = Array.from({ length: 2880 }, (_, m) => ({ at: t0 + 120 * H + m * 60_000, used: 120, weight: 60 }));
    const weighted = trendSlope([...hours, ...minutes])! * 3600;
    const unweighted = trendSlope([...hours, ...minutes].map(({ at, used }) => ({ at, used })))! * 3600;
    // Unweighted, the 2,880 flat points drown the 120 rising ones.
    expect(weighted).toBeGreaterThan(0.5);
    expect(unweighted).toBeLessThan(weighted * 0.75);
  });

  test('the date of exhaustion counts from the latest sample', () => {
    const f = forecastExhaustion(
      hourly(24, (h) => h * 2),
      100,
    );
    expect(f).toMatchObject({ state: 'growing', fullAt: new Date(t0 + 23 * H + 27 * H).toISOString() });
    expect(f.state === 'growing' && f.slopePerDay).toBeCloseTo(48, 6);
  });

  test('an IPv6-sized capacity at a trickle is still growing, with a date', () => {
    const f = forecastExhaustion(
      hourly(10, (h) => h),
      2 ** 64,
    );
    expect(f.state).toBe('growing');
    expect(f.state === 'growing' && f.fullAt).toMatch(/^\+?\d/);
  });

  test.each<[ReturnType<typeof forecastExhaustion>, number, string]>([
    [{ state: 'growing', slopePerDay: 1, fullAt: '', secondsToFull: 12 * 86_400 + 3600 }, 7, "full in ~12 days at the last 7 days' rate"],
    [{ state: 'growing', slopePerDay: 1, fullAt: '', secondsToFull: 5 * 3600 }, 7, "full in ~5 hours at the last 7 days' rate"],
    [{ state: 'growing', slopePerDay: 1, fullAt: '', secondsToFull: 30 }, 7, "full in ~1 minute at the last 7 days' rate"],
    [{ state: 'growing', slopePerDay: 1, fullAt: '', secondsToFull: 86_400 * 5000 }, 7, "full in over 10 years at the last 7 days' rate"],
    [{ state: 'notGrowing', slopePerDay: 0 }, 7, "not growing at the last 7 days' rate"],
    [{ state: 'full', slopePerDay: 0, fullAt: '', secondsToFull: 0 }, 7, 'full'],
    [{ state: 'insufficientData' }, 7, 'not enough history for a forecast'],
  ])('%o reads "%s"', (f, days, text) => {
    expect(describeForecast(f, days)).toBe(text);
  });
});
