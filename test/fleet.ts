import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { inject } from 'vitest';
import type { Db } from '@/db/client';
import { locations, machineCapacity, machineClasses, machineProfiles, serviceAvailability } from '@/db/schema/fleet';
import { createHttpProviderAdminClient } from '@/server/provider';
import { makeTempDir, randomToken, spawnSimulator } from '@/simulator/spawn-simulator';
import { uniq } from './db';

/**
 * The fleet's real parts for a test that drives machines end to end: the simulator process and a
 * worker process (bin/worker.ts) running the reconciler against this run's database. Every
 * provider operation takes `operationMs` (default 0: complete at submission).
 */
export async function startFleet(options: { operationMs?: number } = {}) {
  const tmp = await makeTempDir('meridian-fleet-');
  const simulator = await spawnSimulator({
    stateFile: path.join(tmp.dir, 'state.json'),
    adminToken: randomToken('admin'),
    env: { SIMULATOR_OPERATION_MS: String(options.operationMs ?? 0) },
  });
  const worker: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(process.cwd(), 'bin/worker.ts')], {
    env: {
      ...process.env,
      DATABASE_URL: inject('databaseUrl'),
      ...simulator.clientEnv('worker'),
      WORKER_CONCURRENCY: '4',
      PROVIDER_TIMEOUT_MS: '1500',
      PROVIDER_RETRY_CAP_MS: '1000',
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const admin = createHttpProviderAdminClient({ baseUrl: simulator.adminUrl!, token: simulator.adminToken!, tls: { caFile: simulator.pki.caFile } });
  const setFaults = async (patch: Parameters<typeof admin.setFaults>[0]) => {
    const outcome = await admin.setFaults(patch);
    if (outcome.type !== 'result') throw new Error(`the simulator refused the faults: ${JSON.stringify(outcome)}`);
  };
  return {
    simulator,
    admin,
    /** The provider refuses every call (503) until resumed: nothing it does (an install, a cleanup) can complete meanwhile. */
    pauseProvider: () => setFaults({ unavailable: { mode: 'reject' } }),
    resumeProvider: () => setFaults({ unavailable: null }),
    async stop() {
      const exited = new Promise((resolve) => (worker.exitCode === null && worker.signalCode === null ? worker.once('exit', resolve) : resolve(undefined)));
      worker.kill('SIGKILL');
      await exited;
      await simulator.kill('SIGTERM');
      await tmp.remove();
    },
  };
}

/**
 * A private corner of the catalogue: its own location (machines Available there), class, profile
 * and `capacity` devices; `spec` is a machine's spec placed there.
 */
export async function makeFleetCorner(db: Db, capacity: number, options: { requiresApproval?: boolean } = {}) {
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
    const deviceRef = `dev-${tag}-${i}`;
    devices.push(deviceRef);
    await db.insert(machineCapacity).values({ deviceRef, classId: cls.id, locationId: loc.id });
  }
  return { tag, devices, spec: { class: `${tag}.cls`, profile: `${tag}-os`, location: tag } };
}
