/**
 * The provider's mutual TLS, against the real simulator process: the certificate matrix (valid,
 * expired, another CA, another trust domain, none, rotated mid-run on either side), the refusals'
 * codes and their audit entries, and connection reuse (one handshake for many calls).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, describeCertificate, issueCertificate, meridianSpiffeId, writeFileAtomic, type PemPair } from '../lib/workload-pki';
import { startProviderPki } from '../bin/lib/provider-pki';
import { createHttpProviderAdminClient, createHttpProviderClient, unwrap, type ProviderAdminClient, type ProviderClient } from '../server/provider';
import { makeTempDir, randomToken, spawnSimulator, TEST_SITE, type SpawnedSimulator } from './spawn-simulator';

const DIGEST = `sha256:${'c'.repeat(64)}`;
const HOUR = 3600_000;

let temp: { dir: string; remove(): Promise<void> };
let simulator: SpawnedSimulator;
let admin: ProviderAdminClient;
const clients: ProviderClient[] = [];

beforeAll(async () => {
  temp = await makeTempDir('meridian-mtls-');
  simulator = await spawnSimulator({ stateFile: path.join(temp.dir, 'state.json'), adminToken: randomToken('admin') });
  admin = createHttpProviderAdminClient({ baseUrl: simulator.adminUrl ?? '', token: simulator.adminToken ?? '', tls: { caFile: simulator.pki.caFile } });
}, 60_000);

afterAll(async () => {
  for (const client of clients) client.close?.();
  await simulator?.kill('SIGTERM');
  await temp?.remove();
});

let n = 0;
/** Writes `pair` under a fresh name and returns a runtime client presenting it. */
function clientWith(pair: PemPair, caFile = simulator.pki.caFile): { client: ProviderClient; certFile: string; keyFile: string } {
  const name = `client-${++n}`;
  const certFile = path.join(temp.dir, `${name}.crt`);
  const keyFile = path.join(temp.dir, `${name}.key`);
  writeFileAtomic(keyFile, pair.key);
  writeFileAtomic(certFile, pair.cert);
  const client = createHttpProviderClient({ baseUrl: simulator.baseUrl, tls: { caFile, certFile, keyFile }, timeoutMs: 5_000 });
  clients.push(client);
  return { client, certFile, keyFile };
}

const workload = (options: { ca?: PemPair; trustDomain?: string; site?: string; role?: string; validMs?: number; notBefore?: Date; spiffe?: boolean }) =>
  issueCertificate({
    ca: options.ca ?? simulator.pki.ca,
    commonName: 'test-workload',
    ...(options.spiffe === false
      ? {}
      : { spiffeId: meridianSpiffeId(options.trustDomain ?? simulator.pki.trustDomain, options.site ?? TEST_SITE, options.role ?? 'worker') }),
    usage: 'client',
    validMs: options.validMs ?? HOUR,
    ...(options.notBefore ? { notBefore: options.notBefore } : {}),
  });

const install = (client: ProviderClient, assetId: string, id = `op-${assetId}`) =>
  client.install({ id, assetId, bindingId: `b-${assetId}`, epoch: 1, fencingToken: 1, imageDigest: DIGEST });

describe('certificate matrix', () => {
  it('a valid workload certificate of the trust domain is served, and the operation records who drove it', async () => {
    const { client } = clientWith(await workload({}));
    const outcome = await install(client, 'dev-mtls-valid');
    expect(outcome).toMatchObject({
      type: 'result',
      value: { operation: { state: 'Succeeded', caller: meridianSpiffeId('meridian.test', 'test', 'worker') } },
    });
  });

  it.each([
    ['no certificate', 'ClientCertificateRequired', 401, /client certificate is required/],
    ['an expired certificate', 'ClientCertificateRejected', 401, /expired \(CERT_HAS_EXPIRED\)/],
    ['a certificate of another CA', 'ClientCertificateRejected', 401, /not issued by a CA this provider trusts/],
    ['a SPIFFE ID of another trust domain', 'UntrustedIdentity', 403, /trust domain elsewhere\.example; this provider accepts meridian\.test only/],
    ['a certificate without a SPIFFE ID', 'ClientCertificateRejected', 401, /exactly one SPIFFE ID/],
  ] as const)('%s is refused (%s), nothing happens, and the refusal is audited', async (what, code, status, message) => {
    const assetId = `dev-mtls-${code}-${n}`;
    let client: ProviderClient;
    if (what === 'no certificate') {
      client = createHttpProviderClient({ baseUrl: simulator.baseUrl, tls: { caFile: simulator.pki.caFile } });
      clients.push(client);
    } else if (what === 'an expired certificate') {
      client = clientWith(await workload({ notBefore: new Date(Date.now() - 3 * HOUR), validMs: HOUR })).client;
    } else if (what === 'a certificate of another CA') {
      const otherCa = await createCa({ name: 'someone else', validMs: HOUR });
      client = clientWith(await workload({ ca: otherCa })).client;
    } else if (what === 'a SPIFFE ID of another trust domain') {
      client = clientWith(await workload({ trustDomain: 'elsewhere.example' })).client;
    } else {
      client = clientWith(await workload({ spiffe: false })).client;
    }
    const before = unwrap(await admin.getLog({ limit: 1 })).lastSeq;
    const outcome = await install(client, assetId);
    expect(outcome).toMatchObject({ type: 'rejected', error: { code, status } });
    if (outcome.type === 'rejected') expect(outcome.error.message).toMatch(message);
    // Nothing happened: the asset was never created, no operation exists.
    expect(await admin.getAsset(assetId)).toMatchObject({ type: 'rejected', error: { code: 'NotFound' } });
    expect(unwrap(await admin.listOperations({ assetId })).total).toBe(0);
    // Audited in the simulator's durable log, with the reason (and the identity when there was one).
    const entries = unwrap(await admin.getLog({ afterSeq: before, limit: 100 })).items.filter((e) => e.type === 'access');
    expect(entries).toContainEqual(expect.objectContaining({ event: 'refused', errorCode: code, detail: expect.stringMatching(message) }));
    if (what === 'a SPIFFE ID of another trust domain') {
      expect(entries).toContainEqual(expect.objectContaining({ identity: 'spiffe://elsewhere.example/meridian/test/worker' }));
    }
  });

  it('the simulator serves only TLS: a plain HTTP request gets no answer', async () => {
    const plain = createHttpProviderClient({ baseUrl: simulator.baseUrl.replace('https:', 'http:'), timeoutMs: 2_000 });
    clients.push(plain);
    expect(await plain.getAsset('anything')).toMatchObject({ type: 'unknown' });
  });

  it('a client certificate rotated mid-run is picked up without a restart; connections are reused, not made per call', async () => {
    const first = await workload({ role: 'worker' });
    const { client, certFile, keyFile } = clientWith(first);
    for (let i = 0; i < 20; i++) expect((await client.getAsset('dev-mtls-valid')).type).toBe('result');
    expect(client.transportStats?.()).toEqual({ connections: 1, reloads: 0 });

    // The same identity, a new certificate (a renewal): the next calls present it.
    const renewed = await workload({ role: 'worker' });
    writeFileAtomic(keyFile, renewed.key);
    writeFileAtomic(certFile, renewed.cert);
    await expect.poll(() => client.transportStats?.().reloads, { timeout: 10_000 }).toBe(1);
    expect(await install(client, 'dev-mtls-rotated')).toMatchObject({ type: 'result' });

    // Rotated to a certificate of another trust domain: refused from then on, so the new file is what is presented.
    const foreign = await workload({ trustDomain: 'elsewhere.example' });
    writeFileAtomic(keyFile, foreign.key);
    writeFileAtomic(certFile, foreign.cert);
    await expect.poll(() => client.transportStats?.().reloads, { timeout: 10_000 }).toBe(2);
    expect(await client.getAsset('dev-mtls-valid')).toMatchObject({ type: 'rejected', error: { code: 'UntrustedIdentity' } });
  });

  it("the simulator's trust bundle rotated mid-run: certificates of the new CA are accepted, the old CA's refused", async () => {
    const oldClient = clientWith(await workload({})).client;
    expect((await oldClient.getAsset('dev-mtls-valid')).type).toBe('result');
    const newCa = await createCa({ name: 'rotated CA', validMs: HOUR });
    const serving = await issueCertificate({ ca: newCa, commonName: 'simulator', hostnames: ['127.0.0.1', 'localhost'], usage: 'server', validMs: HOUR });
    const bundle = path.join(temp.dir, 'new-ca.crt');
    writeFileAtomic(bundle, newCa.cert);
    // The simulator's files: serving pair and client trust bundle all move to the new CA.
    writeFileAtomic(simulator.pki.server.keyFile, serving.key);
    writeFileAtomic(simulator.pki.server.certFile, serving.cert);
    writeFileAtomic(simulator.pki.caFile, newCa.cert);
    const newClient = clientWith(await workload({ ca: newCa }), bundle).client;
    // Re-read within the watch interval; the install is idempotent under its id, so it may be repeated until then.
    await expect.poll(async () => (await install(newClient, 'dev-mtls-new-ca')).type, { timeout: 15_000, interval: 500 }).toBe('result');
    expect(simulator.output()).toContain('TLS material reloaded');
    const stale = clientWith(await workload({}), bundle).client;
    expect(await stale.getAsset('dev-mtls-valid')).toMatchObject({ type: 'rejected', error: { code: 'ClientCertificateRejected' } });
  });
});

describe("npm start's provider PKI", () => {
  it('issues SPIFFE workload certificates and renews those with a third of their lifetime left, keeping the CA', async () => {
    const dataDir = path.join(temp.dir, 'data');
    const lines: string[] = [];
    const pki = await startProviderPki({ dataDir, trustDomain: 'meridian.local', site: 'ams', ttlMinutes: 60, log: (l) => lines.push(l) });
    try {
      const worker = describeCertificate(readFileSync(pki.worker.certFile));
      expect(worker.spiffeIds).toEqual(['spiffe://meridian.local/meridian/ams/worker']);
      expect(describeCertificate(readFileSync(pki.web.certFile)).spiffeIds).toEqual(['spiffe://meridian.local/meridian/ams/web']);
      expect(worker.notAfter.getTime() - Date.now()).toBeLessThanOrEqual(60 * 60_000);
      expect(await pki.renewDue()).toEqual([]);

      // The worker's certificate nearly expired (10 of 60 minutes left): renewed, by the same CA.
      const ca = { cert: readFileSync(pki.caFile, 'utf8'), key: readFileSync(path.join(dataDir, 'provider-pki', 'ca.key'), 'utf8') };
      const old = await issueCertificate({
        ca,
        commonName: 'meridian-worker',
        spiffeId: 'spiffe://meridian.local/meridian/ams/worker',
        usage: 'client',
        validMs: 60 * 60_000,
        notBefore: new Date(Date.now() - 50 * 60_000),
      });
      writeFileAtomic(pki.worker.keyFile, old.key);
      writeFileAtomic(pki.worker.certFile, old.cert);
      expect(await pki.renewDue()).toEqual(['worker']);
      expect(describeCertificate(readFileSync(pki.worker.certFile)).notAfter.getTime() - Date.now()).toBeGreaterThan(55 * 60_000);
      expect(readFileSync(pki.caFile, 'utf8')).toBe(ca.cert);
    } finally {
      pki.stop();
    }
    // A second start reuses the CA.
    const again = await startProviderPki({ dataDir, trustDomain: 'meridian.local', site: 'ams', ttlMinutes: 60, log: () => {} });
    again.stop();
    expect(readFileSync(again.caFile, 'utf8')).toBe(readFileSync(pki.caFile, 'utf8'));
  });
});
