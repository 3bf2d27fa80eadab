/**
 * Fleet lifecycle on real parts: PostgreSQL, the simulator process, and worker processes
 * (bin/worker.ts) running the reconciler — killed with SIGKILL where the test says so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { locations, machineCapacity, machineClasses, machineProfiles, serviceAvailability } from '@/db/schema/fleet';
import { systemActor } from '@/server/audit/events';
import { createHttpProviderAdminClient, type ProviderAdminClient } from '@/server/provider';
import { makeTempDir, randomToken, spawnSimulator, TEST_SITE, TEST_TRUST_DOMAIN, type SpawnedSimulator } from '@/simulator/spawn-simulator';
import { query } from '@/db/query';
import { testDb, uniq } from '@/test/db';
import { z } from 'zod';
import { makeProject, makeUser } from '@/test/fixtures';
import { createNetwork } from '@/server/ipam/networks';
import { approveMachine, deleteMachine, getMachine, listMachines, machineTimeline, requestMachine, wakeMachine } from './machines';
import { resyncFleet } from './resync';
import { acknowledgeOperation, forceReleaseMachine, setCapacityState, troubledOperations } from './operator';

const actor = systemActor('test');
let simulator: SpawnedSimulator;
let admin: ProviderAdminClient;
let removeDir: () => Promise<void>;
const workers: ChildProcess[] = [];

function startWorker(): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(process.cwd(), 'bin/worker.ts')], {
    env: {
      ...process.env,
      DATABASE_URL: inject('databaseUrl'),
      ...simulator.clientEnv('worker'),
      WORKER_CONCURRENCY: '8',
      PROVIDER_TIMEOUT_MS: '1500',
      PROVIDER_RETRY_CAP_MS: '2000',
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  workers.push(child);
  return child;
}

beforeAll(async () => {
  const tmp = await makeTempDir('meridian-fleet-test-');
  removeDir = tmp.remove;
  // Target-level authorization: this site's workloads may act on every asset but those of site `elsewhere`.
  const policyFile = path.join(tmp.dir, 'policy.json');
  await writeFile(
    policyFile,
    JSON.stringify({
      pools: [
        { name: 'elsewhere', site: 'elsewhere', assets: ['dev-*-elsewhere-*'] },
        { name: 'test', site: TEST_SITE, assets: ['*'] },
      ],
      grants: [{ identity: `spiffe://${TEST_TRUST_DOMAIN}/meridian/${TEST_SITE}/*`, sites: [TEST_SITE], pools: ['*'], kinds: ['install', 'power', 'cleanup'] }],
    }),
  );
  simulator = await spawnSimulator({
    stateFile: path.join(tmp.dir, 'state.json'),
    adminToken: randomToken('admin'),
    env: { SIMULATOR_OPERATION_MS: '0', SIMULATOR_POLICY_FILE: policyFile },
  });
  admin = createHttpProviderAdminClient({ baseUrl: simulator.adminUrl!, token: simulator.adminToken!, tls: { caFile: simulator.pki.caFile } });
  startWorker();
}, 60_000);

afterAll(async () => {
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  await simulator?.kill('SIGTERM');
  await removeDir?.();
});

/** A private corner of the fleet for one test: its own location, class, profile and `capacity` machines. */
async function makeFleet(capacity: number, options: { requiresApproval?: boolean; site?: string } = {}) {
  const { db } = testDb();
  const tag = uniq('f');
  const [loc] = await db.insert(locations).values({ name: tag, displayName: tag }).returning({ id: locations.id });
  await db.insert(serviceAvailability).values({ locationId: loc.id, service: 'machines', status: 'Available' });
  const [cls] = await db
    .insert(machineClasses)
    .values({ name: `${tag}.cls`, cores: 8, memoryGib: 32, arch: 'x86_64', requiresApproval: options.requiresApproval ?? false })
    .returning({ id: machineClasses.id });
  const digest = 'sha256:' + 'ab'.repeat(32);
  await db.insert(machineProfiles).values({ name: `${tag}-os`, imageRef: `example/os@${digest}`, imageDigest: digest });
  const devices: string[] = [];
  for (let i = 0; i < capacity; i++) {
    const deviceRef = options.site ? `dev-${tag}-${options.site}-${i}` : `dev-${tag}-${i}`;
    devices.push(deviceRef);
    await db.insert(machineCapacity).values({ deviceRef, classId: cls.id, locationId: loc.id });
  }
  const { project } = await makeProject(db);
  return { db, project, tag, devices, spec: { class: `${tag}.cls`, profile: `${tag}-os`, location: tag, interfaces: [], desiredPower: 'on' as const } };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const phaseOf = async (projectId: string, name: string) => (await getMachine(testDb().db, projectId, name)).phase;
const waitPhase = (projectId: string, name: string, phase: string, timeoutMs?: number) =>
  waitFor(`${name} to be ${phase}`, async () => (await phaseOf(projectId, name)) === phase, timeoutMs);

async function effects(deviceRef: string, kind: 'install' | 'cleanup') {
  const ops = await admin.listOperations({ assetId: deviceRef, limit: 200 });
  if (ops.type !== 'result') throw new Error('cannot list operations');
  return ops.value.items.filter((o) => o.kind === kind && o.state === 'Succeeded').length;
}

describe('fleet lifecycle', () => {
  test('operations carry the identity that drove them; a target the provider does not authorize fails the machine at once with the reason', async () => {
    const ok = await makeFleet(1);
    await requestMachine(ok.db, ok.project.id, { ...ok.spec, name: 'mine' }, actor);
    await waitPhase(ok.project.id, 'mine', 'Ready');
    const [driven] = await query(
      ok.db,
      sql`select result->>'caller' as caller from provider_operations where device_ref = ${ok.devices[0]} and kind = 'install'`,
      z.object({ caller: z.string().nullable() }),
    );
    expect(driven.caller).toBe(`spiffe://${TEST_TRUST_DOMAIN}/meridian/${TEST_SITE}/worker`);

    const f = await makeFleet(1, { site: 'elsewhere' });
    await requestMachine(f.db, f.project.id, { ...f.spec, name: 'theirs' }, actor);
    await waitPhase(f.project.id, 'theirs', 'Failed');
    const failed = await getMachine(f.db, f.project.id, 'theirs');
    expect(failed.phaseReason).toMatch(
      /install failed: TargetNotAuthorized: identity spiffe:\/\/meridian\.test\/meridian\/test\/worker may not install asset dev-.*-elsewhere-0 \(site elsewhere/,
    );
    // One operation, failed with the reason, never retried; the provider never applied anything.
    const ops = await query(
      f.db,
      sql`select kind, state, attempts, last_error as "lastError" from provider_operations where device_ref = ${f.devices[0]}`,
      z.object({ kind: z.string(), state: z.string(), attempts: z.number(), lastError: z.string().nullable() }),
    );
    expect(ops).toEqual([{ kind: 'install', state: 'Failed', attempts: 0, lastError: expect.stringMatching(/^TargetNotAuthorized: /) }]);
    expect(await admin.getAsset(f.devices[0])).toMatchObject({ type: 'rejected', error: { code: 'NotFound' } });
  });

  test('request → approve → Ready → release → capacity verified and Available again', async () => {
    const f = await makeFleet(1, { requiresApproval: true });
    const m = await requestMachine(f.db, f.project.id, { ...f.spec, name: 'web-1' }, actor);
    expect(m.phase).toBe('AwaitingApproval');
    const operator = await makeUser(f.db, { platformRoles: ['operator'] });
    await approveMachine(f.db, m.id, { type: 'user', id: operator.id, label: operator.email });
    await waitPhase(f.project.id, 'web-1', 'Ready');
    const ready = await getMachine(f.db, f.project.id, 'web-1');
    expect(ready.deviceRef).toBe(f.devices[0]);
    expect(await effects(f.devices[0], 'install')).toBe(1);
    await deleteMachine(f.db, f.project.id, 'web-1', actor);
    await waitPhase(f.project.id, 'web-1', 'Released');
    const [cap] = (await f.db.execute(
      sql`select state, asset_epoch::int as asset_epoch from machine_capacity where device_ref = ${f.devices[0]}`,
    )) as unknown as { state: string; asset_epoch: number }[];
    expect(cap, JSON.stringify(await f.db.execute(sql`select state_reason from machine_capacity where device_ref = ${f.devices[0]}`))).toMatchObject({
      state: 'Available',
      asset_epoch: 1,
    });
    const asset = await admin.getAsset(f.devices[0]);
    expect(asset.type === 'result' && asset.value.closedThroughEpoch).toBe(1);
    // A new binding advances the epoch.
    await requestMachine(f.db, f.project.id, { ...f.spec, name: 'web-2' }, actor).then((x) => approveMachine(f.db, x.id, actor));
    await waitPhase(f.project.id, 'web-2', 'Ready');
    expect((await getMachine(f.db, f.project.id, 'web-2')).epoch).toBe(2);
  });

  test('two requests for the last machine: one binds, the other waits and binds when it is released', async () => {
    const f = await makeFleet(1);
    await Promise.all(['a', 'b'].map((n) => requestMachine(f.db, f.project.id, { ...f.spec, name: n }, actor)));
    const first = await waitFor('one Ready', async () => {
      const phases = await Promise.all(['a', 'b'].map((n) => phaseOf(f.project.id, n)));
      return phases.includes('Ready') ? phases : undefined;
    });
    const winner = first[0] === 'Ready' ? 'a' : 'b';
    const loser = winner === 'a' ? 'b' : 'a';
    const waiting = await getMachine(f.db, f.project.id, loser);
    expect(waiting.phase).toBe('Pending');
    expect(waiting.phaseReason).toContain('waiting for capacity');
    await deleteMachine(f.db, f.project.id, winner, actor);
    await waitPhase(f.project.id, loser, 'Ready');
  });

  test('a waiter locked by a change that rolls back while capacity returns still binds', async () => {
    const f = await makeFleet(1);
    await requestMachine(f.db, f.project.id, { ...f.spec, name: 'a' }, actor);
    await waitPhase(f.project.id, 'a', 'Ready');
    await requestMachine(f.db, f.project.id, { ...f.spec, name: 'b' }, actor);
    await waitFor('b waiting for capacity', async () => (await getMachine(f.db, f.project.id, 'b')).phaseReason?.includes('waiting for capacity'));
    const b = await getMachine(f.db, f.project.id, 'b');
    // Another change holds b's row (a delete or an approval that will fail) while a is released and
    // its capacity returns, then rolls back.
    const other = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
    let rollBack!: () => void;
    const held = new Promise<void>((r) => (rollBack = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const change = other
      .begin(async (tx) => {
        await tx`select 1 from machines where id = ${b.id} for update`;
        locked();
        await held;
        throw new Error('rolled back');
      })
      .catch(() => {});
    try {
      await isLocked;
      await deleteMachine(f.db, f.project.id, 'a', actor);
      await waitFor('the capacity back', async () => {
        const [row] = await f.db.select({ state: machineCapacity.state }).from(machineCapacity).where(eq(machineCapacity.deviceRef, f.devices[0]));
        return row.state === 'Available';
      });
    } finally {
      rollBack();
      await change;
      await other.end();
    }
    await waitPhase(f.project.id, 'b', 'Ready', 30_000);
  });

  test('100 requests for 10 machines: exactly 10 bind; the rest bind as those are released', async () => {
    const f = await makeFleet(10);
    const names = Array.from({ length: 100 }, (_, i) => `m${i}`);
    const quota = await f.db.execute(sql`update allowance_buckets set "limit" = 1000 where project_id = ${f.project.id}`).catch(() => null);
    void quota;
    for (const n of names) await requestMachine(f.db, f.project.id, { ...f.spec, name: n }, actor);
    const readyCount = async () =>
      (
        (await f.db.execute(sql`select count(*)::int as n from machines where project_id = ${f.project.id} and phase = 'Ready'`)) as unknown as { n: number }[]
      )[0].n;
    await waitFor('10 Ready', async () => (await readyCount()) === 10, 90_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(await readyCount()).toBe(10);
    const [{ live }] = (await f.db.execute(
      sql`select count(*)::int as live from machine_allocations a join machines m on m.id = a.machine_id where m.project_id = ${f.project.id} and a.status <> 'Released'`,
    )) as unknown as { live: number }[];
    expect(live).toBe(10);
    const ready = (await f.db.execute(sql`select name from machines where project_id = ${f.project.id} and phase = 'Ready' limit 5`)) as unknown as {
      name: string;
    }[];
    for (const r of ready) await deleteMachine(f.db, f.project.id, r.name, actor);
    await waitFor(
      '5 released and 5 more bound',
      async () => {
        if (process.env.DEBUG_FLEET)
          console.log(
            JSON.stringify(await f.db.execute(sql`select phase, phase_reason, count(*)::int from machines where project_id = ${f.project.id} group by 1,2`)),
            JSON.stringify(
              await f.db.execute(
                sql`select state, count(*)::int from machine_capacity c join locations l on l.id = c.location_id where l.name = ${f.tag} group by 1`,
              ),
            ),
          );
        const [row] = (await f.db.execute(
          sql`select count(*) filter (where phase = 'Released')::int as released, count(*) filter (where phase = 'Ready')::int as ready from machines where project_id = ${f.project.id}`,
        )) as unknown as { released: number; ready: number }[];
        return row.released === 5 && row.ready === 10;
      },
      90_000,
    );
    const [{ dup }] = (await f.db.execute(
      sql`select count(*)::int as dup from (select capacity_id from machine_allocations where status <> 'Released' group by capacity_id having count(*) > 1) d`,
    )) as unknown as { dup: number }[];
    expect(dup).toBe(0);
  }, 200_000);

  test('a lost install response is resolved by lookup: exactly one install effect, machine Ready', async () => {
    const f = await makeFleet(1);
    await admin.setFaults({ loseResponses: 1 });
    await requestMachine(f.db, f.project.id, { ...f.spec, name: 'lossy' }, actor);
    await waitPhase(f.project.id, 'lossy', 'Ready');
    expect(await effects(f.devices[0], 'install')).toBe(1);
    const asset = await admin.getAsset(f.devices[0]);
    expect(asset.type === 'result' && asset.value.effectCount).toBe(1);
  });

  test('a failed cleanup quarantines the capacity instead of returning it', async () => {
    const f = await makeFleet(1);
    await requestMachine(f.db, f.project.id, { ...f.spec, name: 'dirty' }, actor);
    await waitPhase(f.project.id, 'dirty', 'Ready');
    await admin.setFaults({ cleanupFailAssets: [f.devices[0]] });
    try {
      await deleteMachine(f.db, f.project.id, 'dirty', actor);
      await waitPhase(f.project.id, 'dirty', 'Released');
      const [cap] = (await f.db.execute(sql`select state, state_reason from machine_capacity where device_ref = ${f.devices[0]}`)) as unknown as {
        state: string;
        state_reason: string;
      }[];
      expect(cap.state).toBe('Quarantined');
      expect(cap.state_reason).toContain('CleanupFailed');
    } finally {
      await admin.setFaults({ cleanupFailAssets: [] });
    }
  });

  test('quota at its limit refuses the request with the numbers, storing nothing', async () => {
    const f = await makeFleet(3);
    await f.db.execute(sql`update allowance_buckets set "limit" = 1 where project_id = ${f.project.id} and resource_type = 'metal.datumapis.com/machines'`);
    await requestMachine(f.db, f.project.id, { ...f.spec, name: 'one' }, actor);
    await expect(requestMachine(f.db, f.project.id, { ...f.spec, name: 'two' }, actor)).rejects.toMatchObject({
      code: 'QuotaExceeded',
      message: expect.stringMatching(/requested 1 .*available 0.*limit 1/),
    });
    await expect(getMachine(f.db, f.project.id, 'two')).rejects.toMatchObject({ code: 'NotFound' });
  });

  test('a machine whose address would pass the ipclaims quota is refused with QuotaExceeded (not a 500), storing nothing', async () => {
    const f = await makeFleet(1);
    await createNetwork(f.db, f.project.id, { name: 'vpc', cidrs: [{ cidr: '203.0.113.0/24' }] }, actor);
    await f.db.execute(sql`update allowance_buckets set "limit" = 0 where project_id = ${f.project.id} and resource_type = 'ipam.miloapis.com/ipclaims'`);
    await expect(
      requestMachine(f.db, f.project.id, { ...f.spec, name: 'addressed', interfaces: [{ network: 'vpc', families: ['IPv4'], addressClasses: 1 }] }, actor),
    ).rejects.toMatchObject({
      code: 'QuotaExceeded',
      message: expect.stringMatching(/requested 1 ipam.miloapis.com\/ipclaims, available 0/),
    });
    await expect(getMachine(f.db, f.project.id, 'addressed')).rejects.toMatchObject({ code: 'NotFound' });
    const [{ n }] = (await f.db.execute(sql`select count(*)::int as n from ip_claims where project_id = ${f.project.id}`)) as unknown as { n: number }[];
    expect(n).toBe(0);
  });

  test('an unusable location fails closed with the reason', async () => {
    const f = await makeFleet(1);
    await f.db.execute(
      sql`insert into service_availability (location_id, service, status) select id, 'machines', 'Available' from locations where name = ${f.tag}`,
    );
    await expect(requestMachine(f.db, f.project.id, { ...f.spec, name: 'x' }, actor)).rejects.toMatchObject({
      code: 'LocationUnavailable',
      message: expect.stringContaining('2 conflicting'),
    });
  });
});

describe('fleet under faults', () => {
  test('a release whose job was lost (a failover took it) is finished by the resync, which adds no job where one lives', async () => {
    const f = await makeFleet(0);
    const m = await requestMachine(f.db, f.project.id, { ...f.spec, name: 'lost-release' }, actor);
    await waitFor('the machine to wait for capacity', async () =>
      (await getMachine(f.db, f.project.id, 'lost-release')).phaseReason?.includes('waiting for capacity'),
    );
    const jobsOf = async () =>
      (await f.db.execute(sql`select id::text from graphile_worker._private_jobs where key = ${`machine:${m.id}`}`)) as unknown as { id: string }[];
    await waitFor('its job to finish', async () => (await jobsOf()).length === 0);
    // The release committed, and its job was lost with the primary.
    await f.db.execute(sql`update machines set deletion_requested_at = now() where id = ${m.id}`);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await phaseOf(f.project.id, 'lost-release')).toBe('Pending');
    const first = await resyncFleet(f.db);
    expect(first.machines).toBeGreaterThanOrEqual(1);
    await waitPhase(f.project.id, 'lost-release', 'Released');
    // A machine with a live job is left to it: a resync adds nothing beside a scheduled job.
    const waiting = await requestMachine(f.db, f.project.id, { ...f.spec, name: 'scheduled' }, actor);
    await waitFor('it to wait', async () => (await getMachine(f.db, f.project.id, 'scheduled')).phaseReason?.includes('waiting for capacity'));
    await wakeMachine(f.db, waiting.id, new Date(Date.now() + 3_600_000));
    const [scheduled] = (await f.db.execute(sql`select id::text from graphile_worker._private_jobs where key = ${`machine:${waiting.id}`}`)) as unknown as {
      id: string;
    }[];
    await resyncFleet(f.db);
    const after = (await f.db.execute(
      sql`select id::text, run_at > now() + interval '1 minute' as later from graphile_worker._private_jobs where key = ${`machine:${waiting.id}`}`,
    )) as unknown as {
      id: string;
      later: boolean;
    }[];
    expect(after).toEqual([{ id: scheduled.id, later: true }]);
  });

  test('the simulator unavailable for a while: bounded retries, then the machine becomes Ready', async () => {
    const f = await makeFleet(1);
    const retries = async () => {
      const rows = (await f.db.execute(
        sql`select coalesce(sum(value), 0)::int as n from metric_counters where metric = 'meridian_provider_retries_total'`,
      )) as unknown as { n: number }[];
      return rows[0].n;
    };
    const before = await retries();
    await admin.setFaults({ unavailable: { mode: 'reject', durationMs: 4000 } });
    await requestMachine(f.db, f.project.id, { ...f.spec, name: 'patient' }, actor);
    await waitPhase(f.project.id, 'patient', 'Ready', 60_000);
    const spent = (await retries()) - before;
    expect(spent).toBeGreaterThan(0);
    // Capped backoff: a 4 s outage costs a handful of attempts, not a storm.
    expect(spent).toBeLessThan(15);
    // The outage is in the machine's timeline: the install's retries with the error, then its success.
    const machine = await getMachine(f.db, f.project.id, 'patient');
    const installs = (await machineTimeline(f.db, machine.id)).filter((e) => e.action.startsWith('operation.install.'));
    expect(installs.some((e) => e.reason !== null)).toBe(true);
    expect(installs.at(-1)?.action).toBe('operation.install.Succeeded');
  });

  test('released while its install is unresolved: the install is resolved by lookup, no operation stays in flight', async () => {
    const f = await makeFleet(1);
    const operations = async () =>
      (await f.db.execute(
        sql`select o.id, o.kind, o.state from provider_operations o join machines m on m.id = o.machine_id where m.project_id = ${f.project.id} order by o.created_at`,
      )) as unknown as { id: string; kind: string; state: string }[];
    // The install's response is lost (its outcome Unknown), then the provider is away while the
    // tenant releases the machine: the release starts before the install could be looked up.
    await admin.setFaults({ loseResponses: 1 });
    await requestMachine(f.db, f.project.id, { ...f.spec, name: 'hasty' }, actor);
    await waitFor('the install outcome to be unknown', async () => (await operations()).some((o) => o.kind === 'install' && o.state === 'Unknown'), 30_000);
    await admin.setFaults({ unavailable: { mode: 'reject', durationMs: 3000 } });
    await deleteMachine(f.db, f.project.id, 'hasty', actor);
    await waitPhase(f.project.id, 'hasty', 'Released', 60_000);
    expect((await operations()).map((o) => `${o.kind} ${o.state}`)).toEqual(['install Succeeded', 'cleanup Succeeded']);
    expect(await effects(f.devices[0], 'install')).toBe(1);
    // The timeline keeps the unknown outcome and its resolution, in order.
    const machine = (await listMachines(f.db, f.project.id, { phase: 'Released', limit: 50, offset: 0 })).items.find((m) => m.name === 'hasty')!;
    const installs = (await machineTimeline(f.db, machine.id)).filter((e) => e.action.startsWith('operation.install.')).map((e) => e.action);
    expect(installs).toContain('operation.install.Unknown');
    expect(installs.indexOf('operation.install.Succeeded')).toBeGreaterThan(installs.indexOf('operation.install.Unknown'));
  }, 90_000);

  test('the worker killed (-9) mid-install converges after a restart with no duplicate effect', async () => {
    const f = await makeFleet(1);
    // Slow operations so the install is in flight when the worker dies.
    await admin.setFaults({ latencyMs: 1500 });
    try {
      await requestMachine(f.db, f.project.id, { ...f.spec, name: 'survivor' }, actor);
      await waitPhase(f.project.id, 'survivor', 'Installing', 30_000);
      for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      await admin.setFaults({ latencyMs: 0 });
    }
    // graphile-worker releases a dead worker's locked jobs after its lock timeout; a restarted
    // worker reclaims them (or the next keyed wake-up runs).
    startWorker();
    await waitPhase(f.project.id, 'survivor', 'Ready', 60_000);
    expect(await effects(f.devices[0], 'install')).toBe(1);
  }, 120_000);
});

/** The capacity row of a device, as the operator's functions address it. */
async function capacityOf(deviceRef: string) {
  const [row] = await testDb()
    .db.select({ id: machineCapacity.id, state: machineCapacity.state, stateReason: machineCapacity.stateReason, assetEpoch: machineCapacity.assetEpoch })
    .from(machineCapacity)
    .where(eq(machineCapacity.deviceRef, deviceRef));
  return row;
}

/** A fleet of one device, bound once and released with its cleanup failing: the device is Quarantined. */
async function quarantinedFleet() {
  const f = await makeFleet(1);
  await requestMachine(f.db, f.project.id, { ...f.spec, name: 'dirty' }, actor);
  await waitPhase(f.project.id, 'dirty', 'Ready');
  await admin.setFaults({ cleanupFailAssets: [f.devices[0]] });
  await deleteMachine(f.db, f.project.id, 'dirty', actor);
  await waitPhase(f.project.id, 'dirty', 'Released');
  expect((await capacityOf(f.devices[0])).state).toBe('Quarantined');
  return f;
}

const troubleIds = async () => (await troubledOperations(testDb().db, { limit: 200 })).map((o) => o.id as string);

describe('lifecycle edges', () => {
  test('a released machine frees its name: requested again it is a new machine; the released one leaves the default list and keeps its timeline', async () => {
    const f = await makeFleet(1);
    const first = await requestMachine(f.db, f.project.id, { ...f.spec, name: 'web-1' }, actor);
    await waitPhase(f.project.id, 'web-1', 'Ready');
    // Still live (releasing or not), the name is taken.
    await deleteMachine(f.db, f.project.id, 'web-1', actor);
    await waitPhase(f.project.id, 'web-1', 'Released');
    const second = await requestMachine(f.db, f.project.id, { ...f.spec, name: 'web-1' }, actor);
    expect(second.id).not.toBe(first.id);
    await waitPhase(f.project.id, 'web-1', 'Ready');
    await expect(requestMachine(f.db, f.project.id, { ...f.spec, name: 'web-1' }, actor)).rejects.toMatchObject({ code: 'Conflict', field: 'name' });
    const live = await listMachines(f.db, f.project.id, { limit: 50, offset: 0 });
    expect(live.items.map((m) => m.id)).toEqual([second.id]);
    expect(live.total).toBe(1);
    const released = await listMachines(f.db, f.project.id, { phase: 'Released', limit: 50, offset: 0 });
    expect(released.items.map((m) => m.id)).toEqual([first.id]);
    expect((await getMachine(f.db, f.project.id, 'web-1', first.id)).phase).toBe('Released');
    const history = await machineTimeline(f.db, first.id);
    expect(history.map((e) => e.action)).toEqual(expect.arrayContaining(['machine.create', 'machine.release.requested', 'machine.phase.Released']));
    expect(history.every((e) => e.action !== 'machine.create' || (e.after as { class: string }).class === `${f.tag}.cls`)).toBe(true);
    // Deleting by name addresses the live machine, never the released one.
    await deleteMachine(f.db, f.project.id, 'web-1', actor);
    await waitPhase(f.project.id, 'web-1', 'Released');
    expect((await listMachines(f.db, f.project.id, { phase: 'Released', limit: 50, offset: 0 })).total).toBe(2);
  });

  test('two concurrent requests for a released name: exactly one machine takes it', async () => {
    const f = await makeFleet(2);
    await requestMachine(f.db, f.project.id, { ...f.spec, name: 'twin' }, actor);
    await deleteMachine(f.db, f.project.id, 'twin', actor);
    await waitPhase(f.project.id, 'twin', 'Released');
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => requestMachine(f.db, f.project.id, { ...f.spec, name: 'twin' }, actor)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'Conflict', field: 'name' });
    const [{ live, granted }] = (await f.db.execute(sql`
      select (select count(*)::int from machines where project_id = ${f.project.id} and name = 'twin' and phase <> 'Released') as live,
             (select count(*)::int from resource_claims where project_id = ${f.project.id} and ref_kind = 'Machine' and ref_name = 'twin' and status = 'Granted' and released_at is null) as granted`)) as unknown as {
      live: number;
      granted: number;
    }[];
    expect({ live, granted }).toEqual({ live: 1, granted: 1 });
  });

  test('a machine force-released before it bound frees its name, its quota and its addresses', async () => {
    const f = await makeFleet(0);
    await createNetwork(f.db, f.project.id, { name: 'vpc', cidrs: [{ cidr: '198.51.100.0/24' }] }, actor);
    const spec = { ...f.spec, name: 'early', interfaces: [{ network: 'vpc', families: ['IPv4' as const], addressClasses: 1 }] };
    const m = await requestMachine(f.db, f.project.id, spec, actor);
    await waitFor('early waiting for capacity', async () => (await getMachine(f.db, f.project.id, 'early')).phaseReason?.includes('waiting for capacity'));
    await forceReleaseMachine(f.db, m.id, 'e2e: nothing to bind', actor);
    await waitPhase(f.project.id, 'early', 'Released');
    const again = await requestMachine(f.db, f.project.id, spec, actor);
    expect(again.interfaces[0].addresses).toHaveLength(1);
  });

  test('return to pool re-runs the cleanup through the provider: a failing cleanup leaves the device quarantined, a verified one returns it', async () => {
    const f = await quarantinedFleet();
    try {
      const quarantined = await capacityOf(f.devices[0]);
      const operator = await makeUser(f.db, { platformRoles: ['operator'] });
      const who = { type: 'user' as const, id: operator.id, label: operator.email };
      const started = await setCapacityState(f.db, quarantined.id, 'returnToPool', 'wiped by hand', who);
      // Not Available at once: the wipe is redone and verified first.
      expect(started.state).toBe('Cleaning');
      expect((await capacityOf(f.devices[0])).state).not.toBe('Available');
      await waitFor('the device quarantined again', async () => (await capacityOf(f.devices[0])).state === 'Quarantined');
      expect((await capacityOf(f.devices[0])).stateReason).toContain('CleanupFailed');
      await admin.setFaults({ cleanupFailAssets: [] });
      // Two operators return it at once: one return runs, the other is told it is no longer quarantined.
      const both = await Promise.allSettled([1, 2].map(() => setCapacityState(f.db, quarantined.id, 'returnToPool', 'fault cleared', who)));
      expect(both.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(both.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'InvalidTransition' } });
      await waitFor('the device Available', async () => (await capacityOf(f.devices[0])).state === 'Available');
      const returned = await capacityOf(f.devices[0]);
      const asset = await admin.getAsset(f.devices[0]);
      expect(asset.type === 'result' && asset.value.closedThroughEpoch).toBe(returned.assetEpoch);
      expect(asset.type === 'result' && asset.value.bindingId).toBeNull();
      const returns = (await f.db.execute(
        sql`select state from provider_operations where capacity_id = ${quarantined.id} and machine_id is null order by fencing_token`,
      )) as unknown as { state: string }[];
      expect(returns.map((r) => r.state)).toEqual(['Failed', 'Succeeded']);
      const actions = (await f.db.execute(
        sql`select action, actor_label as actor, reason from events where object_type = 'capacity' and object_id = ${quarantined.id} order by id`,
      )) as unknown as { action: string; actor: string; reason: string }[];
      const capacityActions = actions.filter((a) => a.action.startsWith('capacity.'));
      expect(capacityActions.map((a) => a.action)).toEqual([
        'capacity.quarantine',
        'capacity.returnToPool',
        'capacity.quarantine',
        'capacity.returnToPool',
        'capacity.available',
      ]);
      expect(capacityActions[1]).toMatchObject({ actor: operator.email, reason: 'wiped by hand' });
      // Each cleanup's outcome is in the device's history too (provider_operation_history).
      const outcomes = actions.filter((a) => a.action.startsWith('operation.cleanup.') && a.action !== 'operation.cleanup.Admitted');
      expect(outcomes.map((a) => [a.action, a.actor])).toEqual([
        ['operation.cleanup.Failed', 'provider'],
        ['operation.cleanup.Succeeded', 'provider'],
      ]);
    } finally {
      await admin.setFaults({ cleanupFailAssets: [] });
    }
  });

  test('a forced return to pool needs a reason, skips the provider and is audited as forced', async () => {
    const f = await quarantinedFleet();
    try {
      const { id } = await capacityOf(f.devices[0]);
      await expect(setCapacityState(f.db, id, 'returnToPool', '  ', actor, { force: true })).rejects.toMatchObject({
        code: 'ValidationFailed',
        field: 'reason',
      });
      expect((await capacityOf(f.devices[0])).state).toBe('Quarantined');
      const done = await setCapacityState(f.db, id, 'returnToPool', 'device replaced by the provider', actor, { force: true });
      expect(done.state).toBe('Available');
      const [event] = (await f.db.execute(
        sql`select action, reason, after from events where object_type = 'capacity' and object_id = ${id} order by id desc limit 1`,
      )) as unknown as { action: string; reason: string; after: { state: string; force: boolean } }[];
      expect(event).toMatchObject({ action: 'capacity.returnToPool', reason: 'device replaced by the provider', after: { state: 'Available', force: true } });
    } finally {
      await admin.setFaults({ cleanupFailAssets: [] });
    }
  });

  test('operations needing attention: a failed attempt leaves once a retry succeeded, a failed cleanup once the device was verified clean', async () => {
    const f = await makeFleet(1);
    await admin.setFaults({ failOperations: { count: 1, kind: 'install', assetId: f.devices[0] } });
    await requestMachine(f.db, f.project.id, { ...f.spec, name: 'retried' }, actor);
    await waitPhase(f.project.id, 'retried', 'Ready');
    const ops = (await f.db.execute(
      sql`select id, kind, state from provider_operations where device_ref = ${f.devices[0]} order by fencing_token`,
    )) as unknown as { id: string; kind: string; state: string }[];
    expect(ops.map((o) => `${o.kind} ${o.state}`)).toEqual(['install Failed', 'install Succeeded']);
    expect(await troubleIds()).not.toContain(ops[0].id);

    await admin.setFaults({ cleanupFailAssets: [f.devices[0]] });
    try {
      await deleteMachine(f.db, f.project.id, 'retried', actor);
      await waitPhase(f.project.id, 'retried', 'Released');
      const [failed] = (await f.db.execute(sql`select id from provider_operations where device_ref = ${f.devices[0]} and kind = 'cleanup'`)) as unknown as {
        id: string;
      }[];
      expect(await troubleIds()).toContain(failed.id);
      await admin.setFaults({ cleanupFailAssets: [] });
      await setCapacityState(f.db, (await capacityOf(f.devices[0])).id, 'returnToPool', 'fault cleared', actor);
      await waitFor('the device Available', async () => (await capacityOf(f.devices[0])).state === 'Available');
      expect(await troubleIds()).not.toContain(failed.id);
    } finally {
      await admin.setFaults({ cleanupFailAssets: [] });
    }
  });

  test('an operator acknowledges an operation with a note: it leaves the list, the note is audited; without a note nothing changes', async () => {
    const f = await quarantinedFleet();
    await admin.setFaults({ cleanupFailAssets: [] });
    const [failed] = (await f.db.execute(sql`select id from provider_operations where device_ref = ${f.devices[0]} and kind = 'cleanup'`)) as unknown as {
      id: string;
    }[];
    expect(await troubleIds()).toContain(failed.id);
    await expect(acknowledgeOperation(f.db, failed.id, ' ', actor)).rejects.toMatchObject({ code: 'ValidationFailed', field: 'note' });
    await expect(acknowledgeOperation(f.db, 'no-such-operation', 'x', actor)).rejects.toMatchObject({ code: 'NotFound' });
    expect(await troubleIds()).toContain(failed.id);
    // Two operators acknowledge at once: one note is kept, the other is told who was first.
    const both = await Promise.allSettled([
      acknowledgeOperation(f.db, failed.id, 'known: disk swap', actor),
      acknowledgeOperation(f.db, failed.id, 'same here', actor),
    ]);
    expect(both.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(both.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'Conflict' } });
    expect(await troubleIds()).not.toContain(failed.id);
    const events = (await f.db.execute(sql`select reason from events where action = 'operation.acknowledge' and object_id = ${failed.id}`)) as unknown as {
      reason: string;
    }[];
    expect(events).toHaveLength(1);
    expect(['known: disk swap', 'same here']).toContain(events[0].reason);
    // An operation that needs nothing (it succeeded) cannot be acknowledged.
    const [ok] = (await f.db.execute(
      sql`select id from provider_operations where device_ref = ${f.devices[0]} and kind = 'install' and state = 'Succeeded'`,
    )) as unknown as { id: string }[];
    await expect(acknowledgeOperation(f.db, ok.id, 'x', actor)).rejects.toMatchObject({ code: 'InvalidTransition' });
  });
});
