import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import type { Db } from '@/db/client';
import { fullWithin } from '@/lib/forecast';
import { systemActor } from '@/server/audit/events';
import { createClaim } from '@/server/ipam/claims';
import { createNetwork } from '@/server/ipam/networks';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { evaluateAlerts, listAlerts } from './alerts';
import { recordSample, seriesForecast } from './history';

const actor = systemActor('test');
const HOUR = 3_600_000;

/** Hourly peaks `used(h)` for the `hours` hours before `now` (h = hours back), and optionally per-minute samples `minute(m)` for the last two days. */
async function seedHistory(db: Db, seriesId: number, now: number, hours: number, used: (h: number) => number, minute?: (m: number) => number) {
  for (let h = hours; h >= 1; h--)
    await db.execute(sql`insert into capacity_samples (series_id, step, at, used, capacity)
      values (${seriesId}, 3600, ${new Date(Math.floor(now / HOUR) * HOUR - h * HOUR).toISOString()}::timestamptz, ${Math.max(0, Math.round(used(h)))}, 256)`);
  if (minute)
    await db.execute(sql`insert into capacity_samples (series_id, step, at, used, capacity)
      select ${seriesId}, 60, to_timestamp(${Math.floor(now / 60_000) * 60}) - make_interval(mins => m), ${minute(0)}, 256 from generate_series(1, 2880) m
      on conflict do nothing`);
}

async function networkSeries(db: Db, projectId: string, network: string) {
  const [row] = (await db.execute(sql`
    select s.id from capacity_series s join networks n on n.id = s.object_id where s.project_id = ${projectId} and n.name = ${network} and s.kind = 'network'`)) as unknown as {
    id: number;
  }[];
  return Number(row.id);
}

describe('one forecast method for alerts and display', () => {
  test('the slope of a noisy rising line of hourly peaks is its rate', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24', maxPrefixLength: 32 } as never] }, actor);
    const now = Date.parse('2031-05-05T12:30:00Z');
    await recordSample(db, new Date(now));
    const id = await networkSeries(db, project.id, 'vpc');
    await seedHistory(db, id, now, 48, (h) => 150 - 2 * h + (h % 2 ? 3 : -3));
    const [row] = (await db.execute(
      sql`select slope, points from capacity_trend(${new Date(now).toISOString()}::timestamptz, interval '7 days', ${id}::bigint)`,
    )) as unknown as {
      slope: number;
      points: number;
    }[];
    expect(row.points).toBe(49);
    expect(Number(row.slope) * 3600).toBeCloseTo(2, 0);
  });

  test("the alert's full-within-7-days decision and the displayed time to full agree on every series", async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    // A time of its own: other files sample every series at the real time, which must not add to these.
    const now = Date.parse('2035-03-03T10:30:00Z');
    // name, addresses used now (claims of those sizes), hourly peaks h hours back, per-minute samples of the last two days.
    const cases: [string, number[], (h: number) => number, ((m: number) => number) | undefined][] = [
      // +0.5/h, 192 of 256 used: ~5.3 days left.
      ['rising-near', [128, 64], (h) => 192 - 0.5 * h, undefined],
      // +0.3/h, 64 used: ~27 days left.
      ['rising-far', [64], (h) => 64 - 0.3 * h, undefined],
      // Hourly peaks rising to 192 while the per-minute samples of the last two days sit at 192.
      ['peaks-rise-minutes-flat', [128, 64], (h) => 192 - 0.45 * h, () => 192],
      // Bursts: hourly peaks flat for five days, then climbing to 240 over the last two, while the
      // per-minute samples between the bursts stay at 150 (a fit of those would see no growth).
      ['bursts', [128, 64, 32, 16], (h) => (h > 48 ? 150 : 150 + (48 - h) * 1.875), () => 150],
      ['flat', [64, 32, 4], () => 100, undefined],
      ['shrinking', [64], (h) => 64 + h, undefined],
      // +1/h, 192 used: ~2.7 days left.
      ['steep', [128, 64], (h) => 192 - h, undefined],
    ];
    for (const [i, [name, claims]] of cases.entries()) {
      await createNetwork(db, project.id, { name, cidrs: [{ cidr: `198.51.${100 + i}.0/24`, maxPrefixLength: 32 } as never] }, actor);
      for (const [j, size] of claims.entries())
        await createClaim(
          db,
          project.id,
          { name: `${name}-${j}`, network: name, family: 4, prefixLength: 32 - Math.log2(size), reclaimPolicy: 'Delete' },
          actor,
        );
    }
    await recordSample(db, new Date(now - 120_000));
    for (const [name, , hourly, minute] of cases) await seedHistory(db, await networkSeries(db, project.id, name), now, 7 * 24 - 1, hourly, minute);
    await recordSample(db, new Date(now));
    await evaluateAlerts(db, new Date(now), { forecast: true });

    const alerts = (await listAlerts(db, project.id)).filter((a) => a.kind === 'network' && a.condition === 'forecast');
    const decisions: Record<string, { alert: boolean; display: boolean }> = {};
    for (const [name] of cases) {
      const { forecast } = await seriesForecast(db, await networkSeries(db, project.id, name), new Date(now));
      decisions[name] = { alert: alerts.find((a) => a.object === name)?.firing ?? false, display: fullWithin(forecast, 7) };
    }
    for (const [name, d] of Object.entries(decisions)) expect(d.alert, name).toBe(d.display);
    // Both sides of the boundary are covered.
    expect(decisions['rising-near'].display).toBe(true);
    expect(decisions['steep'].display).toBe(true);
    expect(decisions['rising-far'].display).toBe(false);
    expect(decisions['flat'].display).toBe(false);
    expect(decisions['shrinking'].display).toBe(false);
  });
});
