/**
 * Automatic failover under a real manager: the chaos workload (IP claims, pod leases, machines,
 * bucket reads through two web processes and a worker, multi-host DATABASE_URL) on a three-member
 * PostgreSQL cluster under Patroni with etcd (test/system/patroni.ts: ttl 10, loop_wait 2,
 * synchronous_mode), and in turn:
 *
 * 1. the leader's postmaster killed (SIGKILL);
 * 2. the leader node lost (its Patroni and every PostgreSQL process SIGKILLed);
 * 3. the leader partitioned from etcd (its connections through the test's TCP proxy cut; its
 *    PostgreSQL keeps running until Patroni demotes it).
 *
 * Patroni decides every failover: the test only breaks things and, between faults, brings the lost
 * member back (or heals the partition) and waits for three healthy members. After each fault: every
 * acknowledged write present exactly as acknowledged, no overlap, buckets equal live claims,
 * machines settle, no 500, every 503 within the deadline; the time from the fault to the first
 * successful write (≤ 15 s) and the outage's answer profile are printed.
 *
 * Seeded: PATRONI_SEED replays the workload's choices (timings still differ).
 */
import { randomInt } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, onTestFailed, test } from 'vitest';
import { Api } from './api';
import { failureLine, writeDigest } from './digest';
import { startSystem, type System } from './harness';
import { checkFleet, checkIpam, checkQueue, checkQuota, waitForFleetToSettle, waitForQueueToDrain } from './invariants';
import { checkLedger, Ledger } from './ledger';
import { patroniMissing, startPatroniCluster, type PatroniCluster, type PatroniMember } from './patroni';
import { seededRandom, startWorkload } from './workload';
import { makeWorld, type World } from './world';

const skip = patroniMissing();
if (skip) process.stderr.write(`[patroni] skipped: ${skip}\n`);

const seed = Number(process.env.PATRONI_SEED ?? randomInt(2 ** 31));
const random = seededRandom(seed);
const REQUEST_BUDGET_MS = 5_000;
/** What a 503 may take beyond the budget: the answer's own way back on a busy machine. */
const ANSWER_SLACK_MS = 1_500;
const RECOVERY_LIMIT_MS = 15_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cluster: PatroniCluster;
let system: System;
let api: Api;
let world: World;
const ledger = new Ledger();
let failed = true;
let failure: string | undefined;
let violations: string[] = [];
const report: string[] = [];

describe.skipIf(skip !== undefined)(`Meridian on a Patroni cluster${skip ? ` (skipped: ${skip})` : ''}`, () => {
  beforeAll(async () => {
    process.stdout.write(`patroni: seed ${seed} (replay with PATRONI_SEED=${seed})\n`);
    cluster = await startPatroniCluster();
    const leader = await cluster.leader();
    const name = `meridian_patroni_${process.pid}`;
    const admin = postgres(cluster.memberUrl(leader, 'postgres'), { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${name}"`);
    await admin.end();
    system = await startSystem({
      webs: 2,
      workers: 1,
      operationMs: 300,
      database: { url: cluster.url(name), drop: async () => {} },
      env: { DB_REQUEST_TIMEOUT_MS: String(REQUEST_BUDGET_MS) },
    });
    api = new Api(system.webBases, 30_000);
    api.tolerateUnavailable = true;
    world = await makeWorld(system.db, api, { slug: 'patroni', capacity: 4, clusters: ['east'] });
  }, 600_000);

  afterAll(async () => {
    api?.close();
    if (report.length) process.stdout.write(`${report.join('\n')}\n`);
    if (failed) {
      writeDigest(
        'patroni',
        [
          `patroni: FAILED with seed ${seed}; logs in ${system?.logDir ?? '(not started)'}; cluster in ${cluster?.dir ?? '(not started)'}`,
          `patroni: ${failure ?? 'failed before the test ran'}`,
        ],
        violations,
      );
    }
    await system?.stop(failed ? { keep: true } : {});
    await cluster?.stop({ keep: failed });
  }, 120_000);

  /**
   * The outage a fault caused, as the clients saw it: from the fault to the first acknowledged write
   * (2xx to a POST or DELETE) sent after the last request that failed (503 or no answer) within
   * `windowMs` of it — so a write acknowledged late for a commit made before the fault, or one the
   * old leader took before Patroni demoted it, does not end the outage early. In ms after the fault.
   */
  function recoveryAfter(faultAt: number, windowMs: number): number | undefined {
    const window = api.timings.filter((t) => t.at >= faultAt && t.at - t.ms <= faultAt + windowMs);
    const lastFailureSent = Math.max(faultAt, ...window.filter((t) => t.kind === 'unknown').map((t) => t.at - t.ms));
    const acks = window.filter((t) => t.kind === 'ack' && /^(POST|DELETE) /.test(t.what) && t.at - t.ms >= lastFailureSent).map((t) => t.at);
    return acks.length ? Math.min(...acks) - faultAt : undefined;
  }

  /** Runs the workload, applies `fault` to the leader, and checks everything afterwards. */
  async function underFault(label: string, fault: (leader: PatroniMember) => void, restore: (leader: PatroniMember) => void) {
    failed = true;
    onTestFailed(({ task }) => {
      failure = `${label}: ${failureLine(task.result?.errors)}`;
    });
    await cluster.waitHealthy();
    const leader = await cluster.leader();
    const before503 = api.unavailable.length;
    const beforeErrors = api.serverErrors.length;
    const workload = startWorkload(api, world, ledger, random);
    await sleep(6_000);
    const faultAt = Date.now();
    fault(leader);
    // Past the leader key's expiry (ttl 10 s) and an election, with load all along.
    await sleep(30_000);
    await workload.stop();
    const recoveryMs = recoveryAfter(faultAt, 30_000);
    const newLeader = await cluster.leader(60_000, leader);

    const during = api.timings.filter((t) => t.at >= faultAt && t.at <= faultAt + (recoveryMs ?? 60_000));
    const profile: Record<string, number> = {};
    for (const t of during) {
      const key = t.status ? String(t.status) : t.kind;
      profile[key] = (profile[key] ?? 0) + 1;
    }
    const unavailable = api.unavailable.slice(before503);
    // The failures that ended the outage last: when each was sent and answered after the fault, and why.
    const lastFailures = api.timings
      .filter((t) => t.kind === 'unknown' && t.at >= faultAt && t.at - t.ms <= faultAt + 30_000)
      .sort((a, b) => a.at - a.ms - (b.at - b.ms))
      .slice(-3)
      .map((t) => `+${((t.at - t.ms - faultAt) / 1000).toFixed(1)}…+${((t.at - faultAt) / 1000).toFixed(1)} s ${t.what}: ${t.reason ?? ''}`);
    report.push(
      `${label}: leader ${leader.name} → ${newLeader.name}; writes back ${recoveryMs ?? 'never'} ms after the fault; answers until then ${JSON.stringify(profile)}, ` +
        `slowest ${Math.max(0, ...during.map((t) => t.ms)).toFixed(0)} ms; ${unavailable.length} × 503 (slowest ${Math.max(0, ...unavailable.map((u) => u.ms)).toFixed(0)} ms); ` +
        `last failures ${lastFailures.join(' | ') || 'none'}`,
    );

    // A job that lost the database under it runs again as soon as the new leader takes writes
    // (server/worker/runner.ts: runThroughOutage), not after graphile-worker's backoff: the bound is
    // the other system tests' one.
    const settleFrom = Date.now();
    const moving = await waitForFleetToSettle(system.db, 120_000);
    await waitForQueueToDrain(system.db, 60_000);
    report.push(`${label}: machines settled and the queue drained ${((Date.now() - settleFrom) / 1000).toFixed(1)} s after the load stopped`);
    violations = [
      ...api.serverErrors.slice(beforeErrors).map((e) => `server error: ${e}`),
      ...unavailable.filter((u) => u.ms >= REQUEST_BUDGET_MS + ANSWER_SLACK_MS).map((u) => `503 after ${u.ms.toFixed(0)} ms: ${u.what}`),
      ...unavailable.filter((u) => u.retryAfter === undefined).map((u) => `503 without Retry-After: ${u.what}`),
      ...moving.map((m) => `still moving: ${m}`),
      ...(await checkIpam(system.db)),
      ...(await checkQuota(system.db)),
      ...(await checkFleet(system.db)),
      ...(await checkQueue(system.db)),
      ...(await checkLedger(system.db, world.projectId, ledger, ['Ready', 'Released', 'Pending'])),
    ];
    restore(leader);
    expect(violations).toEqual([]);
    expect(recoveryMs, `${label}: a write succeeded within ${RECOVERY_LIMIT_MS / 1000} s of the fault`).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
    failed = false;
  }

  test('the leader postmaster killed (SIGKILL): Patroni fails over, nothing acknowledged lost', async () => {
    await underFault(
      'postmaster killed',
      (leader) => cluster.killPostmaster(leader),
      () => {},
    );
  }, 600_000);

  test('the leader node lost (Patroni and PostgreSQL killed): the synchronous standby takes over, nothing acknowledged lost', async () => {
    await underFault(
      'node lost',
      (leader) => cluster.loseNode(leader),
      (leader) => cluster.startMember(leader),
    );
  }, 600_000);

  test('the leader partitioned from etcd: it steps down, another member leads, nothing acknowledged lost', async () => {
    await underFault(
      'partitioned from etcd',
      (leader) => cluster.partition(leader),
      (leader) => cluster.heal(leader),
    );
    await cluster.waitHealthy();
    expect(ledger.live(ledger.leases).length + ledger.live(ledger.claims).length).toBeGreaterThan(10);
    report.push(`patroni: outcomes ${JSON.stringify(ledger.counts)}`, `patroni: ${api.summary()}`);
  }, 600_000);
});
