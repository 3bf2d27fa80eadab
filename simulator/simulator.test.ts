/**
 * The simulator as a real process: idempotency, fencing, faults, durability across kill -9, start-up refusal
 * and the admin API's access rules. Each test uses its own asset ids, so the shared instance needs no reset
 * beyond clearing faults.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createHttpProviderAdminClient,
  createHttpProviderClient,
  resolveSubmission,
  unwrap,
  type CallOutcome,
  type OperationRecord,
  type ProviderAdminClient,
  type ProviderClient,
  type SubmitResult,
} from '../server/provider';
import { EXIT_CONFIG, EXIT_CRASH_FAULT } from './config';
import { ensureTestPki, makeTempDir, randomToken, runSimulatorUntilExit, simulatorTlsEnv, spawnSimulator, type SpawnedSimulator } from './spawn-simulator';
import { STATE_SCHEMA_VERSION, stateFromDocument } from './state';

const DIGEST_A = `sha256:${'a'.repeat(64)}`;
const DIGEST_B = `sha256:${'b'.repeat(64)}`;

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function tempStateFile(): Promise<string> {
  const temp = await makeTempDir();
  cleanups.push(temp.remove);
  return path.join(temp.dir, 'simulator', 'state.json');
}

/** TLS files for a simulator started by hand (a PKI of its own). */
async function standaloneTlsEnv(): Promise<Record<string, string>> {
  return simulatorTlsEnv(await ensureTestPki(path.join(path.dirname(await tempStateFile()), 'pki')));
}

async function start(options: Parameters<typeof spawnSimulator>[0]): Promise<SpawnedSimulator> {
  const simulator = await spawnSimulator(options);
  cleanups.push(() => simulator.kill('SIGKILL'));
  return simulator;
}

function clientsFor(simulator: SpawnedSimulator): { client: ProviderClient; admin: ProviderAdminClient } {
  return {
    client: createHttpProviderClient({ baseUrl: simulator.baseUrl, tls: simulator.clientTls('worker'), timeoutMs: 5_000 }),
    admin: createHttpProviderAdminClient({
      baseUrl: simulator.adminUrl ?? 'https://127.0.0.1:1',
      token: simulator.adminToken ?? '',
      tls: { caFile: simulator.pki.caFile },
      timeoutMs: 5_000,
    }),
  };
}

function expectResult(outcome: CallOutcome<SubmitResult>): SubmitResult {
  if (outcome.type !== 'result') throw new Error(`expected a result, got ${JSON.stringify(outcome)}`);
  return outcome.value;
}

function expectRejected(outcome: CallOutcome<unknown>, code: string, status = 409): void {
  expect(outcome).toMatchObject({ type: 'rejected', error: { code, status } });
}

let counter = 0;
const uniqueId = (prefix: string) => `${prefix}-${process.pid}-${++counter}`;

describe('simulator (shared instance, admin API on)', () => {
  let simulator: SpawnedSimulator;
  let client: ProviderClient;
  let admin: ProviderAdminClient;

  beforeAll(async () => {
    simulator = await start({ stateFile: await tempStateFile(), adminToken: randomToken('admin'), env: { SIMULATOR_ASSETS: 'dev-seed-1, dev-seed-2' } });
    ({ client, admin } = clientsFor(simulator));
  });
  afterEach(async () => {
    unwrap(await admin.clearFaults());
  });

  it('seeds assets from SIMULATOR_ASSETS and reports store figures', async () => {
    const assets = unwrap(await admin.listAssets({ limit: 10 }));
    expect(assets.items.map((asset) => asset.id)).toEqual(expect.arrayContaining(['dev-seed-1', 'dev-seed-2']));
    expect(unwrap(await client.getAsset('dev-seed-1'))).toMatchObject({ epoch: 0, bindingId: null, power: 'off', effectCount: 0 });
    const stats = unwrap(await admin.getStats());
    expect(stats.stateFile).toBe(simulator.stateFile);
    expect(stats.writes).toBeGreaterThanOrEqual(1);
  });

  it('answers health without a client certificate', async () => {
    const health = await createHttpProviderClient({ baseUrl: simulator.baseUrl, tls: { caFile: simulator.pki.caFile } }).health();
    expect(health).toMatchObject({ type: 'result', value: { status: 'ok', schemaVersion: STATE_SCHEMA_VERSION } });
  });

  it('replays an identical request and rejects a different request under the same id', async () => {
    const assetId = uniqueId('dev-idem');
    const request = { id: uniqueId('op'), assetId, bindingId: 'b1', epoch: 1, fencingToken: 1, imageDigest: DIGEST_A };
    const first = expectResult(await client.install(request));
    expect(first.replayed).toBe(false);
    expect(first.operation).toMatchObject({ id: request.id, kind: 'install', state: 'Succeeded' });

    const replay = expectResult(await client.install(request));
    expect(replay.replayed).toBe(true);
    expect(replay.operation).toEqual(first.operation);

    expectRejected(await client.install({ ...request, imageDigest: DIGEST_B }), 'IdempotencyConflict');
    const { imageDigest: _digest, ...fenced } = request;
    expectRejected(await client.power({ ...fenced, power: 'off' }), 'IdempotencyConflict');

    const asset = unwrap(await client.getAsset(assetId));
    expect(asset.effectCount).toBe(1);
    expect(asset.installedImageDigest).toBe(DIGEST_A);
  });

  it('rejects stale epochs and tokens, and a new binding must advance the epoch', async () => {
    const assetId = uniqueId('dev-fence');
    expectResult(await client.install({ id: uniqueId('op'), assetId, bindingId: 'b1', epoch: 1, fencingToken: 5, imageDigest: DIGEST_A }));
    // Another binding at the same epoch: it did not advance the epoch.
    expectRejected(await client.power({ id: uniqueId('op'), assetId, bindingId: 'b2', epoch: 1, fencingToken: 9, power: 'off' }), 'StaleEpoch');
    // Same binding, lower fencing token.
    expectRejected(await client.power({ id: uniqueId('op'), assetId, bindingId: 'b1', epoch: 1, fencingToken: 4, power: 'off' }), 'StaleFencingToken');
    // A new binding advances the epoch...
    expectResult(await client.install({ id: uniqueId('op'), assetId, bindingId: 'b2', epoch: 2, fencingToken: 1, imageDigest: DIGEST_B }));
    // ...after which the old binding's epoch is stale, whatever its token.
    expectRejected(await client.power({ id: uniqueId('op'), assetId, bindingId: 'b1', epoch: 1, fencingToken: 99, power: 'off' }), 'StaleEpoch');
    const asset = unwrap(await client.getAsset(assetId));
    expect(asset).toMatchObject({ epoch: 2, bindingId: 'b2', fencingToken: 1, installedImageDigest: DIGEST_B, power: 'on', effectCount: 2 });
  });

  it('closes the epoch with cleanup: nothing of that epoch or older touches the asset again', async () => {
    const assetId = uniqueId('dev-close');
    expectResult(await client.install({ id: uniqueId('op'), assetId, bindingId: 'b1', epoch: 3, fencingToken: 1, imageDigest: DIGEST_A }));
    const cleanup = expectResult(await client.cleanup({ id: uniqueId('op'), assetId, bindingId: 'b1', epoch: 3, fencingToken: 1 }));
    expect(cleanup.operation.state).toBe('Succeeded');
    let asset = unwrap(await client.getAsset(assetId));
    expect(asset).toMatchObject({ closedThroughEpoch: 3, bindingId: null, installedImageDigest: null, power: 'off' });
    expect(asset.cleanedAt).not.toBeNull();

    for (const epoch of [1, 3]) {
      expectRejected(await client.power({ id: uniqueId('op'), assetId, bindingId: 'b1', epoch, fencingToken: 1, power: 'on' }), 'StaleEpoch');
      expectRejected(await client.cleanup({ id: uniqueId('op'), assetId, bindingId: 'b1', epoch, fencingToken: 1 }), 'StaleEpoch');
    }
    // A new binding at epoch 3 is refused too (the epoch is closed); epoch 4 is accepted.
    expectRejected(await client.install({ id: uniqueId('op'), assetId, bindingId: 'b2', epoch: 3, fencingToken: 1, imageDigest: DIGEST_B }), 'StaleEpoch');
    expectResult(await client.install({ id: uniqueId('op'), assetId, bindingId: 'b2', epoch: 4, fencingToken: 1, imageDigest: DIGEST_B }));
    asset = unwrap(await client.getAsset(assetId));
    expect(asset).toMatchObject({ epoch: 4, bindingId: 'b2', closedThroughEpoch: 3, installedImageDigest: DIGEST_B, effectCount: 3 });
  });

  it('validates input with the field named, and requires a client certificate', async () => {
    const assetId = uniqueId('dev-valid');
    const bad = await client.submit({ id: uniqueId('op'), kind: 'install', assetId, bindingId: 'b1', epoch: 1, fencingToken: 1, imageDigest: 'sha256:xyz' });
    expect(bad).toMatchObject({ type: 'rejected', error: { status: 400, code: 'InvalidRequest', field: 'imageDigest' } });
    const zeroEpoch = await client.submit({ id: uniqueId('op'), kind: 'power', assetId, bindingId: 'b1', epoch: 0, fencingToken: 1, power: 'on' });
    expect(zeroEpoch).toMatchObject({ type: 'rejected', error: { status: 400, code: 'InvalidRequest', field: 'epoch' } });

    // TLS without a client certificate: refused, whatever the bearer token (the admin one included).
    const anonymous = createHttpProviderClient({ baseUrl: simulator.baseUrl, tls: { caFile: simulator.pki.caFile } });
    expectRejected(await anonymous.getAsset(assetId), 'ClientCertificateRequired', 401);
    const adminTokenAsRuntime = createHttpProviderAdminClient({
      baseUrl: simulator.baseUrl,
      token: simulator.adminToken ?? '',
      tls: { caFile: simulator.pki.caFile },
    });
    expectRejected(await adminTokenAsRuntime.getFaults(), 'NotFound', 404);
    expectRejected(await client.getOperation(uniqueId('missing')), 'NotFound', 404);
  });

  it('recovers a lost response by lookup: the effect happened exactly once', async () => {
    const assetId = uniqueId('dev-lost');
    unwrap(await admin.setFaults({ loseResponses: 1 }));
    const request = { id: uniqueId('op'), assetId, bindingId: 'b1', epoch: 1, fencingToken: 1, imageDigest: DIGEST_A };
    const lost = await client.install(request);
    expect(lost).toMatchObject({ type: 'unknown', reason: 'connection-lost' });

    const looked = await client.getOperation(request.id);
    expect(looked).toMatchObject({ type: 'result', value: { id: request.id, state: 'Succeeded' } });
    expect(await resolveSubmission(client, { ...request, kind: 'install' })).toEqual(looked);
    // Re-sending the identical request under the same id is a replay, not new work.
    expect(expectResult(await client.install(request)).replayed).toBe(true);

    const operations = unwrap(await admin.listOperations({ assetId }));
    expect(operations.items.map((operation) => operation.id)).toEqual([request.id]);
    expect(unwrap(await client.getAsset(assetId)).effectCount).toBe(1);
    const faults = unwrap(await admin.getFaults());
    expect(faults.faults.loseResponses).toBe(0);
    const log = unwrap(await admin.getLog({ limit: 20 }));
    const entry = log.items.find((item) => item.operationId === request.id && item.event === 'submitted');
    expect(entry).toMatchObject({ result: 'Succeeded', faultsApplied: ['loseResponses'], epoch: 1, assetId });
  });

  it('fails the next N matching operations, then recovers', async () => {
    const assetId = uniqueId('dev-fail');
    const otherAsset = uniqueId('dev-other');
    unwrap(await admin.setFaults({ failOperations: { count: 2, kind: 'power', assetId } }));
    const base = { assetId, bindingId: 'b1', epoch: 1, fencingToken: 1 };
    // Not matching: another kind, another asset.
    expect(expectResult(await client.install({ ...base, id: uniqueId('op'), imageDigest: DIGEST_A })).operation.state).toBe('Succeeded');
    expect(expectResult(await client.power({ ...base, assetId: otherAsset, id: uniqueId('op'), power: 'on' })).operation.state).toBe('Succeeded');

    const failed = [];
    for (let index = 0; index < 2; index++) {
      failed.push(expectResult(await client.power({ ...base, id: uniqueId('op'), power: 'off' })).operation);
    }
    for (const operation of failed) expect(operation).toMatchObject({ state: 'Failed', error: { code: 'InjectedFailure' } });
    expect(unwrap(await client.getAsset(assetId))).toMatchObject({ power: 'on', effectCount: 1 });

    const third = expectResult(await client.power({ ...base, id: uniqueId('op'), power: 'off' })).operation;
    expect(third.state).toBe('Succeeded');
    expect(unwrap(await client.getAsset(assetId))).toMatchObject({ power: 'off', effectCount: 2 });
    expect(unwrap(await admin.getFaults()).faults.failOperations).toBeNull();
    const log = unwrap(await admin.getLog({ limit: 50 }));
    const consumed = log.items.filter((entry) => entry.faultsApplied?.includes('failOperations'));
    expect(consumed.map((entry) => entry.operationId)).toEqual(failed.map((operation) => operation.id));
  });

  it('fails cleanup for listed assets without closing the epoch; a retry succeeds once cleared', async () => {
    const assetId = uniqueId('dev-dirty');
    const base = { assetId, bindingId: 'b1', epoch: 1, fencingToken: 1 };
    expectResult(await client.install({ ...base, id: uniqueId('op'), imageDigest: DIGEST_A }));
    unwrap(await admin.setFaults({ cleanupFailAssets: [assetId] }));
    const failed = expectResult(await client.cleanup({ ...base, id: uniqueId('op') })).operation;
    expect(failed).toMatchObject({ state: 'Failed', error: { code: 'CleanupFailed' } });
    expect(unwrap(await client.getAsset(assetId))).toMatchObject({ closedThroughEpoch: 0, installedImageDigest: DIGEST_A });

    unwrap(await admin.setFaults({ cleanupFailAssets: [] }));
    const retried = expectResult(await client.cleanup({ ...base, id: uniqueId('op') })).operation;
    expect(retried.state).toBe('Succeeded');
    expect(unwrap(await client.getAsset(assetId))).toMatchObject({ closedThroughEpoch: 1, installedImageDigest: null });
  });

  it('adds latency; a deadline shorter than it gives an unknown outcome resolved by lookup', async () => {
    const assetId = uniqueId('dev-slow');
    unwrap(await admin.setFaults({ latencyMs: 400 }));
    const started = performance.now();
    const health = await client.health();
    expect(health.type).toBe('result');
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);

    const request = { id: uniqueId('op'), assetId, bindingId: 'b1', epoch: 1, fencingToken: 1, power: 'on' as const };
    expect(await client.power(request, { timeoutMs: 100 })).toMatchObject({ type: 'unknown', reason: 'timeout' });
    unwrap(await admin.setFaults({ latencyMs: 0 }));
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect(await client.getOperation(request.id)).toMatchObject({ type: 'result', value: { state: 'Succeeded' } });
  });

  it('makes the runtime unavailable (503 or reset) while the admin API keeps working, and expires', async () => {
    const assetId = uniqueId('dev-down');
    const request = { id: uniqueId('op'), assetId, bindingId: 'b1', epoch: 1, fencingToken: 1, power: 'on' as const };
    unwrap(await admin.setFaults({ unavailable: { mode: 'reject' } }));
    expect(await client.power(request)).toMatchObject({ type: 'unknown', reason: 'unavailable', status: 503 });
    expect(await client.health()).toMatchObject({ type: 'unknown', reason: 'unavailable' });

    unwrap(await admin.setFaults({ unavailable: { mode: 'reset' } }));
    expect(await client.power(request)).toMatchObject({ type: 'unknown', reason: 'connection-lost' });
    const view = unwrap(await admin.getFaults());
    expect(view.stats.refusedRequests).toBeGreaterThanOrEqual(3);
    // Nothing was applied while refused.
    expectRejected(await admin.getOperation(request.id), 'NotFound', 404);

    unwrap(await admin.setFaults({ unavailable: { mode: 'reject', durationMs: 300 } }));
    expect(await client.power(request)).toMatchObject({ type: 'unknown', reason: 'unavailable' });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(expectResult(await client.power(request)).operation.state).toBe('Succeeded');
    const log = unwrap(await admin.getLog({ limit: 30 }));
    expect(log.items.some((entry) => entry.type === 'fault' && entry.fault === 'unavailable' && entry.event === 'expired')).toBe(true);
  });

  it('hangs requests until cleared, then resets them unprocessed', async () => {
    const assetId = uniqueId('dev-hang');
    unwrap(await admin.setFaults({ hang: true }));
    const request = { id: uniqueId('op'), assetId, bindingId: 'b1', epoch: 1, fencingToken: 1, power: 'on' as const };
    const pending = client.power(request, { timeoutMs: 10_000 });
    expect(await client.getAsset(assetId, { timeoutMs: 300 })).toMatchObject({ type: 'unknown', reason: 'timeout' });
    await expect.poll(async () => unwrap(await admin.getFaults()).stats.heldRequests).toBeGreaterThanOrEqual(1);
    unwrap(await admin.setFaults({ hang: false }));
    expect(await pending).toMatchObject({ type: 'unknown', reason: 'connection-lost' });
    expectRejected(await client.getOperation(request.id), 'NotFound', 404);
    expect(unwrap(await admin.getFaults()).stats.heldRequests).toBe(0);
    // Resolution: not found, so the identical request is re-sent under the same id.
    expect(await resolveSubmission(client, { ...request, kind: 'power' })).toMatchObject({ type: 'result', value: { id: request.id, state: 'Succeeded' } });
    expect(unwrap(await client.getAsset(assetId)).effectCount).toBe(1);
  });

  it('serves the admin API on its own listener, where a workload certificate is no credential', async () => {
    const runtimeAsAdmin = createHttpProviderAdminClient({ baseUrl: simulator.adminUrl ?? '', tls: simulator.clientTls('worker') });
    expectRejected(await runtimeAsAdmin.getFaults(), 'Unauthorized', 401);
    expectRejected(await runtimeAsAdmin.setFaults({ loseResponses: 1 }), 'Unauthorized', 401);
    expectRejected(await runtimeAsAdmin.listOperations(), 'Unauthorized', 401);
    expect(unwrap(await admin.getFaults()).faults.loseResponses).toBe(0);
  });

  it('validates fault patches and streams the log live', async () => {
    const invalid = await admin.setFaults({ loseResponses: -1 });
    expect(invalid).toMatchObject({ type: 'rejected', error: { status: 400, field: 'loseResponses' } });
    const unknownKey = await admin.setFaults({ explode: true } as never);
    expect(unknownKey).toMatchObject({ type: 'rejected', error: { status: 400, field: 'explode' } });

    const controller = new AbortController();
    const assetId = uniqueId('dev-stream');
    const received: string[] = [];
    const reading = (async () => {
      for await (const entry of admin.streamLog({ afterSeq: unwrap(await admin.getLog({ limit: 1 })).lastSeq, signal: controller.signal })) {
        if (entry.assetId === assetId && entry.event === 'submitted') {
          received.push(entry.operationId ?? '');
          controller.abort();
        }
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const id = uniqueId('op');
    expectResult(await client.power({ id, assetId, bindingId: 'b1', epoch: 1, fencingToken: 1, power: 'on' }));
    await reading;
    expect(received).toEqual([id]);
  });
});

// Each test below owns its simulator processes, so they run concurrently (process start-up dominates their time).
describe.concurrent('simulator durability and lifecycle', () => {
  it('keeps every acknowledged operation across kill -9 during a concurrent burst', async ({ expect }) => {
    const stateFile = await tempStateFile();
    const simulator = await start({ stateFile, adminToken: randomToken('admin') });
    const { client } = clientsFor(simulator);
    const acknowledged = new Map<string, OperationRecord>();
    let killed = false;
    let sent = 0;

    const worker = async (index: number) => {
      const assetId = `dev-burst-${index}`;
      for (let step = 0; !killed && step < 10_000; step++) {
        sent++;
        const id = `burst-${index}-${step}`;
        const outcome = await client.power(
          { id, assetId, bindingId: `b-${index}`, epoch: 1, fencingToken: 1, power: step % 2 ? 'off' : 'on' },
          { timeoutMs: 3_000 },
        );
        if (outcome.type === 'result') acknowledged.set(id, outcome.value.operation);
        else if (outcome.type === 'rejected') throw new Error(`unexpected rejection ${JSON.stringify(outcome)}`);
        else break;
      }
    };
    const workers = Array.from({ length: 32 }, (_, index) => worker(index));
    await expect.poll(() => acknowledged.size, { timeout: 15_000, interval: 5 }).toBeGreaterThanOrEqual(300);
    // Kill while the 32 clients are still sending; they stop once the kill has landed.
    const exited = simulator.kill('SIGKILL');
    const status = await exited;
    killed = true;
    await Promise.all(workers);
    expect(status.signal).toBe('SIGKILL');
    // Requests in flight at the kill are unacknowledged (usually some; on a slow machine the
    // kill can land between requests, so this is not a strict inequality).
    expect(sent).toBeGreaterThanOrEqual(acknowledged.size);

    // The file on disk is valid, complete JSON of the current schema.
    const document = JSON.parse(await readFile(stateFile, 'utf8'));
    const state = stateFromDocument(stateFile, document);
    for (const [id, record] of acknowledged) expect(state.operations.get(id)?.state, id).toBe(record.state);

    const restarted = await start({ stateFile, adminToken: randomToken('admin') });
    const { client: after, admin } = clientsFor(restarted);
    const missing: string[] = [];
    await Promise.all(
      [...acknowledged.keys()].map(async (id) => {
        const outcome = await after.getOperation(id);
        if (outcome.type !== 'result' || outcome.value.state !== acknowledged.get(id)?.state) missing.push(id);
      }),
    );
    expect(missing).toEqual([]);
    // Each asset's effect count equals its succeeded operations: nothing applied twice, nothing half-applied
    // (retention keeps every record of an open epoch, and each burst asset stays in epoch 1).
    for (let index = 0; index < 32; index++) {
      const assetId = `dev-burst-${index}`;
      const succeeded = [...state.operations.values()].filter((operation) => operation.assetId === assetId && operation.state === 'Succeeded');
      expect(state.assets.get(assetId)?.effectCount ?? 0).toBe(succeeded.length);
      if (succeeded.length > 0) expect(unwrap(await after.getAsset(assetId)).effectCount).toBe(succeeded.length);
    }
    expect(unwrap(await admin.getStats()).operations).toBe(state.operations.size);
  });

  it('completes operations after SIMULATOR_OPERATION_MS, durably across a restart, and fences delayed work', async ({ expect }) => {
    const stateFile = await tempStateFile();
    const options = { stateFile, adminToken: randomToken('admin'), env: { SIMULATOR_OPERATION_MS: '600' } };
    const simulator = await start(options);
    const { client } = clientsFor(simulator);

    const power = expectResult(await client.power({ id: 'slow-power', assetId: 'dev-slow-1', bindingId: 'b1', epoch: 1, fencingToken: 1, power: 'on' }));
    expect(power.operation.state).toBe('Running');
    expect(power.operation.completesAt).toBeDefined();
    expect(unwrap(await client.getOperation('slow-power')).state).toBe('Running');
    expect(unwrap(await client.getAsset('dev-slow-1')).power).toBe('off');

    // Delayed work of a released binding: the install is still running when cleanup closes its epoch.
    expectResult(await client.install({ id: 'slow-install', assetId: 'dev-slow-2', bindingId: 'b1', epoch: 1, fencingToken: 1, imageDigest: DIGEST_A }));
    expectResult(await client.cleanup({ id: 'slow-cleanup', assetId: 'dev-slow-2', bindingId: 'b1', epoch: 1, fencingToken: 1 }));

    // Crash before anything completes; come back after the completion times.
    await simulator.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 700));
    const restarted = await start(options);
    const { client: after } = clientsFor(restarted);

    const finished = unwrap(await after.getOperation('slow-power'));
    expect(finished).toMatchObject({ state: 'Succeeded', completedAt: power.operation.completesAt });
    expect(unwrap(await after.getAsset('dev-slow-1'))).toMatchObject({ power: 'on', effectCount: 1 });

    expect(unwrap(await after.getOperation('slow-install'))).toMatchObject({ state: 'Failed', error: { code: 'StaleEpoch' } });
    expect(unwrap(await after.getOperation('slow-cleanup')).state).toBe('Succeeded');
    expect(unwrap(await after.getAsset('dev-slow-2'))).toMatchObject({ installedImageDigest: null, closedThroughEpoch: 1, effectCount: 1 });

    // And while the process stays up, Running turns into Succeeded on time.
    const live = expectResult(await after.power({ id: 'live-power', assetId: 'dev-slow-3', bindingId: 'b1', epoch: 1, fencingToken: 1, power: 'on' }));
    expect(live.operation.state).toBe('Running');
    await expect.poll(async () => unwrap(await after.getOperation('live-power')).state, { timeout: 3_000, interval: 50 }).toBe('Succeeded');
  });

  it('crashes on the crash fault right after answering, and comes back without it', async ({ expect }) => {
    const stateFile = await tempStateFile();
    const options = { stateFile, adminToken: randomToken('admin') };
    const simulator = await start(options);
    const { client, admin } = clientsFor(simulator);
    unwrap(await admin.setFaults({ crash: 'nextOperation' }));
    const answered = expectResult(await client.power({ id: 'crash-op', assetId: 'dev-crash', bindingId: 'b1', epoch: 1, fencingToken: 1, power: 'on' }));
    expect(answered.operation.state).toBe('Succeeded');
    expect((await simulator.exited).code).toBe(EXIT_CRASH_FAULT);

    const restarted = await start(options);
    const { client: after, admin: adminAfter } = clientsFor(restarted);
    expect(unwrap(await after.getOperation('crash-op')).state).toBe('Succeeded');
    expect(unwrap(await adminAfter.getFaults()).faults.crashOnNextOperation).toBe(false);
    const log = unwrap(await adminAfter.getLog({ limit: 10 }));
    expect(log.items.find((entry) => entry.operationId === 'crash-op')?.faultsApplied).toEqual(['crash']);

    unwrap(await adminAfter.setFaults({ crash: 'now' }));
    expect((await restarted.exited).code).toBe(EXIT_CRASH_FAULT);
  });

  it('refuses to start on a corrupt state file or an unknown schema version, naming the file', async ({ expect }) => {
    const corrupt = await tempStateFile();
    const { mkdir } = await import('node:fs/promises');
    await mkdir(path.dirname(corrupt), { recursive: true });
    await writeFile(corrupt, '{"schemaVersion":1,"assets":[');
    const env = { SIMULATOR_PORT: '0', SIMULATOR_ADMIN_PORT: '0', ...(await standaloneTlsEnv()) };
    const [first, second] = await Promise.all([
      runSimulatorUntilExit({ ...env, SIMULATOR_STATE_FILE: corrupt }),
      (async () => {
        const future = await tempStateFile();
        await mkdir(path.dirname(future), { recursive: true });
        await writeFile(future, JSON.stringify({ schemaVersion: 99, assets: [], operations: [], faults: {}, log: [] }));
        return { ...(await runSimulatorUntilExit({ ...env, SIMULATOR_STATE_FILE: future })), future };
      })(),
    ]);
    expect(first.code).toBe(EXIT_CONFIG);
    expect(first.output).toContain(corrupt);
    expect(first.output).toMatch(/corrupt/);
    expect(await readFile(corrupt, 'utf8')).toBe('{"schemaVersion":1,"assets":['); // never overwritten

    expect(second.code).toBe(EXIT_CONFIG);
    expect(second.output).toContain(second.future);
    expect(second.output).toMatch(new RegExp(`schemaVersion 99, newer than this simulator's ${STATE_SCHEMA_VERSION}`));
  });

  it('refuses to start without its TLS files or with an invalid variable, naming it', async ({ expect }) => {
    const stateFile = await tempStateFile();
    const [noToken, badPort] = await Promise.all([
      runSimulatorUntilExit({ SIMULATOR_STATE_FILE: stateFile }),
      runSimulatorUntilExit({ SIMULATOR_STATE_FILE: stateFile, ...(await standaloneTlsEnv()), SIMULATOR_PORT: 'eighty' }),
    ]);
    expect(noToken.code).toBe(EXIT_CONFIG);
    expect(noToken.output).toMatch(/SIMULATOR_TLS_CERT_FILE is required/);
    expect(badPort.code).toBe(EXIT_CONFIG);
    expect(badPort.output).toMatch(/SIMULATOR_PORT/);
  });

  it('keeps the admin API off (404) unless configured, and stops gracefully on SIGTERM', async ({ expect }) => {
    const withoutAdmin = await start({ stateFile: await tempStateFile() });
    expect(withoutAdmin.adminUrl).toBeNull();
    expect(withoutAdmin.output()).toMatch(/"adminPort":null/);
    for (const token of [undefined, 'anything-at-all-here']) {
      const probe = createHttpProviderAdminClient({ baseUrl: withoutAdmin.baseUrl, token, tls: withoutAdmin.clientTls('worker') });
      expectRejected(await probe.getFaults(), 'NotFound', 404);
    }
    // A graceful stop exits 0.
    expect(await withoutAdmin.kill('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
