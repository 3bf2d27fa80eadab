/**
 * Cancellation against the real simulator (every operation takes a while, so an install is in
 * flight long enough to be cancelled) and a real worker process: exact before the boundary,
 * compensated past it, refused once Ready, and a cancel racing the install's completion ending in
 * one outcome with quota and addresses returned once.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { query } from '@/db/query';
import { systemActor } from '@/server/audit/events';
import { createNetwork } from '@/server/ipam/networks';
import { testDb } from '@/test/db';
import { makeFleetCorner, startFleet } from '@/test/fleet';
import { createApiToken } from '@/server/tenancy/tokens';
import { makeProject } from '@/test/fixtures';
import { routeHandlers } from '@/test/rest';
import { cancelMachine, cancelOperation } from './cancellation';
import { getMachine, requestMachine } from './machines';

const actor = systemActor('cancellation-test');
let fleet: Awaited<ReturnType<typeof startFleet>>;

beforeAll(async () => {
  fleet = await startFleet({ operationMs: 1500 });
}, 120_000);
afterAll(async () => {
  await fleet?.stop();
});

async function corner(capacity: number, options: { requiresApproval?: boolean } = {}) {
  const { db } = testDb();
  const c = await makeFleetCorner(db, capacity, options);
  const { project } = await makeProject(db);
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '198.51.100.0/24' }] }, actor);
  const spec = (name: string) => ({
    ...c.spec,
    name,
    desiredPower: 'on' as const,
    interfaces: [{ network: 'vpc', families: ['IPv4' as const], addressClasses: 1 }],
  });
  return { db, project, devices: c.devices, spec };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What the project holds: machines quota, IP claims, and the capacity states of its corner. */
async function books(projectId: string, devices: string[]) {
  const db = testDb().db;
  const [bucket] = await query(
    db,
    sql`select allocated::int, claim_count as "claimCount" from allowance_buckets where project_id = ${projectId} and resource_type = 'metal.datumapis.com/machines'`,
    z.object({ allocated: z.number(), claimCount: z.number() }),
  );
  const [claims] = await query(db, sql`select count(*)::int as n from ip_claims where project_id = ${projectId}`, z.object({ n: z.number() }));
  const capacity = await query(
    db,
    sql`select device_ref as "deviceRef", state from machine_capacity where device_ref in ${devices} order by device_ref`,
    z.object({ deviceRef: z.string(), state: z.string() }),
  );
  const [live] = await query(
    db,
    sql`select count(*)::int as n from machines where project_id = ${projectId} and phase <> 'Released'`,
    z.object({ n: z.number() }),
  );
  return { machines: bucket.allocated, claims: claims.n, live: live.n, capacity: capacity.map((c) => c.state) };
}

async function actions(machineId: string) {
  const rows = await query(
    testDb().db,
    sql`select action from events where object_type = 'machine' and object_id = ${machineId} order by id`,
    z.object({ action: z.string() }),
  );
  return rows.map((r) => r.action);
}

async function providerEffects(deviceRef: string) {
  const ops = await fleet.admin.listOperations({ assetId: deviceRef, limit: 200 });
  if (ops.type !== 'result') throw new Error('cannot list operations');
  return ops.value.items.filter((o) => o.state === 'Succeeded').map((o) => o.kind);
}

const cancelRoute = routeHandlers('/api/v1/projects/{project}/machines/{name}/cancel');
const cli = (args: string[]) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/meridian.ts', ...args], {
    env: { ...process.env, DATABASE_URL: inject('databaseUrl') },
    encoding: 'utf8',
  });

describe('cancellation boundaries', () => {
  test('REST POST …/machines/{name}/cancel (202, editors only) and the admin CLI cancel a request, each audited with its actor', async () => {
    const f = await corner(0, { requiresApproval: true });
    const editor = await createApiToken(f.db, { projectId: f.project.id, name: 'editor' }, actor);
    const viewer = await createApiToken(f.db, { projectId: f.project.id, name: 'viewer', role: 'viewer' }, actor);
    const m = await requestMachine(f.db, f.project.id, f.spec('by-rest'), actor);
    const post = (token: string, body?: unknown) =>
      cancelRoute.POST(
        new Request('http://localhost/x', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        }),
        { params: Promise.resolve({ project: f.project.slug, name: 'by-rest' }) },
      );
    expect((await post(viewer.secret)).status).toBe(403);
    const accepted = await post(editor.secret, { reason: 'ordered the wrong class' });
    expect(accepted.status).toBe(202);
    expect(await accepted.json()).toMatchObject({ metadata: { name: 'by-rest' } });
    await waitFor('Released', async () => (await getMachine(f.db, f.project.id, 'by-rest', m.id)).phase === 'Released');
    const [audited] = await query(
      f.db,
      sql`select actor_label as "actor", reason from events where object_id = ${m.id} and action = 'machine.cancel.requested'`,
      z.object({ actor: z.string(), reason: z.string() }),
    );
    expect(audited).toEqual({ actor: expect.stringContaining('editor'), reason: 'ordered the wrong class' });
    expect((await post(editor.secret)).status).toBe(404);

    const byCli = await requestMachine(f.db, f.project.id, f.spec('by-cli'), actor);
    const out = await cli(['machine', 'cancel', '--project', f.project.slug, '--name', 'by-cli', '--reason', 'from the runbook']);
    expect(out.stdout).toBe('exact\n');
    await waitFor('Released', async () => (await getMachine(f.db, f.project.id, 'by-cli', byCli.id)).phase === 'Released');
    expect(await actions(byCli.id)).toContain('machine.cancel.exact');
  }, 240_000);

  test('before the boundary a cancel is exact: awaiting approval, nothing asked of the provider, quota and address returned', async () => {
    const f = await corner(1, { requiresApproval: true });
    const m = await requestMachine(f.db, f.project.id, f.spec('waiting'), actor);
    expect((await books(f.project.id, f.devices)).claims).toBe(1);
    const outcome = await cancelMachine(f.db, f.project.id, 'waiting', actor);
    expect(outcome).toEqual({ name: 'waiting', phase: 'AwaitingApproval', mode: 'exact', accepted: true });
    await waitFor('Released', async () => (await getMachine(f.db, f.project.id, 'waiting', m.id)).phase === 'Released');
    expect((await getMachine(f.db, f.project.id, 'waiting', m.id)).phaseReason).toBe('cancelled (exact): nothing was asked of the provider');
    expect(await books(f.project.id, f.devices)).toEqual({ machines: 0, claims: 0, live: 0, capacity: ['Available'] });
    expect(await providerEffects(f.devices[0])).toEqual([]);
    const trail = await actions(m.id);
    expect(trail.filter((a) => a === 'machine.cancel.requested')).toHaveLength(1);
    expect(trail.filter((a) => a === 'machine.cancel.exact')).toHaveLength(1);
    // A cancel of a released machine finds nothing in flight.
    await expect(cancelMachine(f.db, f.project.id, 'waiting', actor)).rejects.toMatchObject({ code: 'NotFound' });
  });

  test('past the boundary a cancel is compensated: the install in flight is undone by a verified cleanup', async () => {
    const f = await corner(1);
    const m = await requestMachine(f.db, f.project.id, f.spec('midway'), actor);
    await waitFor('Installing', async () => (await getMachine(f.db, f.project.id, 'midway', m.id)).phase === 'Installing');
    const outcome = await cancelMachine(f.db, f.project.id, 'midway', actor);
    expect(outcome).toMatchObject({ phase: 'Installing', mode: 'compensated', accepted: true });
    // Cancelling again answers the first cancel's outcome.
    expect(await cancelMachine(f.db, f.project.id, 'midway', actor)).toMatchObject({ mode: 'compensated', accepted: false });
    await waitFor('Released', async () => (await getMachine(f.db, f.project.id, 'midway', m.id)).phase === 'Released');
    const released = await getMachine(f.db, f.project.id, 'midway', m.id);
    expect(released.phaseReason).toBe('cancelled (compensated): released; capacity verified clean');
    expect(await books(f.project.id, f.devices)).toEqual({ machines: 0, claims: 0, live: 0, capacity: ['Available'] });
    expect(await providerEffects(f.devices[0])).toContain('cleanup');
    const trail = await actions(m.id);
    expect(trail).not.toContain('machine.phase.Ready');
    expect(trail.filter((a) => a === 'machine.cancel.compensated')).toHaveLength(1);
  });

  test('once Ready a cancel is refused; an operator cannot cancel a cleanup but can cancel an install in flight', async () => {
    const f = await corner(2);
    const done = await requestMachine(f.db, f.project.id, f.spec('done'), actor);
    await waitFor('Ready', async () => (await getMachine(f.db, f.project.id, 'done', done.id)).phase === 'Ready', 120_000);
    await expect(cancelMachine(f.db, f.project.id, 'done', actor)).rejects.toMatchObject({
      code: 'InvalidTransition',
      message: expect.stringMatching(/Ready/),
    });

    const inflight = await requestMachine(f.db, f.project.id, f.spec('inflight'), actor);
    await waitFor('Installing', async () => (await getMachine(f.db, f.project.id, 'inflight', inflight.id)).phase === 'Installing');
    const [install] = await query(
      f.db,
      sql`select id from provider_operations where machine_id = ${inflight.id} and kind = 'install' order by created_at desc limit 1`,
      z.object({ id: z.string() }),
    );
    await expect(cancelOperation(f.db, install.id, ' ', actor)).rejects.toMatchObject({ code: 'ValidationFailed' });
    const cancelled = await cancelOperation(f.db, install.id, 'wrong image', actor);
    expect(cancelled).toMatchObject({ operationId: install.id, mode: 'compensated', accepted: true });
    await waitFor('a cleanup admitted', async () => {
      const rows = await query(
        f.db,
        sql`select id from provider_operations where machine_id = ${inflight.id} and kind = 'cleanup'`,
        z.object({ id: z.string() }),
      );
      return rows[0];
    }).then((cleanup) => expect(cancelOperation(f.db, cleanup.id, 'stop it', actor)).rejects.toMatchObject({ code: 'InvalidTransition' }));
    await waitFor('Released', async () => (await getMachine(f.db, f.project.id, 'inflight', inflight.id)).phase === 'Released');
  });

  test('cancels racing installs to completion: each machine has one outcome, agreed by both sides; quota and addresses returned once', async () => {
    const count = 10;
    const f = await corner(count);
    const requested = [];
    for (let i = 0; i < count; i++) requested.push(await requestMachine(f.db, f.project.id, f.spec(`race-${i}`), actor));
    // Cancel each machine at a different point of its lifecycle: some before binding, most around
    // the install's completion (the simulator takes 1.5 s per operation), some after it.
    const outcomes = await Promise.all(
      requested.map(async (m, i) => {
        await new Promise((r) => setTimeout(r, i * 350));
        return cancelMachine(f.db, f.project.id, m.name, actor).then(
          (o) => ({ id: m.id, name: m.name, cancelled: true as const, mode: o.mode }),
          (e: { code?: string }) => {
            expect(e.code).toBe('InvalidTransition');
            return { id: m.id, name: m.name, cancelled: false as const, mode: null };
          },
        );
      }),
    );
    for (const o of outcomes) {
      const final = await waitFor(
        `${o.name} settled`,
        async () => {
          const view = await getMachine(f.db, f.project.id, o.name, o.id);
          return view.phase === 'Released' || view.phase === 'Ready' ? view : undefined;
        },
        120_000,
      );
      const trail = await actions(o.id);
      if (o.cancelled) {
        // The cancel won: never Ready, released the way its mode says, exactly once.
        expect(final.phase, o.name).toBe('Released');
        expect(trail, o.name).not.toContain('machine.phase.Ready');
        expect(final.phaseReason, o.name).toMatch(new RegExp(`^cancelled \\(${o.mode}\\)`));
        expect(trail.filter((a) => a === `machine.cancel.${o.mode}`)).toHaveLength(1);
        expect(trail.filter((a) => a === 'machine.phase.Released')).toHaveLength(1);
      } else {
        // The install won: Ready, and no cancel recorded.
        expect(final.phase, o.name).toBe('Ready');
        expect(trail, o.name).not.toContain('machine.cancel.requested');
      }
    }
    const ready = outcomes.filter((o) => !o.cancelled).length;
    const b = await books(f.project.id, f.devices);
    expect({ machines: b.machines, claims: b.claims, live: b.live }).toEqual({ machines: ready, claims: ready, live: ready });
    expect(b.capacity.filter((s) => s === 'Bound')).toHaveLength(ready);
    expect(b.capacity.filter((s) => s === 'Available')).toHaveLength(count - ready);
  });
});
