/**
 * Provider simulator throughput with durable writes: `node --import tsx bench/simulator.ts [operations] [concurrency]`.
 *
 * Starts the real simulator process on a temp directory and drives it through the provider client with
 * 32 concurrent clients, each running binding life cycles on its own asset (install → power on → power off
 * → cleanup, then the next epoch). Baseline, in the same run: the same number of fsync'd file writes
 * (write temp + fsync + rename) of a single operation record by a plain loop in this process — what one
 * durable write per operation would cost. Target: simulator ops/s ≥ 0.5 × baseline writes/s.
 *
 * Disks on shared machines change speed minute by minute, so the two are interleaved in rounds (simulator
 * chunk, then baseline chunk) and the totals compared: both see the same conditions.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { createHttpProviderAdminClient, createHttpProviderClient, unwrap, type OperationRequest } from '../server/provider';
import { makeTempDir, randomToken, spawnSimulator, type SpawnedSimulator } from '../simulator/spawn-simulator';

const operations = Number(process.argv[2] ?? 5_000);
const concurrency = Number(process.argv[3] ?? 32);
const warmup = 200;
const rounds = 5;
const digest = `sha256:${'c'.repeat(64)}`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** The request for step `step` of a worker's life cycle on its own asset. */
function lifecycleRequest(worker: number, step: number, prefix: string): OperationRequest {
  const epoch = Math.floor(step / 4) + 1;
  const base = { id: `${prefix}-${worker}-${step}`, assetId: `dev-${prefix}-${worker}`, bindingId: `bind-${worker}-${epoch}`, epoch, fencingToken: 1 };
  switch (step % 4) {
    case 0:
      return { ...base, kind: 'install', imageDigest: digest };
    case 1:
      return { ...base, kind: 'power', power: 'on' };
    case 2:
      return { ...base, kind: 'power', power: 'off' };
    default:
      return { ...base, kind: 'cleanup' };
  }
}

interface SimulatorRun {
  latencies: number[];
  failures: number;
  seconds: number;
  /** Per-worker life-cycle position, carried across rounds. */
  steps: number[];
}

async function runSimulator(simulator: SpawnedSimulator, total: number, prefix: string, run: SimulatorRun): Promise<void> {
  const client = createHttpProviderClient({ baseUrl: simulator.baseUrl, tls: simulator.clientTls('worker'), timeoutMs: 30_000 });
  const { latencies, steps } = run;
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (next < total) {
        next++;
        const request = lifecycleRequest(worker, steps[worker]++, prefix);
        const t0 = performance.now();
        const outcome = await client.submit(request);
        latencies.push(performance.now() - t0);
        if (outcome.type !== 'result' || outcome.value.operation.state !== 'Succeeded') {
          failures++;
          if (failures <= 3) console.error('unexpected outcome', JSON.stringify(outcome));
        }
      }
    }),
  );
  run.seconds += (performance.now() - started) / 1000;
  run.failures += failures;
}

/** Seconds for `total` atomic replacements of a small file by a plain synchronous loop. */
function runBaseline(directory: string, total: number, payload: string, fsyncDirectory: boolean): number {
  mkdirSync(directory, { recursive: true });
  const file = path.join(directory, 'baseline.json');
  const temporary = `${file}.tmp`;
  const directoryFd = fsyncDirectory ? openSync(directory, 'r') : -1;
  const started = performance.now();
  for (let index = 0; index < total; index++) {
    const fd = openSync(temporary, 'w');
    writeSync(fd, payload);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temporary, file);
    if (fsyncDirectory) fsyncSync(directoryFd);
  }
  const seconds = (performance.now() - started) / 1000;
  if (fsyncDirectory) closeSync(directoryFd);
  return seconds;
}

async function main(): Promise<void> {
  const temp = await makeTempDir('meridian-bench-sim-');
  const stateFile = path.join(temp.dir, 'simulator', 'state.json');
  const simulator = await spawnSimulator({ stateFile, adminToken: randomToken('admin') });
  const admin = createHttpProviderAdminClient({ baseUrl: simulator.adminUrl ?? '', token: simulator.adminToken ?? '', tls: { caFile: simulator.pki.caFile } });
  try {
    const newRun = (): SimulatorRun => ({ latencies: [], failures: 0, seconds: 0, steps: new Array<number>(concurrency).fill(0) });
    await runSimulator(simulator, warmup, 'warm', newRun());
    const record = JSON.stringify({
      ...lifecycleRequest(0, 0, 'base'),
      state: 'Succeeded',
      submittedAt: new Date().toISOString(),
      completedAt: new Date().toISOString(),
    });

    const result = newRun();
    let baselineSeconds = 0;
    let baselineWithDirectorySeconds = 0;
    const roundRatios: number[] = [];
    const before = unwrap(await admin.getStats());
    for (let round = 0; round < rounds; round++) {
      const chunk = Math.floor(operations / rounds) + (round < operations % rounds ? 1 : 0);
      const simulatorBefore = result.seconds;
      await runSimulator(simulator, chunk, 'bench', result);
      const baselineRound = runBaseline(path.join(temp.dir, 'baseline'), chunk, record, false);
      baselineSeconds += baselineRound;
      baselineWithDirectorySeconds += runBaseline(path.join(temp.dir, 'baseline-dir'), Math.ceil(chunk / 5), record, true) * 5;
      roundRatios.push(baselineRound / (result.seconds - simulatorBefore));
    }
    const after = unwrap(await admin.getStats());
    const stateBytes = statSync(stateFile).size;
    const writes = after.writes - before.writes;
    const changes = after.changes - before.changes;
    result.latencies.sort((a, b) => a - b);
    const opsPerSecond = operations / result.seconds;
    const baselinePerSecond = operations / baselineSeconds;
    const ratio = opsPerSecond / baselinePerSecond;

    console.log(
      `simulator: ${operations} operations, ${concurrency} concurrent clients, durable group-committed writes (${rounds} rounds interleaved with the baseline)`,
    );
    console.log(`  throughput   ${opsPerSecond.toFixed(0)} ops/s (${result.seconds.toFixed(2)} s), failures ${result.failures}`);
    console.log(`  latency      p50 ${percentile(result.latencies, 50).toFixed(2)} ms, p99 ${percentile(result.latencies, 99).toFixed(2)} ms`);
    console.log(
      `  state writes ${writes} durable writes for ${changes} changes: ${(changes / writes).toFixed(1)} per write (group commit);` +
        ` per write ${((after.totalSerializeMs - before.totalSerializeMs) / writes).toFixed(1)} ms serialize + ${((after.totalWriteMs - before.totalWriteMs) / writes).toFixed(1)} ms write/fsync/rename/dir-fsync`,
    );
    console.log(`  state file   ${(stateBytes / 1024).toFixed(0)} KiB at the end, ${after.operations} operations retained (bounded retention)`);
    console.log(`baseline: ${operations} fsync'd file writes of one ${record.length}-byte record (write temp + fsync + rename), plain loop`);
    console.log(`  throughput   ${baselinePerSecond.toFixed(0)} writes/s (${baselineSeconds.toFixed(2)} s)`);
    console.log(`  + dir fsync  ${(operations / baselineWithDirectorySeconds).toFixed(0)} writes/s (sampled; what the simulator does per write)`);
    console.log(
      `ratio: simulator ops/s ÷ baseline writes/s = ${ratio.toFixed(2)} (target ≥ 0.50) ${ratio >= 0.5 ? 'OK' : 'BELOW TARGET'}; per round ${roundRatios.map((value) => value.toFixed(2)).join(' ')}`,
    );
    if (result.failures > 0) process.exitCode = 1;
  } finally {
    await simulator.kill('SIGTERM');
    await temp.remove();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
