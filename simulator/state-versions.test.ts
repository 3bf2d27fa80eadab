/**
 * The simulator's state file across versions, against the real process: every older version kept as
 * a fixture (simulator/fixtures/state-v<N>.json, written by that version) is migrated at start and
 * every retained operation is answered identically (lookup and idempotent replay); a newer file is
 * refused with its version named; `--backup` and `--restore` round-trip the state.
 */
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpProviderAdminClient, createHttpProviderClient, unwrap, type OperationRecord, type OperationRequest } from '../server/provider';
import { EXIT_CONFIG } from './config';
import { ensureTestPki, makeTempDir, randomToken, runSimulatorUntilExit, simulatorTlsEnv, spawnSimulator, type TestPki } from './spawn-simulator';
import { STATE_SCHEMA_VERSION, StateFileSchema } from './state';

const fixtures = path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures');
/** Start-up deadline of each simulator process: generous, since a loaded CI machine starts tsx slowly. */
const START_MS = 60_000;
let temp: { dir: string; remove(): Promise<void> };
let pki: TestPki;

beforeAll(async () => {
  temp = await makeTempDir('meridian-state-versions-');
  pki = await ensureTestPki(path.join(temp.dir, 'pki'));
});
afterAll(() => temp?.remove());

function requestOf(op: OperationRecord): OperationRequest {
  const base = { id: op.id, assetId: op.assetId, bindingId: op.bindingId, epoch: op.epoch, fencingToken: op.fencingToken };
  if (op.kind === 'install') return { ...base, kind: 'install', imageDigest: op.imageDigest ?? '' };
  if (op.kind === 'power') return { ...base, kind: 'power', power: op.power ?? 'on' };
  return { ...base, kind: 'cleanup' };
}

describe('state file versions', { timeout: 240_000 }, () => {
  it('keeps a fixture of every older version', async () => {
    const versions = (await readdir(fixtures))
      .map((f) => /^state-v(\d+)\.json$/.exec(f)?.[1])
      .filter(Boolean)
      .map(Number);
    expect(versions.sort()).toEqual(Array.from({ length: STATE_SCHEMA_VERSION - 1 }, (_, i) => i + 1));
  });

  it.each(Array.from({ length: STATE_SCHEMA_VERSION - 1 }, (_, i) => i + 1))(
    'a version %i file is migrated at start; every retained operation is answered identically',
    async (version) => {
      const fixture = path.join(fixtures, `state-v${version}.json`);
      const original = await readFile(fixture, 'utf8');
      const retained = (JSON.parse(original) as { operations: OperationRecord[] }).operations;
      expect(retained.length).toBeGreaterThan(0);
      const stateFile = path.join(temp.dir, `v${version}`, 'state.json');
      await mkdir(path.dirname(stateFile), { recursive: true });
      await copyFile(fixture, stateFile);
      const simulator = await spawnSimulator({ stateFile, pkiDir: pki.dir, adminToken: randomToken('admin'), startTimeoutMs: START_MS });
      const client = createHttpProviderClient({ baseUrl: simulator.baseUrl, tls: simulator.clientTls('worker') });
      try {
        expect(simulator.output()).toMatch(new RegExp(`"msg":"state migrated".*"from":${version},"to":${STATE_SCHEMA_VERSION}`));
        for (const op of retained) {
          expect(unwrap(await client.getOperation(op.id))).toEqual(op);
          // An identical request under the id is a replay of the retained record: no new effect.
          expect(unwrap(await client.submit(requestOf(op)))).toEqual({ operation: op, replayed: true });
        }
        const admin = createHttpProviderAdminClient({ baseUrl: simulator.adminUrl ?? '', token: simulator.adminToken ?? '', tls: { caFile: pki.caFile } });
        for (const asset of unwrap(await admin.listAssets({ limit: 100 })).items) {
          const before = (JSON.parse(original) as { assets: { id: string; effectCount: number }[] }).assets.find((a) => a.id === asset.id);
          expect(asset.effectCount).toBe(before?.effectCount);
        }
      } finally {
        client.close?.();
        await simulator.kill('SIGTERM');
      }
      // Written back in the current version; the old file kept as it was.
      const migrated = StateFileSchema.parse(JSON.parse(await readFile(stateFile, 'utf8')));
      expect(migrated.schemaVersion).toBe(STATE_SCHEMA_VERSION);
      expect(await readFile(`${stateFile}.v${version}.bak`, 'utf8')).toBe(original);
    },
  );

  it('refuses a file of a newer version, naming both versions, and leaves it untouched', async () => {
    const stateFile = path.join(temp.dir, 'newer.json');
    const text = JSON.stringify({ schemaVersion: STATE_SCHEMA_VERSION + 1, savedAt: new Date().toISOString(), assets: [], operations: [], log: [] });
    await writeFile(stateFile, text);
    const result = await runSimulatorUntilExit({ SIMULATOR_PORT: '0', SIMULATOR_STATE_FILE: stateFile, ...simulatorTlsEnv(pki) }, START_MS);
    expect(result.code).toBe(EXIT_CONFIG);
    expect(result.output).toContain(`has schemaVersion ${STATE_SCHEMA_VERSION + 1}, newer than this simulator's ${STATE_SCHEMA_VERSION}`);
    expect(await readFile(stateFile, 'utf8')).toBe(text);
  });

  it('--backup copies a loadable state out, --restore puts it back in place of another', async () => {
    const stateFile = path.join(temp.dir, 'live', 'state.json');
    const simulator = await spawnSimulator({ stateFile, pkiDir: pki.dir, startTimeoutMs: START_MS });
    const client = createHttpProviderClient({ baseUrl: simulator.baseUrl, tls: simulator.clientTls('worker') });
    const request = { id: 'backup-op-1', assetId: 'dev-backup-1', bindingId: 'b1', epoch: 1, fencingToken: 1, imageDigest: `sha256:${'f'.repeat(64)}` };
    const record = unwrap(await client.install(request)).operation;
    client.close?.();
    const backup = path.join(temp.dir, 'backup.json');
    const taken = await runSimulatorUntilExit({ SIMULATOR_STATE_FILE: stateFile }, START_MS, ['--backup', backup]);
    expect(taken.code, taken.output).toBe(0);
    expect(taken.output).toContain('backup written');
    await simulator.kill('SIGTERM');

    // Another state in its place, then the backup restored over it.
    const other = await spawnSimulator({ stateFile, pkiDir: pki.dir, startTimeoutMs: START_MS });
    const otherClient = createHttpProviderClient({ baseUrl: other.baseUrl, tls: other.clientTls('worker') });
    unwrap(await otherClient.install({ ...request, id: 'after-backup', assetId: 'dev-backup-2' }));
    otherClient.close?.();
    await other.kill('SIGTERM');
    const restored = await runSimulatorUntilExit({ SIMULATOR_STATE_FILE: stateFile }, START_MS, ['--restore', backup]);
    expect(restored.code, restored.output).toBe(0);
    expect(await readFile(`${stateFile}.before-restore.bak`, 'utf8')).toContain('after-backup');

    const back = await spawnSimulator({ stateFile, pkiDir: pki.dir, startTimeoutMs: START_MS });
    const backClient = createHttpProviderClient({ baseUrl: back.baseUrl, tls: back.clientTls('worker') });
    try {
      expect(unwrap(await backClient.getOperation('backup-op-1'))).toEqual(record);
      expect(await backClient.getOperation('after-backup')).toMatchObject({ type: 'rejected', error: { code: 'NotFound' } });
    } finally {
      backClient.close?.();
      await back.kill('SIGTERM');
    }
    // A file that would not load is neither backed up nor restored.
    const broken = path.join(temp.dir, 'broken.json');
    await writeFile(broken, '{"schemaVersion":2,');
    const refused = await runSimulatorUntilExit({ SIMULATOR_STATE_FILE: stateFile }, START_MS, ['--restore', broken]);
    expect(refused.code).toBe(EXIT_CONFIG);
    expect(refused.output).toContain(broken);
  });
});
