import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { inject } from 'vitest';
import type { Db } from '@/db/client';
import { locations, machineCapacity, machineClasses, machineProfiles, serviceAvailability } from '@/db/schema/fleet';
import { makeTempDir, randomToken, spawnSimulator } from '@/simulator/spawn-simulator';
import { uniq } from './db';

/**
 * The fleet's real parts for a test that drives machines end to end: the simulator process and a
 * worker process (bin/worker.ts) running the reconciler against this run's database.
 */
export async function startFleet() {
  const tmp = await makeTempDir('meridian-fleet-');
  const simulator = await spawnSimulator({
    stateFile: path.join(tmp.dir, 'state.json'),
    adminToken: randomToken('admin'),
    env: { SIMULATOR_OPERATION_MS: '0' },
  });
  let worker: ChildProcess | undefined;
  const startWorker = () => {
    worker = spawn(process.execPath, ['--import', 'tsx', path.join(process.cwd(), 'bin/worker.ts')], {
      env: {
        ...process.env,
        DATABASE_URL: inject('databaseUrl'),
        SIMULATOR_URL: simulator.baseUrl,
        SIMULATOR_TOKEN: simulator.token,
        WORKER_CONCURRENCY: '4',
        PROVIDER_TIMEOUT_MS: '1500',
        PROVIDER_RETRY_CAP_MS: '2000',
        LOG_LEVEL: 'error',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  };
  /** Kills the worker (SIGKILL) and waits for it to exit: nothing reconciles machines until startWorker. */
  const stopWorker = async () => {
    const w = worker;
    if (!w || w.exitCode !== null || w.signalCode !== null) return;
    const exited = new Promise((resolve) => w.once('exit', resolve));
    w.kill('SIGKILL');
    await exited;
  };
  startWorker();
  return {
    simulator,
    startWorker,
    stopWorker,
    async stop() {
      await stopWorker();
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
