import { webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

/**
 * Certificates for tests of TLS client authentication (the front proxy, webhooks): a CA, and
 * client or server certificates it signs, as PEM. Real X.509 made with @peculiar/x509 (ECDSA P-256).
 */

x509.cryptoProvider.set(webcrypto as Crypto);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface Pem {
  cert: string;
  key: string;
}

export interface TestCa extends Pem {
  /** A certificate this CA signs: `client` (clientAuth, named by its CN) or `server` (serverAuth, for `names`). */
  issue(kind: 'client' | 'server', commonName: string, names?: string[]): Promise<Pem>;
}

let serial = 1;
const nextSerial = () => (serial++).toString(16).padStart(2, '0');

async function pemKey(key: CryptoKey) {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

export async function makeCa(commonName: string): Promise<TestCa> {
  const now = new Date(Date.now() - 60_000);
  const notAfter = new Date(now.getTime() + 24 * 3600 * 1000);
  const caKeys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: nextSerial(),
    name: `CN=${commonName}`,
    notBefore: now,
    notAfter,
    signingAlgorithm: ALGORITHM,
    keys: caKeys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  return {
    cert: ca.toString('pem') + '\n',
    key: await pemKey(caKeys.privateKey),
    async issue(kind, cn, names = []) {
      const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
      const cert = await x509.X509CertificateGenerator.create({
        serialNumber: nextSerial(),
        subject: `CN=${cn}`,
        issuer: ca.subject,
        notBefore: now,
        notAfter,
        signingAlgorithm: ALGORITHM,
        publicKey: keys.publicKey,
        signingKey: caKeys.privateKey,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
          new x509.ExtendedKeyUsageExtension([kind === 'client' ? x509.ExtendedKeyUsage.clientAuth : x509.ExtendedKeyUsage.serverAuth]),
          ...(names.length
            ? [new x509.SubjectAlternativeNameExtension(names.map((n) => (isIP(n) ? { type: 'ip' as const, value: n } : { type: 'dns' as const, value: n })))]
            : []),
        ],
      });
      return { cert: cert.toString('pem') + '\n', key: await pemKey(keys.privateKey) };
    },
  };
}
