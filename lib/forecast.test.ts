import { describe, expect, test } from 'vitest';
import { describeForecast, forecastFromTrend, fullWithin, type Forecast, type Trend } from './forecast';

const t0 = Date.parse('2031-01-01T00:00:00Z');
const H = 3600;
/** A trend rising `perHour` with the latest sample at t0. */
const trend = (perHour: number | null, used: number, capacity: number): Trend => ({
  slope: perHour === null ? null : perHour / H,
  latestAt: t0,
  latestUsed: used,
  latestCapacity: capacity,
});

describe('forecast of exhaustion from a trend (the fit itself is SQL capacity_trend)', () => {
  test.each<[string, Trend | null, Forecast['state'], number | null]>([
    // name, trend, state, seconds to full (null: not checked)
    ['no samples', null, 'insufficientData', null],
    ['no fit (one hourly peak)', trend(null, 10, 100), 'insufficientData', null],
    ['flat', trend(0, 50, 100), 'notGrowing', null],
    ['shrinking', trend(-1, 50, 100), 'notGrowing', null],
    ['+1 an hour, 33 of 100 used: 67 hours left', trend(1, 33, 100), 'growing', 67 * H],
    ['+2 an hour, 46 of 100 used: 27 hours left', trend(2, 46, 100), 'growing', 27 * H],
    ['already at capacity', trend(1, 100, 100), 'full', 0],
    ['over capacity after a grant shrank, no fit', trend(null, 120, 100), 'full', 0],
    ['over capacity, shrinking', trend(-5, 120, 100), 'full', 0],
  ])('%s', (_name, t, state, seconds) => {
    const f = forecastFromTrend(t);
    expect(f.state).toBe(state);
    if (seconds !== null && (f.state === 'growing' || f.state === 'full')) expect(f.secondsToFull).toBeCloseTo(seconds, 3);
  });

  test('the date of exhaustion counts from the latest sample', () => {
    const f = forecastFromTrend(trend(2, 46, 100));
    expect(f).toMatchObject({ state: 'growing', fullAt: new Date(t0 + 27 * H * 1000).toISOString() });
    expect(f.state === 'growing' && f.slopePerDay).toBeCloseTo(48, 6);
  });

  test('an IPv6-sized capacity at a trickle is still growing, with a date', () => {
    const f = forecastFromTrend(trend(1, 9, 2 ** 64));
    expect(f.state).toBe('growing');
    expect(f.state === 'growing' && f.fullAt).toMatch(/^\+?\d/);
  });

  test.each<[Trend | null, number, boolean]>([
    [trend(1, 100 - 6 * 24, 100), 7, true],
    [trend(1, 100 - 7 * 24, 100), 7, true],
    [trend(1, 100 - 8 * 24, 100), 7, false],
    [trend(0, 99, 100), 7, false],
    [trend(null, 100, 100), 7, true],
    [null, 7, false],
  ])('full within %#: %o in %i days is %s', (t, days, within) => {
    expect(fullWithin(forecastFromTrend(t), days)).toBe(within);
  });

  test.each<[Forecast, number, string]>([
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
