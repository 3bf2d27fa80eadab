/**
 * Scale-out: 2 web and 2 worker processes (and the simulator) against one PostgreSQL database.
 * The CNI, IPAM, quota and fleet flows are driven concurrently through both web processes with
 * API tokens; afterwards the jobs were shared between the workers, nothing ran twice, and every
 * invariant holds — checked in SQL, against the simulator's records and the workers' job traces.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, onTestFailed, test } from 'vitest';
import { Api, type Outcome } from './api';
import { failureLine, writeDigest } from './digest';
import { startSystem, type System } from './harness';
import { checkFleet, checkIpam, checkJobs, checkProvider, checkQueue, checkQuota, waitForFleetToSettle } from './invariants';
import { checkLedger, Ledger } from './ledger';
import { makeWorld, type World } from './world';

let system: System;
let api: Api;
let world: World;
let failed = true;
/** For the digest of a failed run: the first failure, and the violations once checked. */
let failure: string | undefined;
let violations: string[] = [];

beforeAll(async () => {
  system = await startSystem({ webs: 2, workers: 2, operationMs: 300 });
  // No chaos here: a slow answer (two busy cores) is waited for, not counted as lost.
  api = new Api(system.webBases, 180_000);
  world = await makeWorld(system.db, api, { slug: 'scale', capacity: 6, clusters: ['east', 'west'] });
}, 300_000);

afterAll(async () => {
  api?.close();
  if (failed)
    writeDigest(
      'scale-out',
      [`scale-out: FAILED; logs in ${system?.logDir ?? '(not started)'}`, `scale-out: ${failure ?? 'failed before the test ran'}`],
      violations,
    );
  await system?.stop(failed ? { keep: true } : {});
}, 60_000);

/** Runs `tasks` with at most `concurrency` in flight. */
async function pool<T>(tasks: (() => Promise<T>)[], concurrency: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await tasks[i]();
      }
    }),
  );
  return results;
}

/** Interleaves several lists (a, b, c, a, b, c, …) so the flows really run side by side. */
function interleave<T>(...lists: T[][]): T[] {
  const out: T[] = [];
  for (let i = 0; i < Math.max(...lists.map((l) => l.length)); i++) for (const l of lists) if (i < l.length) out.push(l[i]);
  return out;
}

const kinds = (outcomes: Outcome[]) =>
  outcomes.reduce<Record<string, number>>(
    (acc, o) => ({ ...acc, [o.kind === 'refused' ? o.code : o.kind]: (acc[o.kind === 'refused' ? o.code : o.kind] ?? 0) + 1 }),
    {},
  );

test('2 web + 2 worker processes share the work: every flow through both webs, nothing twice, all invariants hold', async () => {
  onTestFailed(({ task }) => {
    failure = failureLine(task.result?.errors);
  });
  const { db } = system;
  const ledger = new Ledger();
  const base = `/api/v1/projects/${world.slug}`;
  // A DEL names the attachment only, as the plugin sends it (the API refuses fields it does not take).
  const cni = (cluster: string, command: 'add' | 'del', containerId: string, node: string, web?: number) =>
    api.request(
      'POST',
      `${base}/clusters/${cluster}/cni/${command}`,
      world.clusterTokens[cluster],
      command === 'add'
        ? { cniNetwork: 'k8s', containerId, ifname: 'eth0', node, podNamespace: 'default', podName: containerId }
        : { cniNetwork: 'k8s', containerId, ifname: 'eth0' },
      { web },
    );
  const claimSpec = (i: number) => ({ network: 'vpc', family: i % 2 ? 'IPv6' : 'IPv4', prefixLength: i % 2 ? 64 : 28 });
  const started = Date.now();

  // Phase 1: claims (10 more than the ipclaims quota of 100 leaves room for), machines with an
  // address each (8 requests for 6 machines) and 320 pod leases over 2 clusters × 8 nodes, mixed.
  const leaseWeb = new Map<string, number>();
  const machines = Array.from({ length: 8 }, (_, i) => async () => {
    const name = `m-${i}`;
    const o = await api.request('POST', `${base}/machines`, world.token, {
      metadata: { name },
      spec: { ...world.machineSpec, interfaces: [{ network: 'vpc', families: ['IPv4'], addressClasses: 1 }] },
    });
    ledger.machineRequested(name, o);
    return o;
  });
  const claims = Array.from({ length: 110 }, (_, i) => async () => {
    const name = `c-${i}`;
    const o = await api.request('POST', `${base}/ipclaims`, world.token, { metadata: { name }, spec: claimSpec(i) });
    ledger.claimCreated(name, o);
    return o;
  });
  const adds = Array.from({ length: 320 }, (_, i) => async () => {
    const cluster = world.clusters[i % 2];
    const o = await cni(cluster, 'add', `ctr-${i}`, `node-${Math.floor(i / 2) % 8}`);
    ledger.leaseAdded(cluster, `ctr-${i}`, o);
    leaseWeb.set(`${cluster}/ctr-${i}`, o.web);
    return o;
  });
  const phase1 = await pool(interleave(machines, claims.slice(0, 40), adds.slice(0, 120), claims.slice(40), adds.slice(120)), 16);
  const phase1Seconds = (Date.now() - started) / 1000;
  expect(
    phase1.filter((o) => o.kind !== 'ack' && !(o.kind === 'refused' && o.code === 'QuotaExceeded')),
    JSON.stringify(kinds(phase1)),
  ).toEqual([]);
  const acked = (prefix: string) => [...ledger.claims.entries()].filter(([n, e]) => n.startsWith(prefix) && e.belief === 'present').length;
  const machinesAdmitted = [...ledger.machines.values()].filter((m) => m.belief === 'present').length;
  // The ipclaims bucket (limit 100) is exactly full: tenant claims plus one address per machine.
  expect(acked('c-') + machinesAdmitted).toBe(100);
  expect(machinesAdmitted).toBeGreaterThanOrEqual(6);
  expect(ledger.live(ledger.leases)).toHaveLength(320);

  // Phase 2: replays through the other web (same answers), releases, and new claims into the
  // freed quota; machines: once 6 are Ready, release 4, so the waiting ones bind.
  const presentClaims = ledger.live(ledger.claims);
  const replays = [
    ...ledger
      .live(ledger.leases)
      .slice(0, 60)
      .map((key) => async () => {
        const [cluster, containerId] = key.split('/');
        const e = ledger.leases.get(key)!;
        const o = await cni(cluster, 'add', containerId, 'elsewhere', 1 - leaseWeb.get(key)!);
        expect(o.kind === 'ack' && o.body.ips[0].address.split('/')[0], `re-ADD of ${key}`).toBe(e.address);
        return o;
      }),
    ...presentClaims.slice(0, 20).map((name) => async () => {
      const i = Number(name.slice(2));
      const o = await api.request('POST', `${base}/ipclaims`, world.token, { metadata: { name }, spec: claimSpec(i) });
      expect(o.kind === 'ack' && [o.status, o.body.status.allocatedCIDR], `replay of claim ${name}`).toEqual([200, ledger.claims.get(name)!.cidr]);
      return o;
    }),
  ];
  const dels = ledger
    .live(ledger.leases)
    .slice(100, 220)
    .map((key) => async () => {
      const [cluster, containerId] = key.split('/');
      const o = await cni(cluster, 'del', containerId, 'n/a');
      ledger.leaseDeleted(cluster, containerId, o);
      return o;
    });
  const deletes = presentClaims.slice(20, 60).map((name) => async () => {
    const o = await api.request('DELETE', `${base}/ipclaims/${name}`, world.token);
    ledger.claimDeleted(name, o);
    return o;
  });
  const more = Array.from({ length: 30 }, (_, i) => async () => {
    const name = `c2-${i}`;
    const o = await api.idempotent('POST', `${base}/ipclaims`, world.token, { metadata: { name }, spec: claimSpec(i) });
    ledger.claimCreated(name, o);
    return o;
  });
  const phase2 = await pool(interleave(replays, dels, deletes), 16);
  expect(
    phase2.filter((o) => o.kind !== 'ack'),
    JSON.stringify(kinds(phase2)),
  ).toEqual([]);
  const phase2b = await pool(more, 8);
  expect(
    phase2b.filter((o) => o.kind !== 'ack'),
    JSON.stringify(kinds(phase2b)),
  ).toEqual([]);

  const readyNames = async () =>
    (
      (await db.execute(sql`select name from machines where project_id = ${world.projectId} and phase = 'Ready' order by name`)) as unknown as {
        name: string;
      }[]
    ).map((r) => r.name);
  const deadline = Date.now() + 120_000;
  while ((await readyNames()).length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  const firstReady = await readyNames();
  expect(firstReady, 'six machines Ready (one per capacity)').toHaveLength(6);
  for (const name of firstReady.slice(0, 4)) {
    const o = await api.request('DELETE', `${base}/machines/${name}`, world.token);
    ledger.machineReleased(name, o);
    expect(o.kind, `release of ${name}`).toBe('ack');
  }

  // Phase 3: let the fleet settle, then check everything.
  const moving = await waitForFleetToSettle(db, 120_000);
  violations = moving.map((m) => `still moving: ${m}`);
  expect(moving).toEqual([]);
  const totalSeconds = (Date.now() - started) / 1000;

  const buckets = await Promise.all(
    [0, 1].map(async (web) => {
      const o = await api.request('GET', `${base}/allowancebuckets`, world.token, undefined, { web });
      expect(o.kind).toBe('ack');
      return Object.fromEntries(
        (o as { body: { items: { spec: { resourceType: string }; status: { allocated: number; limit: number } }[] } }).body.items.map((b) => [
          b.spec.resourceType,
          b.status,
        ]),
      );
    }),
  );
  expect(buckets[0]).toEqual(buckets[1]);
  const [{ claims: liveClaims, machines: liveMachines }] = (await db.execute(sql`
    select (select count(*) from ip_claims where project_id = ${world.projectId})::int as claims,
           (select count(*) from machines where project_id = ${world.projectId} and phase <> 'Released')::int as machines`)) as unknown as {
    claims: number;
    machines: number;
  }[];
  expect(buckets[0]['ipam.miloapis.com/ipclaims'].allocated).toBe(liveClaims);
  expect(buckets[0]['metal.datumapis.com/machines'].allocated).toBe(liveMachines);

  const phases = (await db.execute(
    sql`select phase, count(*)::int as n from machines where project_id = ${world.projectId} group by 1 order by 1`,
  )) as unknown as { phase: string; n: number }[];
  expect(Object.fromEntries(phases.map((p) => [p.phase, p.n]))).toEqual({ Ready: machinesAdmitted - 4, Released: 4 });

  violations = [
    ...api.serverErrors.map((e) => `server error: ${e}`),
    ...(await checkIpam(db)),
    ...(await checkQuota(db)),
    ...(await checkFleet(db)),
    ...(await checkProvider(db, system.admin, { settled: true })),
    ...checkJobs(system.jobRuns, system.kills),
    ...(await checkQueue(db)),
    ...(await checkLedger(db, world.projectId, ledger, ['Ready', 'Released'])),
  ];
  expect(violations).toEqual([]);

  // The work really was shared: both webs answered, both workers ran machine reconcilers, no job failed.
  const reconciles = system.jobRuns.filter((r) => r.task === 'machine__reconcile');
  const perWorker = Object.fromEntries(system.workers.map((w) => [w.name, reconciles.filter((r) => r.process === w.name).length]));
  expect(
    api.sent.every((n) => n > 100),
    `requests per web ${api.sent}`,
  ).toBe(true);
  expect(
    Object.values(perWorker).every((n) => n > 0),
    `reconciler runs per worker ${JSON.stringify(perWorker)}`,
  ).toBe(true);
  expect(system.jobRuns.filter((r) => r.outcome === 'error')).toEqual([]);

  process.stdout.write(
    `scale-out: phase 1 (${phase1.length} requests) ${phase1Seconds.toFixed(1)} s, settled after ${totalSeconds.toFixed(1)} s; ` +
      `requests per web ${api.sent.join('/')}; reconciler runs per worker ${JSON.stringify(perWorker)}; outcomes ${JSON.stringify(ledger.counts)}\n` +
      `scale-out: ${api.summary()}\n`,
  );
  failed = false;
}, 600_000);
