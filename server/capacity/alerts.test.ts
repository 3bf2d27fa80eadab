import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import type { Db } from '@/db/client';
import { systemActor } from '@/server/audit/events';
import { createClaim, deleteClaim } from '@/server/ipam/claims';
import { createNetwork } from '@/server/ipam/networks';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { evaluateAlerts, listAlerts, setAlertRule } from './alerts';
import { recordSample } from './history';
import { parseAddressList } from '@/lib/address-policy';
import { createWebhookEndpoint, deliverPending, listDeliveries, retryDelayMs, signWebhook, type WebhookSettings } from './webhooks';

const actor = systemActor('test');
const claim = (name: string, prefixLength: number) => ({ name, network: 'vpc', prefixLength, family: 4, reclaimPolicy: 'Delete' }) as never;
// The receivers run on loopback, which only the operator's allow list opens.
const settings: WebhookSettings = { allowHttp: false, allowList: parseAddressList('127.0.0.1'), retryBaseMs: 50, retryCapMs: 200, timeoutMs: 2_000 };

async function setup() {
  const { db } = testDb();
  const { project } = await makeProject(db);
  // 256 addresses, every one allocatable.
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24', maxPrefixLength: 32 } as never] }, actor);
  await recordSample(db, new Date());
  return { db, project };
}

const networkAlerts = async (db: Db, projectId: string) => (await listAlerts(db, projectId)).filter((a) => a.kind === 'network');

describe('capacity alerts', () => {
  test('thresholds fire and resolve with hysteresis: an oscillation around 80 % does not flap', async () => {
    const { db, project } = await setup();
    await createClaim(db, project.id, claim('a', 25), actor); // 128
    await createClaim(db, project.id, claim('b', 26), actor); // 192 = 75 %
    await evaluateAlerts(db, new Date(), { forecast: false });
    expect(await networkAlerts(db, project.id)).toEqual([]);

    await createClaim(db, project.id, claim('c', 28), actor); // 208 = 81.25 %
    await evaluateAlerts(db, new Date(), { forecast: false });
    expect(await networkAlerts(db, project.id)).toMatchObject([
      { condition: 'warning', firing: true, object: 'vpc', family: 'IPv4', threshold: 80, transitions: 1 },
    ]);

    // Around the threshold: 78.1 % (c gone, a /29 and a /30 in) and back over 80: still one firing alert.
    for (let i = 0; i < 3; i++) {
      await deleteClaim(db, project.id, 'c', actor);
      await createClaim(db, project.id, claim('d', 29), actor);
      await createClaim(db, project.id, claim('e', 30), actor); // 204 = 79.7 %
      await evaluateAlerts(db, new Date(), { forecast: false });
      await deleteClaim(db, project.id, 'd', actor);
      await deleteClaim(db, project.id, 'e', actor);
      await createClaim(db, project.id, claim('c', 28), actor); // 81.25 %
      await evaluateAlerts(db, new Date(), { forecast: false });
    }
    expect(await networkAlerts(db, project.id)).toMatchObject([{ condition: 'warning', firing: true, transitions: 1 }]);

    // Below 75 % (80 − 5): resolved, one event each way.
    await deleteClaim(db, project.id, 'c', actor);
    await deleteClaim(db, project.id, 'b', actor); // 50 %
    await evaluateAlerts(db, new Date(), { forecast: false });
    expect(await networkAlerts(db, project.id)).toMatchObject([{ condition: 'warning', firing: false, transitions: 2 }]);
    const events = (await db.execute(sql`
      select action, reason from events where project_id = ${project.id} and action like 'capacity.alert.%' and object_type = 'network' order by id`)) as unknown as {
      action: string;
      reason: string;
    }[];
    expect(events.map((e) => e.action)).toEqual(['capacity.alert.firing', 'capacity.alert.resolved']);
    expect(events[0].reason).toBe('network vpc IPv4 at 81.3 % (warning at 80 %)');
  });

  test('on a small series the hysteresis is at least one unit: one unit up and down around 80 % does not flap', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    // Ten allocatable addresses (a /28 with three held back at each end): one address is 10 points.
    await createNetwork(
      db,
      project.id,
      { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/28', maxPrefixLength: 32, reserveLeading: 3, reserveTrailing: 3 } as never] },
      actor,
    );
    for (let i = 0; i < 8; i++) await createClaim(db, project.id, claim(`u${i}`, 32), actor); // 80 %
    await recordSample(db, new Date());
    await evaluateAlerts(db, new Date(), { forecast: false });
    expect(await networkAlerts(db, project.id)).toMatchObject([{ condition: 'warning', firing: true, transitions: 1 }]);
    for (let i = 0; i < 4; i++) {
      await deleteClaim(db, project.id, 'u7', actor); // 70 %: below 80 − 5, but only one unit down
      await evaluateAlerts(db, new Date(), { forecast: false });
      await createClaim(db, project.id, claim('u7', 32), actor); // 80 %
      await evaluateAlerts(db, new Date(), { forecast: false });
    }
    expect(await networkAlerts(db, project.id)).toMatchObject([{ condition: 'warning', firing: true, transitions: 1 }]);
    // Two units down (60 %): resolved.
    await deleteClaim(db, project.id, 'u7', actor);
    await deleteClaim(db, project.id, 'u6', actor);
    await evaluateAlerts(db, new Date(), { forecast: false });
    expect(await networkAlerts(db, project.id)).toMatchObject([{ condition: 'warning', firing: false, transitions: 2 }]);
  });

  test('critical and a project rule; a disabled rule evaluates nothing', async () => {
    const { db, project } = await setup();
    await setAlertRule(
      db,
      project.id,
      { objectId: null, warningPercent: 50, criticalPercent: 60, forecastDays: 7, hysteresisPercent: 5, enabled: true },
      actor,
    );
    await createClaim(db, project.id, claim('a', 25), actor);
    await createClaim(db, project.id, claim('b', 28), actor); // 56.25 %
    await evaluateAlerts(db, new Date(), { forecast: false });
    expect((await networkAlerts(db, project.id)).map((a) => [a.condition, a.firing])).toEqual([['warning', true]]);
    await createClaim(db, project.id, claim('c', 27), actor); // 68.75 %
    await evaluateAlerts(db, new Date(), { forecast: false });
    expect(
      (await networkAlerts(db, project.id))
        .filter((a) => a.firing)
        .map((a) => a.condition)
        .sort(),
    ).toEqual(['critical', 'warning']);

    const other = await setup();
    await setAlertRule(
      db,
      other.project.id,
      { objectId: null, warningPercent: 1, criticalPercent: 2, forecastDays: 7, hysteresisPercent: 0, enabled: false },
      actor,
    );
    await createClaim(db, other.project.id, claim('a', 25), actor);
    await evaluateAlerts(db, new Date(), { forecast: false });
    expect(await listAlerts(db, other.project.id)).toEqual([]);
  });

  test('forecast: a series growing towards full within 7 days fires from its hourly peaks', async () => {
    const { db, project } = await setup();
    const now = Date.now();
    // Synthetic hourly peaks rising 1 address an hour for 2 days, 100 of 256 used now: ~156 hours (6.5 days) left.
    const [{ id }] = (await db.execute(sql`select id from capacity_series where project_id = ${project.id} and kind = 'network'`)) as unknown as {
      id: number;
    }[];
    for (let h = 48; h >= 1; h--)
      await db.execute(sql`insert into capacity_samples (series_id, step, at, used, capacity) values (${id}, 3600, ${new Date(now - h * 3_600_000).toISOString()}::timestamptz, ${100 - h}, 256)
        on conflict do nothing`);
    await createClaim(db, project.id, claim('a', 26), actor);
    await createClaim(db, project.id, claim('b', 27), actor);
    await createClaim(db, project.id, claim('c', 30), actor); // 100
    await recordSample(db, new Date(now));
    await evaluateAlerts(db, new Date(now), { forecast: true });
    const [f] = (await networkAlerts(db, project.id)).filter((a) => a.condition === 'forecast');
    expect(f).toMatchObject({ firing: true, threshold: 7 });
    expect(f.value).toBeGreaterThan(6);
    expect(f.value).toBeLessThan(7);
  });

  test('retries back off exponentially, capped', () => {
    expect([1, 2, 3, 4, 5, 6, 30].map((n) => retryDelayMs(n, 1000, 10_000, 0.5))).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]);
    expect(retryDelayMs(1, 1000, 10_000, 0)).toBe(750);
    expect(retryDelayMs(1, 1000, 10_000, 1)).toBe(1250);
  });

  test('webhooks: the outbox is written with the transition; a receiver down for a while loses nothing and sees each event id until it acknowledges', async () => {
    const { db, project } = await setup();
    // A port nothing listens on yet: the receiver is down.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const endpoint = await createWebhookEndpoint(db, { projectId: project.id, name: 'ops', url: `http://127.0.0.1:${port}/hook` }, actor, settings);

    await createClaim(db, project.id, claim('a', 25), actor);
    await createClaim(db, project.id, claim('b', 26), actor);
    await createClaim(db, project.id, claim('c', 28), actor); // 81 %: warning fires
    // The transition, its outbox rows and its delivery job commit together.
    await db.transaction(async (tx) => {
      await evaluateAlerts(tx, new Date(), { forecast: false });
      const [{ n }] = (await tx.execute(sql`select count(*)::int as n from webhook_deliveries where endpoint_id = ${endpoint.id}`)) as unknown as {
        n: number;
      }[];
      expect(n).toBeGreaterThanOrEqual(2); // the network and its pool
      const [{ jobs }] = (await tx.execute(sql`select count(*)::int as jobs from graphile_worker.jobs where key = ${`webhook:${endpoint.id}`}`)) as unknown as {
        jobs: number;
      }[];
      expect(jobs).toBe(1);
    });

    // Down: the first delivery fails and waits; the others wait behind it.
    let down = await deliverPending(db, endpoint.id, settings);
    expect(down).toMatchObject({ delivered: 0, failed: 1 });
    expect(down.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now() - 1000);
    await new Promise((r) => setTimeout(r, 120));
    down = await deliverPending(db, endpoint.id, settings);
    expect(down).toMatchObject({ delivered: 0, failed: 1 });

    // Resolved while still down: queued behind.
    await deleteClaim(db, project.id, 'c', actor);
    await deleteClaim(db, project.id, 'b', actor);
    await evaluateAlerts(db, new Date(), { forecast: false });
    const expected = (await listDeliveries(db, project.id, 'ops', { outcomes: true })).map((d) => d.eventId).reverse();
    expect(expected.length).toBeGreaterThanOrEqual(4);

    // Up, answering 500 to the first request it sees, then 200.
    const received: { id: string; ts: number; signature: string; body: string }[] = [];
    let first = true;
    const server: Server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({
          id: String(req.headers['meridian-webhook-id']),
          ts: Number(req.headers['meridian-webhook-timestamp']),
          signature: String(req.headers['meridian-webhook-signature']),
          body,
        });
        res.statusCode = first ? 500 : 204;
        first = false;
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    try {
      for (let round = 0; round < 20; round++) {
        await new Promise((r) => setTimeout(r, 60));
        const r = await deliverPending(db, endpoint.id, settings);
        if (!r.nextAttemptAt) break;
      }
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
    // Every event delivered, in order; the refused one twice under the same id, nothing else twice.
    const acknowledged = received.slice(1).map((r) => r.id);
    expect(acknowledged).toEqual(expected);
    expect(received[0].id).toBe(expected[0]);
    for (const r of received) {
      expect(r.signature).toBe(signWebhook(endpoint.secret, r.id, r.ts, r.body));
      expect(Math.abs(r.ts - Date.now() / 1000)).toBeLessThan(60);
      expect(JSON.parse(r.body)).toMatchObject({ id: r.id, projectId: project.id });
    }
    const log = await listDeliveries(db, project.id, 'ops', { outcomes: true });
    expect(log.every((d) => d.state === 'Delivered')).toBe(true);
    expect(log[log.length - 1]).toMatchObject({ attempts: 4, lastStatus: 204 });
    expect(await deliverPending(db, endpoint.id, settings)).toEqual({ delivered: 0, failed: 0, nextAttemptAt: null });
  });
  test('webhooks: deliveries go out in the order they were written, past a power of ten in their ids, and the next run is due when the first waiting one is', async () => {
    const { db, project } = await setup();
    const received: string[] = [];
    const server: Server = createServer((req: IncomingMessage, res) => {
      received.push(String(req.headers['meridian-webhook-id']));
      req.resume();
      req.on('end', () => {
        res.statusCode = 204;
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const endpoint = await createWebhookEndpoint(
        db,
        { projectId: project.id, name: 'order', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` },
        actor,
        settings,
      );
      // Ids on both sides of a power of ten (as text, "10…" sorts before "9…"); the first is due, the second waits.
      const base = 9_000_000_000_000 + Math.floor(Math.random() * 1_000_000);
      const [first, second] = [base, base + 1_000_000_000_000];
      const rows = (await db.execute(sql`
        insert into webhook_deliveries (id, endpoint_id, event_type, payload, next_attempt_at)
        values (${first}, ${endpoint.id}, 'test', '{}', now()), (${second}, ${endpoint.id}, 'test', '{}', now() + interval '1 hour')
        returning event_id as "eventId"`)) as unknown as { eventId: string }[];
      const result = await deliverPending(db, endpoint.id, settings);
      expect(received).toEqual([rows[0].eventId]);
      expect(result.delivered).toBe(1);
      // The next run waits for the second one's time, not now again.
      expect(result.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now() + 30 * 60_000);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
