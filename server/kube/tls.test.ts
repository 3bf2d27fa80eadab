import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, expect, inject, test } from 'vitest';
import { kubeKinds } from '@/server/api/kinds';
import { startKubeServer } from '@/test/kube-server';
import { createKubeHttpsServer } from './https';
import { ensureLocalTls, resolveTls } from './tls';

const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), 'meridian-tls-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The serving certificate's fingerprint at `port`, trusting `ca`. */
function servedFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: '/version', ca, agent: false }, (res) => {
      resolve((res.socket as TLSSocket).getPeerCertificate().fingerprint256);
      res.resume();
    });
    req.on('error', reject);
    req.end();
  });
}

test('the local CA is made once under DATA_DIR and reused', async () => {
  const data = path.join(dir, 'reuse');
  const first = await ensureLocalTls(data);
  const cert = readFileSync(first.cert, 'utf8');
  const again = await ensureLocalTls(data);
  expect(readFileSync(again.cert, 'utf8')).toBe(cert);
  expect(readFileSync(first.ca, 'utf8')).toContain('BEGIN CERTIFICATE');
});

test('the key is TLS_PRIVATE_KEY_FILE, or TLS_KEY_FILE, its other name', async () => {
  const base = { DATA_DIR: path.join(dir, 'unused'), HOSTNAME: 'localhost', TLS_CERT_FILE: '/etc/tls/tls.crt' };
  expect((await resolveTls({ ...base, TLS_PRIVATE_KEY_FILE: '/etc/tls/tls.key' })).key).toBe('/etc/tls/tls.key');
  expect((await resolveTls({ ...base, TLS_KEY_FILE: '/etc/tls/old.key' })).key).toBe('/etc/tls/old.key');
});

test('configured certificate files are reloaded when they change on disk', async () => {
  const a = await ensureLocalTls(path.join(dir, 'a'));
  const b = await ensureLocalTls(path.join(dir, 'b'));
  const live = { cert: path.join(dir, 'live.crt'), key: path.join(dir, 'live.key'), ca: a.ca };
  copyFileSync(a.cert, live.cert);
  copyFileSync(a.key, live.key);
  const { server, stopWatching } = createKubeHttpsServer(kubeKinds, live);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    const before = await servedFingerprint(port, readFileSync(a.ca, 'utf8'));
    // A rotation: the new pair replaces the old one's files.
    writeFileSync(live.key, readFileSync(b.key));
    writeFileSync(live.cert, readFileSync(b.cert));
    let after = before;
    for (let i = 0; i < 40 && after === before; i++) {
      await new Promise((r) => setTimeout(r, 250));
      after = await servedFingerprint(port, readFileSync(b.ca, 'utf8')).catch(() => before);
    }
    expect(after).not.toBe(before);
  } finally {
    stopWatching();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('`meridian kubeconfig` writes a kubeconfig that stock kubectl uses with no flags', async () => {
  const kube = await startKubeServer();
  try {
    const tokenFile = path.join(kube.dir, 'token');
    writeFileSync(tokenFile, kube.tokens.viewer + '\n');
    const out = path.join(kube.dir, 'cli.kubeconfig');
    await run(
      process.execPath,
      ['--import', 'tsx', 'bin/meridian.ts', 'kubeconfig', '--project', kube.project.slug, '--token-file', tokenFile, '--server', kube.origin, '--output', out],
      { env: { ...process.env, DATABASE_URL: inject('databaseUrl'), DATA_DIR: path.join(kube.dir, 'data') }, encoding: 'utf8' },
    );
    const text = readFileSync(out, 'utf8');
    expect(text).toContain(`server: ${kube.root}`);
    expect(text).toContain('certificate-authority-data: ');
    const { stdout } = await run('/usr/bin/kubectl', ['get', 'namespaces', '-o', 'name'], {
      env: { ...process.env, KUBECONFIG: out, HOME: kube.dir },
      encoding: 'utf8',
    });
    expect(stdout).toBe('namespace/default\n');
  } finally {
    await kube.stop();
  }
});
