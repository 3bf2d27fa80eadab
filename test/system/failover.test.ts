/**
 * The database fails under a mixed workload (IP claims, pod leases, machines, bucket reads through
 * two web processes and a worker), on a primary with a synchronous streaming standby:
 *
 * 1. stall: every process of the primary is stopped (SIGSTOP) for 20 s, then continued. Requests
 *    meanwhile are answered 503 `DatabaseUnavailable` with Retry-After within the deadline (none
 *    hangs, none is a 500), and writes succeed again right after.
 * 2. failover: the primary is killed (SIGKILL, every process of it) and the standby promoted. Every
 *    pool — web, batch side pools, LISTEN connections, the worker's graphile-worker pool — finds the
 *    new primary through the multi-host DATABASE_URL without a process restart; service is back
 *    within 10 s of the promotion.
 *
 * Afterwards the chaos invariants hold against the ledger of what each request was told: every
 * acknowledged claim, lease and machine change present exactly as acknowledged, no overlap, buckets
 * equal to their live claims, machines settled.
 *
 * Seeded: FAILOVER_SEED replays the workload's choices (timings still differ).
 */
import { randomInt } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, onTestFailed, test } from 'vitest';
import { Api } from './api';
import { failureLine, writeDigest } from './digest';
import { startSystem, type System } from './harness';
import { checkFleet, checkIpam, checkQueue, checkQuota, waitForFleetToSettle, waitForQueueToDrain } from './invariants';
import { checkLedger, Ledger } from './ledger';
import { startReplicatedPair, type ReplicatedPair } from './replication';
import { seededRandom, startWorkload } from './workload';
import { makeWorld, type World } from './world';

const seed = Number(process.env.FAILOVER_SEED ?? randomInt(2 ** 31));
const random = seededRandom(seed);
const REQUEST_BUDGET_MS = 5_000;
/** What a 503 may take beyond the budget: the answer's own way back on a busy machine. */
const ANSWER_SLACK_MS = 1_500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let pair: ReplicatedPair;
let system: System;
let api: Api;
let world: World;
const ledger = new Ledger();
let failed = true;
let failure: string | undefined;
let violations: string[] = [];
const report: string[] = [];

beforeAll(async () => {
  process.stdout.write(`failover: seed ${seed} (replay with FAILOVER_SEED=${seed})\n`);
  pair = await startReplicatedPair();
  const name = `meridian_failover_${process.pid}`;
  const admin = postgres(pair.primaryUrl('postgres'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  await admin.end();
  await pair.waitForSync();
  system = await startSystem({
    webs: 2,
    workers: 1,
    operationMs: 300,
    database: { url: pair.url(name), drop: async () => {} },
    env: { DB_REQUEST_TIMEOUT_MS: String(REQUEST_BUDGET_MS) },
  });
  api = new Api(system.webBases, 30_000);
  api.tolerateUnavailable = true;
  world = await makeWorld(system.db, api, { slug: 'failover', capacity: 4, clusters: ['east'] });
}, 300_000);

afterAll(async () => {
  api?.close();
  if (failed) {
    writeDigest(
      'failover',
      [
        `failover: FAILED with seed ${seed}; logs in ${system?.logDir ?? '(not started)'}; databases in ${pair?.dir ?? '(not started)'}`,
        `failover: ${failure ?? 'failed before the test ran'}`,
      ],
      violations,
    );
  }
  await system?.stop(failed ? { keep: true } : {});
  await pair?.stop({ keep: failed });
}, 60_000);

/** Requests answered in [from, to): their longest time, and what they were told. */
function answersBetween(from: number, to: number) {
  const during = api.timings.filter((t) => t.at >= from && t.at < to);
  return {
    count: during.length,
    slowestMs: Math.max(0, ...during.map((t) => t.ms)),
    unavailable: api.unavailable.length,
    hung: during.filter((t) => t.kind === 'unknown' && t.status === undefined && t.ms >= REQUEST_BUDGET_MS + ANSWER_SLACK_MS).length,
  };
}

/** The first acknowledged write (2xx to a POST or DELETE) completing after `from`, in ms after it. */
function firstWriteAfter(from: number): number | undefined {
  const acks = api.timings.filter((t) => t.at > from && t.kind === 'ack' && /^(POST|DELETE) /.test(t.what)).map((t) => t.at);
  return acks.length ? Math.min(...acks) - from : undefined;
}

test('a stalled primary (SIGSTOP 20 s): requests answer 503 within the deadline, and nothing stays wedged', async () => {
  onTestFailed(({ task }) => {
    failure = failureLine(task.result?.errors);
  });
  const workload = startWorkload(api, world, ledger, random);
  await sleep(5_000);
  const stalledAt = Date.now();
  const stall = pair.stallPrimary();
  await sleep(20_000);
  stall.resume();
  const resumedAt = Date.now();
  await sleep(10_000);
  await workload.stop();

  const during = answersBetween(stalledAt, resumedAt);
  const recovered = firstWriteAfter(resumedAt);
  report.push(
    `stall: ${during.count} answers during 20 s, slowest ${during.slowestMs.toFixed(0)} ms, ${api.unavailable.length} × 503; first write ${recovered} ms after SIGCONT`,
  );
  expect(api.serverErrors, 'no 500s').toEqual([]);
  expect(api.unavailable.length, 'the stall was answered 503').toBeGreaterThan(0);
  for (const u of api.unavailable) {
    expect(u.ms, `${u.what} answered 503 within the deadline`).toBeLessThan(REQUEST_BUDGET_MS + ANSWER_SLACK_MS);
    expect(u.retryAfter).toBe('2');
  }
  expect(during.hung, 'no request hung past the deadline').toBe(0);
  expect(recovered, 'writes succeed again after the stall').toBeLessThan(10_000);
  failed = false;
}, 180_000);

test('killing the primary and promoting the standby: service back within 10 s, nothing acknowledged lost', async () => {
  failed = true;
  onTestFailed(({ task }) => {
    failure = failureLine(task.result?.errors);
  });
  const before503 = api.unavailable.length;
  const workload = startWorkload(api, world, ledger, random);
  await sleep(6_000);
  const killedAt = Date.now();
  pair.killPrimary();
  await sleep(3_000);
  pair.promote();
  const promotedAt = Date.now();
  await sleep(15_000);
  await workload.stop();

  const recoveryMs = firstWriteAfter(promotedAt);
  const outage = answersBetween(killedAt, promotedAt + (recoveryMs ?? 0));
  const unavailable = api.unavailable.slice(before503);
  report.push(
    `failover: ${outage.count} answers from the kill to recovery, ${unavailable.length} × 503 (slowest ${Math.max(0, ...unavailable.map((u) => u.ms)).toFixed(0)} ms); first write ${recoveryMs} ms after the promotion`,
  );

  const moving = await waitForFleetToSettle(system.db, 150_000);
  await waitForQueueToDrain(system.db, 60_000);
  violations = [
    ...api.serverErrors.map((e) => `server error: ${e}`),
    ...unavailable.filter((u) => u.ms >= REQUEST_BUDGET_MS + ANSWER_SLACK_MS).map((u) => `503 after ${u.ms.toFixed(0)} ms: ${u.what}`),
    ...(outage.hung > 0 ? [`${outage.hung} request(s) hung past the deadline`] : []),
    ...moving.map((m) => `still moving: ${m}`),
    ...(await checkIpam(system.db)),
    ...(await checkQuota(system.db)),
    ...(await checkFleet(system.db)),
    ...(await checkQueue(system.db)),
    ...(await checkLedger(system.db, world.projectId, ledger, ['Ready', 'Released', 'Pending'])),
  ];
  report.push(`failover: outcomes ${JSON.stringify(ledger.counts)}`, `failover: ${api.summary()}`);
  process.stdout.write(`${report.join('\n')}\n`);
  expect(violations).toEqual([]);
  expect(recoveryMs, 'a write succeeded within 10 s of the promotion').toBeLessThanOrEqual(10_000);
  expect(ledger.live(ledger.leases).length + ledger.live(ledger.claims).length).toBeGreaterThan(10);
  failed = false;
}, 400_000);
