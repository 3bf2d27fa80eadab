import { webcrypto } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, unwatchFile, watchFile, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

/**
 * The Kubernetes API's TLS: the serving certificate and key, either configured (TLS_CERT_FILE,
 * TLS_PRIVATE_KEY_FILE or its other name TLS_KEY_FILE; reloaded when they change on disk) or made once under `DATA_DIR/tls` — a local CA
 * and a certificate it signs for localhost and the loopback addresses — and reused on restart.
 * The CA is what a kubeconfig carries (`certificate-authority-data`).
 */

x509.cryptoProvider.set(webcrypto as Crypto);

export interface TlsFiles {
  cert: string;
  key: string;
  /** The CA a client trusts for this certificate. */
  ca: string;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

async function pemKey(key: CryptoKey) {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

/** The local CA's files under `dir` (made the first time). */
export function localTlsFiles(dataDir: string): TlsFiles {
  const dir = path.resolve(dataDir, 'tls');
  return { cert: path.join(dir, 'server.crt'), key: path.join(dir, 'server.key'), ca: path.join(dir, 'ca.crt') };
}

/**
 * Makes the local CA and a serving certificate under DATA_DIR/tls unless they exist (then they are
 * reused as they are). The certificate names localhost, 127.0.0.1, ::1 and `hostnames`.
 */
export async function ensureLocalTls(dataDir: string, hostnames: string[] = []): Promise<TlsFiles> {
  const files = localTlsFiles(dataDir);
  if (existsSync(files.cert) && existsSync(files.key) && existsSync(files.ca)) return files;
  mkdirSync(path.dirname(files.cert), { recursive: true, mode: 0o700 });
  const now = new Date();
  const notAfter = new Date(now.getTime() + 10 * 365 * 24 * 3600 * 1000);
  const caKeys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=Meridian local CA',
    notBefore: now,
    notAfter,
    signingAlgorithm: ALGORITHM,
    keys: caKeys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const names = [...new Set(['localhost', '127.0.0.1', '::1', ...hostnames.filter((h) => h && h !== '0.0.0.0' && h !== '::')])];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: 'CN=meridian',
    issuer: ca.subject,
    notBefore: now,
    notAfter,
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names.map((n) => (isIP(n) ? { type: 'ip' as const, value: n } : { type: 'dns' as const, value: n }))),
    ],
  });
  writeFileSync(path.join(path.dirname(files.ca), 'ca.key'), await pemKey(caKeys.privateKey), { mode: 0o600 });
  writeFileSync(files.key, await pemKey(keys.privateKey), { mode: 0o600 });
  writeFileSync(files.cert, cert.toString('pem') + '\n' + ca.toString('pem') + '\n');
  writeFileSync(files.ca, ca.toString('pem') + '\n');
  return files;
}

/** The TLS files the web process serves with: the configured ones, else the local CA's. */
export async function resolveTls(e: {
  DATA_DIR: string;
  HOSTNAME: string;
  TLS_CERT_FILE?: string;
  TLS_PRIVATE_KEY_FILE?: string;
  TLS_KEY_FILE?: string;
  TLS_CA_FILE?: string;
}): Promise<TlsFiles> {
  const key = e.TLS_PRIVATE_KEY_FILE ?? e.TLS_KEY_FILE;
  if (e.TLS_CERT_FILE && key) return { cert: e.TLS_CERT_FILE, key, ca: e.TLS_CA_FILE ?? e.TLS_CERT_FILE };
  return ensureLocalTls(e.DATA_DIR, [e.HOSTNAME]);
}

export const readPair = (files: TlsFiles) => ({ cert: readFileSync(files.cert), key: readFileSync(files.key) });

/**
 * Calls `reload` with the new pair when the certificate or key file (or one of `extra`, such as the
 * requestheader CA) changes on disk (polled: a rotated Secret volume swaps a symlink, which a watch
 * of the old inode would miss). A pair caught halfway through a rotation (a key that does not fit)
 * is left to the next change. Returns the stop function.
 */
export function watchTls(files: TlsFiles & { extra?: string[] }, reload: (pair: { cert: Buffer; key: Buffer }) => void, intervalMs = 2_000): () => void {
  const watched = [files.cert, files.key, ...(files.extra ?? [])];
  let last = '';
  const stamp = () => watched.map((f) => (existsSync(f) ? `${statSync(f).mtimeMs}:${statSync(f).size}` : '-')).join('|');
  last = stamp();
  const check = () => {
    const now = stamp();
    if (now === last) return;
    last = now;
    try {
      reload(readPair(files));
    } catch {
      // A half-written pair: the next change brings the whole one.
    }
  };
  for (const f of watched) watchFile(f, { interval: intervalMs }, check);
  return () => {
    for (const f of watched) unwatchFile(f, check);
  };
}
