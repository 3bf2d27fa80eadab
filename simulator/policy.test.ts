/**
 * Target-level authorization against the real simulator: the matrix identity × site × operation kind,
 * a refusal changes nothing and is audited, the policy file is re-read when it changes, and a bad
 * policy stops start-up with the file named.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueCertificate, meridianSpiffeId, writeFileAtomic } from '../lib/workload-pki';
import {
  createHttpProviderAdminClient,
  createHttpProviderClient,
  unwrap,
  type OperationKind,
  type ProviderAdminClient,
  type ProviderClient,
} from '../server/provider';
import { EXIT_CONFIG } from './config';
import type { Policy } from './policy';
import { makeTempDir, randomToken, runSimulatorUntilExit, simulatorTlsEnv, spawnSimulator, type SpawnedSimulator } from './spawn-simulator';

const DIGEST = `sha256:${'d'.repeat(64)}`;
const TD = 'meridian.test';

/** Site ams: its worker may do everything there, its web only power; site fra: its worker everything there. */
const policy: Policy = {
  pools: [
    { name: 'ams-rack1', site: 'ams', assets: ['dev-ams-*'] },
    { name: 'fra-rack1', site: 'fra', assets: ['dev-fra-*'] },
  ],
  grants: [
    { identity: meridianSpiffeId(TD, 'ams', 'worker'), sites: ['ams'], pools: ['*'], kinds: ['install', 'power', 'cleanup'] },
    { identity: meridianSpiffeId(TD, 'ams', 'web'), sites: ['ams'], pools: ['ams-rack1'], kinds: ['power'] },
    { identity: `spiffe://${TD}/meridian/fra/*`, sites: ['fra'], pools: ['*'], kinds: ['install', 'power', 'cleanup'] },
  ],
};

let temp: { dir: string; remove(): Promise<void> };
let simulator: SpawnedSimulator;
let admin: ProviderAdminClient;
let policyFile: string;
const clients = new Map<string, ProviderClient>();

async function clientAs(site: string, role: string): Promise<ProviderClient> {
  const key = `${site}/${role}`;
  const known = clients.get(key);
  if (known) return known;
  const pair = await issueCertificate({
    ca: simulator.pki.ca,
    commonName: key,
    spiffeId: meridianSpiffeId(TD, site, role),
    usage: 'client',
    validMs: 3600_000,
  });
  const certFile = path.join(temp.dir, `${site}-${role}.crt`);
  const keyFile = path.join(temp.dir, `${site}-${role}.key`);
  writeFileAtomic(keyFile, pair.key);
  writeFileAtomic(certFile, pair.cert);
  const client = createHttpProviderClient({ baseUrl: simulator.baseUrl, tls: { caFile: simulator.pki.caFile, certFile, keyFile } });
  clients.set(key, client);
  return client;
}

beforeAll(async () => {
  temp = await makeTempDir('meridian-policy-');
  policyFile = path.join(temp.dir, 'policy.json');
  writeFileSync(policyFile, JSON.stringify(policy));
  simulator = await spawnSimulator({
    stateFile: path.join(temp.dir, 'state.json'),
    adminToken: randomToken('admin'),
    env: { SIMULATOR_POLICY_FILE: policyFile },
  });
  admin = createHttpProviderAdminClient({ baseUrl: simulator.adminUrl ?? '', token: simulator.adminToken ?? '', tls: { caFile: simulator.pki.caFile } });
}, 60_000);

afterAll(async () => {
  for (const client of clients.values()) client.close?.();
  await simulator?.kill('SIGTERM');
  await temp?.remove();
});

let n = 0;
function submit(client: ProviderClient, kind: OperationKind, assetId: string) {
  const base = { id: `op-${++n}`, assetId, bindingId: `b-${n}`, epoch: n, fencingToken: 1 };
  if (kind === 'install') return client.install({ ...base, imageDigest: DIGEST });
  if (kind === 'power') return client.power({ ...base, power: 'on' });
  return client.cleanup(base);
}

const allowed: Record<string, Record<string, OperationKind[]>> = {
  'ams/worker': { ams: ['install', 'power', 'cleanup'], fra: [] },
  'ams/web': { ams: ['power'], fra: [] },
  'fra/worker': { ams: [], fra: ['install', 'power', 'cleanup'] },
  'fra/web': { ams: [], fra: ['install', 'power', 'cleanup'] },
};

describe('authorization matrix (identity × site × operation kind)', () => {
  const cases = Object.entries(allowed).flatMap(([identity, sites]) =>
    Object.entries(sites).flatMap(([site, kinds]) =>
      (['install', 'power', 'cleanup'] as const).map((kind) => [identity, site, kind, kinds.includes(kind)] as const),
    ),
  );

  it.each(cases)('%s on a %s asset, %s: allowed %s', async (identity, site, kind, expected) => {
    const [callerSite, role] = identity.split('/');
    const client = await clientAs(callerSite, role);
    const assetId = `dev-${site}-${identity.replace('/', '-')}-${kind}`;
    const before = unwrap(await admin.getLog({ limit: 1 })).lastSeq;
    const outcome = await submit(client, kind, assetId);
    if (expected) {
      expect(outcome).toMatchObject({ type: 'result', value: { operation: { caller: meridianSpiffeId(TD, callerSite, role), kind } } });
      expect(unwrap(await client.getAsset(assetId)).effectCount).toBe(1);
      return;
    }
    expect(outcome).toMatchObject({ type: 'rejected', error: { status: 403, code: 'TargetNotAuthorized' } });
    if (outcome.type === 'rejected') {
      expect(outcome.error.message).toContain(`identity ${meridianSpiffeId(TD, callerSite, role)} may not ${kind} asset ${assetId} (site ${site}`);
    }
    // The effect never happened: no asset, no operation; the refusal is audited with identity and target.
    expect(await admin.getAsset(assetId)).toMatchObject({ type: 'rejected', error: { code: 'NotFound' } });
    expect(unwrap(await admin.listOperations({ assetId })).total).toBe(0);
    const audit = unwrap(await admin.getLog({ afterSeq: before, limit: 50 })).items;
    expect(audit).toContainEqual(
      expect.objectContaining({
        type: 'access',
        event: 'refused',
        errorCode: 'TargetNotAuthorized',
        identity: meridianSpiffeId(TD, callerSite, role),
        assetId,
        kind,
      }),
    );
  });

  it('reads need a grant on the asset too, and an asset in no pool is nobody’s', async () => {
    const amsWorker = await clientAs('ams', 'worker');
    const fraWorker = await clientAs('fra', 'worker');
    const done = unwrap(await submit(amsWorker, 'power', 'dev-ams-read'));
    expect(await fraWorker.getOperation(done.operation.id)).toMatchObject({ type: 'rejected', error: { code: 'TargetNotAuthorized' } });
    expect(await fraWorker.getAsset('dev-ams-read')).toMatchObject({ type: 'rejected', error: { code: 'TargetNotAuthorized' } });
    expect(await submit(amsWorker, 'install', 'dev-lon-1')).toMatchObject({
      type: 'rejected',
      error: { code: 'TargetNotAuthorized', message: expect.stringContaining('in no pool') },
    });
  });

  it('the policy file is re-read when it changes; a broken one leaves the last good one in force', async () => {
    const amsWeb = await clientAs('ams', 'web');
    expect(await submit(amsWeb, 'install', 'dev-ams-reload')).toMatchObject({ type: 'rejected', error: { code: 'TargetNotAuthorized' } });
    const widened: Policy = {
      ...policy,
      grants: policy.grants.map((g) => (g.identity === meridianSpiffeId(TD, 'ams', 'web') ? { ...g, kinds: ['power', 'install'] } : g)),
    };
    writeFileAtomic(policyFile, JSON.stringify(widened));
    await expect.poll(async () => (await submit(amsWeb, 'install', `dev-ams-reload-${n}`)).type, { timeout: 15_000, interval: 300 }).toBe('result');

    writeFileAtomic(policyFile, '{"pools": [');
    await expect.poll(() => simulator.output().includes('authorization policy not reloaded'), { timeout: 15_000 }).toBe(true);
    expect((await submit(amsWeb, 'install', 'dev-ams-after-broken')).type).toBe('result');
  });

  it('refuses to start on an invalid policy file, naming it', async () => {
    const bad = path.join(temp.dir, 'bad-policy.json');
    writeFileSync(bad, JSON.stringify({ pools: [], grants: [{ identity: 'x', sites: ['a'], pools: ['*'], kinds: ['reboot'] }] }));
    const result = await runSimulatorUntilExit({
      SIMULATOR_PORT: '0',
      SIMULATOR_STATE_FILE: path.join(temp.dir, 'other-state.json'),
      SIMULATOR_POLICY_FILE: bad,
      ...simulatorTlsEnv(simulator.pki),
    });
    expect(result.code).toBe(EXIT_CONFIG);
    expect(result.output).toContain(`policy file ${bad} is invalid: grants.0.kinds.0`);
  });
});
