/**
 * X.509 for workload identity and local TLS: a CA, certificates it issues (serving names, or a
 * SPIFFE ID as URI SAN for a workload), SPIFFE ID parsing, atomic PEM writes and a poll-based watch
 * of certificate files (a rotated Secret volume swaps a symlink, which an inotify watch of the old
 * inode would miss). Shared by the provider simulator, the provider client (server/provider) and
 * `npm start`; it imports nothing of ours.
 */
import { webcrypto, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, statSync, unwatchFile, watchFile, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as Crypto);

export const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A PEM certificate (chain) and its PEM private key (PKCS #8). */
export interface PemPair {
  cert: string;
  key: string;
}

export async function pemPrivateKey(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

async function importPrivateKey(pem: string): Promise<CryptoKey> {
  const der = x509.PemConverter.decode(pem)[0];
  return webcrypto.subtle.importKey('pkcs8', der, KEY_ALGORITHM, true, ['sign']);
}

const randomSerial = () =>
  Buffer.from(webcrypto.getRandomValues(new Uint8Array(12)))
    .toString('hex')
    .replace(/^[89a-f]/, '1');

/** A self-signed CA (ECDSA P-256) valid from `notBefore` (default: a minute ago) for `validMs`. */
export async function createCa(options: { name: string; validMs: number; notBefore?: Date }): Promise<PemPair> {
  const notBefore = options.notBefore ?? new Date(Date.now() - 60_000);
  const keys = (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: `CN=${options.name}`,
    notBefore,
    notAfter: new Date(notBefore.getTime() + options.validMs),
    signingAlgorithm: KEY_ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: ca.toString('pem') + '\n', key: await pemPrivateKey(keys.privateKey) };
}

export interface IssueOptions {
  ca: PemPair;
  /** Subject common name. */
  commonName: string;
  /** A workload's SPIFFE ID (URI SAN). */
  spiffeId?: string;
  /** DNS names and IP addresses (SANs) a serving certificate answers for. */
  hostnames?: string[];
  /** `server`, `client`, or both extended key usages. */
  usage: 'server' | 'client' | 'both';
  validMs: number;
  /** Default: a minute ago (clock skew between processes). */
  notBefore?: Date;
}

/** Issues a leaf certificate signed by `ca`; the cert PEM carries the leaf only. */
export async function issueCertificate(options: IssueOptions): Promise<PemPair> {
  const caCert = new x509.X509Certificate(options.ca.cert);
  const caKey = await importPrivateKey(options.ca.key);
  const keys = (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const notBefore = options.notBefore ?? new Date(Date.now() - 60_000);
  const names: x509.JsonGeneralName[] = [];
  if (options.spiffeId) names.push({ type: 'url', value: options.spiffeId });
  for (const host of options.hostnames ?? []) names.push(isIP(host) ? { type: 'ip', value: host } : { type: 'dns', value: host });
  const usages = {
    server: [x509.ExtendedKeyUsage.serverAuth],
    client: [x509.ExtendedKeyUsage.clientAuth],
    both: [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth],
  }[options.usage];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: `CN=${options.commonName}`,
    issuer: caCert.subject,
    notBefore,
    notAfter: new Date(notBefore.getTime() + options.validMs),
    signingAlgorithm: KEY_ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension(usages),
      ...(names.length ? [new x509.SubjectAlternativeNameExtension(names, Boolean(options.spiffeId))] : []),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { cert: cert.toString('pem') + '\n', key: await pemPrivateKey(keys.privateKey) };
}

/** A SPIFFE ID: `spiffe://<trust-domain>/<path>`; Meridian's workloads are `/meridian/<site>/<role>`. */
export interface SpiffeId {
  id: string;
  trustDomain: string;
  path: string;
}

const SPIFFE_ID = /^spiffe:\/\/([a-z0-9._-]+)(\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)$/;

export function parseSpiffeId(value: string): SpiffeId | null {
  const match = SPIFFE_ID.exec(value);
  if (!match || match[2].includes('//') || match[2].endsWith('/')) return null;
  return { id: value, trustDomain: match[1], path: match[2] };
}

/** Meridian's workload ID for a process of `site` (`worker`, `web`). */
export const meridianSpiffeId = (trustDomain: string, site: string, role: string) => `spiffe://${trustDomain}/meridian/${site}/${role}`;

/**
 * The URI SANs of a certificate (as Node's `subjectaltname` string lists them, e.g.
 * `URI:spiffe://x/y, DNS:localhost`) that are SPIFFE IDs. A workload certificate carries exactly one.
 */
export function spiffeIdsOf(subjectAltName: string | undefined): string[] {
  if (!subjectAltName) return [];
  return subjectAltName
    .split(/,\s*/)
    .filter((name) => name.startsWith('URI:spiffe://'))
    .map((name) => name.slice(4));
}

/** When a PEM certificate stops being valid, and its SPIFFE ID (if any). */
export function describeCertificate(pem: string | Buffer): { notAfter: Date; notBefore: Date; spiffeIds: string[] } {
  const cert = new X509Certificate(pem);
  return { notAfter: new Date(cert.validTo), notBefore: new Date(cert.validFrom), spiffeIds: spiffeIdsOf(cert.subjectAltName) };
}

/** Writes `text` to `file` atomically (temp file + rename), creating the directory. */
export function writeFileAtomic(file: string, text: string, mode = 0o600): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode });
  renameSync(temp, file);
}

/**
 * Calls `onChange` when any of `files` changes on disk (size or mtime; polled every `intervalMs`).
 * The callback may throw (e.g. a key and certificate caught halfway through a rotation do not fit):
 * the next change calls it again. Returns the stop function.
 */
export function watchFiles(files: string[], onChange: () => void, intervalMs = 1_000): () => void {
  const stamp = () => files.map((f) => (existsSync(f) ? `${statSync(f).mtimeMs}:${statSync(f).size}` : '-')).join('|');
  let last = stamp();
  const check = () => {
    const now = stamp();
    if (now === last) return;
    try {
      onChange();
      last = now;
    } catch {
      // Half-rotated: retried at the next poll.
    }
  };
  for (const file of files) watchFile(file, { interval: intervalMs, persistent: false }, check);
  return () => {
    for (const file of files) unwatchFile(file, check);
  };
}
