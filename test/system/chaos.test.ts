/**
 * Chaos: a mixed workload (IP claims, pod leases, machines, bucket reads) through 2 web processes
 * while the web, worker and simulator processes are killed with SIGKILL at random moments and
 * started again. Afterwards: no duplicate or overlapping addresses, every acknowledged lease and
 * claim present as acknowledged, everything refused or deleted gone, every bucket's allocated equal
 * to its live granted claims, no capacity bound twice, no provider effect twice, no job run twice,
 * and every machine in a terminal or steady phase.
 *
 * Seeded: CHAOS_SEED replays the same choices (timings still differ); CHAOS_SECONDS sets how long
 * the processes are killed (default 60).
 */
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, expect, onTestFailed, test } from 'vitest';
import { Api } from './api';
import { failureLine, writeDigest } from './digest';
import { startSystem, type System, type SystemProcess } from './harness';
import { checkFleet, checkIpam, checkJobs, checkProvider, checkQueue, checkQuota, waitForFleetToSettle, waitForQueueToDrain } from './invariants';
import { checkLedger, Ledger } from './ledger';
import { seededRandom, startWorkload } from './workload';
import { makeWorld, type World } from './world';

const seed = Number(process.env.CHAOS_SEED ?? randomInt(2 ** 31));
const chaosMs = Number(process.env.CHAOS_SECONDS ?? 60) * 1000;

const random = seededRandom(seed);
const between = (lo: number, hi: number) => lo + random() * (hi - lo);
const pickOne = <T>(items: T[]): T | undefined => (items.length ? items[Math.floor(random() * items.length)] : undefined);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let system: System;
let api: Api;
let world: World;
let failed = true;
/** For the digest of a failed run: the first failure, and the violations once checked. */
let failure: string | undefined;
let violations: string[] = [];

beforeAll(async () => {
  process.stdout.write(`chaos: seed ${seed} (replay with CHAOS_SEED=${seed}), ${chaosMs / 1000} s of kills\n`);
  system = await startSystem({ webs: 2, workers: 2, operationMs: 500 });
  api = new Api(system.webBases, 15_000);
  world = await makeWorld(system.db, api, { slug: 'chaos', capacity: 5, clusters: ['east', 'west'] });
}, 300_000);

afterAll(async () => {
  api?.close();
  if (failed) {
    process.stdout.write(`chaos: FAILED with seed ${seed} (replay with CHAOS_SEED=${seed})\n`);
    writeDigest(
      'chaos',
      [
        `chaos: FAILED with seed ${seed} (replay with CHAOS_SEED=${seed}); logs in ${system?.logDir ?? '(not started)'}`,
        `chaos: ${failure ?? 'failed before the test ran'}`,
      ],
      violations,
    );
  }
  await system?.stop(failed ? { keep: true } : {});
}, 60_000);

test('killing web, worker and simulator processes (-9) under a mixed workload loses and duplicates nothing', async () => {
  onTestFailed(({ task }) => {
    failure = failureLine(task.result?.errors);
  });
  const { db } = system;
  const ledger = new Ledger();
  const workload = startWorkload(api, world, ledger, random);

  // The monkey: every 1–4 s, SIGKILL one process that is up; start it again 0.5–3 s later
  // (outages overlap). One web always stays up, so the workload keeps flowing and has something to
  // lose when the other dies mid-request.
  const kills: Record<string, number> = {};
  const restarts: Promise<void>[] = [];
  const restart = async (p: SystemProcess) => {
    for (let attempt = 0; attempt < 3 && !p.running; attempt++) {
      try {
        await p.start();
      } catch (e) {
        process.stdout.write(`chaos: restarting ${p.name} failed (${(e as Error).message}); trying again\n`);
      }
    }
  };
  const started = Date.now();
  while (Date.now() - started < chaosMs) {
    await sleep(between(1000, 4000));
    const roll = random();
    const candidates = roll < 0.4 ? system.webs : roll < 0.75 ? system.workers : [system.simulator];
    const victim = pickOne(candidates)!;
    if (!victim.ready || (victim.role === 'web' && system.webs.filter((w) => w.ready).length < 2)) continue;
    await system.kill(victim);
    kills[victim.name] = (kills[victim.name] ?? 0) + 1;
    const downFor = between(500, 3000);
    restarts.push(sleep(downFor).then(() => restart(victim)));
  }
  await Promise.all(restarts);
  for (const p of system.processes) await restart(p);
  await workload.stop();
  const chaosSeconds = (Date.now() - started) / 1000;
  expect(
    system.processes.filter((p) => !p.running).map((p) => p.name),
    'every process running again',
  ).toEqual([]);

  // Convergence: a killed worker's jobs come back ~30 s after its last heartbeat.
  const moving = await waitForFleetToSettle(db, 150_000);
  await waitForQueueToDrain(db, 60_000);
  const settleSeconds = (Date.now() - started) / 1000 - chaosSeconds;

  violations = [
    ...api.serverErrors.map((e) => `server error: ${e}`),
    ...moving.map((m) => `still moving: ${m}`),
    ...workload.overLimit.map((o) => `a bucket read showed allocated above limit: ${o}`),
    ...(await checkIpam(db)),
    ...(await checkQuota(db)),
    ...(await checkFleet(db)),
    ...(await checkProvider(db, system.admin, { settled: true })),
    ...checkJobs(system.jobRuns, system.kills),
    ...(await checkQueue(db)),
    ...(await checkLedger(db, world.projectId, ledger, ['Ready', 'Released', 'Pending'])),
  ];
  process.stdout.write(
    `chaos: seed ${seed}; ${chaosSeconds.toFixed(0)} s of chaos, settled ${settleSeconds.toFixed(0)} s later; kills ${JSON.stringify(kills)}\n` +
      `chaos: outcomes ${JSON.stringify(ledger.counts)}\n` +
      `chaos: ${system.jobRuns.length} job runs traced (${system.jobRuns.filter((r) => r.end === undefined).length} cut short by a kill)\n` +
      `chaos: ${api.summary()}\n`,
  );
  expect(violations).toEqual([]);
  // The run must have meant something: processes died, and work was acknowledged throughout.
  expect(Object.values(kills).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(chaosMs / 15_000);
  expect(ledger.live(ledger.leases).length + ledger.live(ledger.claims).length).toBeGreaterThan(20);
  failed = false;
}, 900_000);
