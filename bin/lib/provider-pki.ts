/**
 * `npm start`'s workload identity for the provider protocol: a local CA under `DATA_DIR/provider-pki`
 * (made once, kept), the simulator's serving certificate, and short-lived client certificates for
 * the web and worker processes whose URI SAN is their SPIFFE ID
 * (`spiffe://<SPIFFE_TRUST_DOMAIN>/meridian/<MERIDIAN_SITE>/web|worker`). Every certificate is
 * renewed when a third of its lifetime is left; the processes re-read the files when they change,
 * so a renewal needs no restart (the same path as cert-manager's or SPIRE's files in production).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createCa, describeCertificate, issueCertificate, meridianSpiffeId, writeFileAtomic, type PemPair } from '../../lib/workload-pki';

export interface CertFiles {
  certFile: string;
  keyFile: string;
}

export interface ProviderPki {
  caFile: string;
  simulator: CertFiles;
  web: CertFiles;
  worker: CertFiles;
  /** Checks every certificate now and renews the ones due (the timer does it on its own). */
  renewDue(): Promise<string[]>;
  stop(): void;
}

const CA_VALID_MS = 10 * 365 * 24 * 3600 * 1000;

export async function startProviderPki(options: {
  dataDir: string;
  trustDomain: string;
  site: string;
  ttlMinutes: number;
  log: (line: string) => void;
}): Promise<ProviderPki> {
  const dir = path.resolve(options.dataDir, 'provider-pki');
  const caFile = path.join(dir, 'ca.crt');
  const caKeyFile = path.join(dir, 'ca.key');
  let ca: PemPair;
  if (existsSync(caFile) && existsSync(caKeyFile)) ca = { cert: readFileSync(caFile, 'utf8'), key: readFileSync(caKeyFile, 'utf8') };
  else {
    ca = await createCa({ name: `Meridian provider CA (${options.trustDomain})`, validMs: CA_VALID_MS });
    writeFileAtomic(caKeyFile, ca.key);
    writeFileAtomic(caFile, ca.cert, 0o644);
    options.log(`made the provider CA in ${dir}`);
  }
  const ttlMs = options.ttlMinutes * 60_000;
  const files = (name: string): CertFiles => ({ certFile: path.join(dir, `${name}.crt`), keyFile: path.join(dir, `${name}.key`) });
  const leaves = [
    {
      name: 'simulator',
      files: files('simulator'),
      issue: () => issueCertificate({ ca, commonName: 'meridian-simulator', hostnames: ['localhost', '127.0.0.1', '::1'], usage: 'server', validMs: ttlMs }),
    },
    ...(['web', 'worker'] as const).map((role) => {
      const spiffeId = meridianSpiffeId(options.trustDomain, options.site, role);
      return {
        name: role,
        files: files(role),
        issue: () => issueCertificate({ ca, commonName: `meridian-${role}`, spiffeId, usage: 'client', validMs: ttlMs }),
      };
    }),
  ];

  /** Due: missing, unreadable, of another CA's making, or with less than a third of its lifetime left. */
  const due = (leaf: (typeof leaves)[number]) => {
    if (!existsSync(leaf.files.certFile) || !existsSync(leaf.files.keyFile)) return true;
    try {
      const { notAfter } = describeCertificate(readFileSync(leaf.files.certFile));
      return notAfter.getTime() - Date.now() < ttlMs / 3;
    } catch {
      return true;
    }
  };

  const renewDue = async () => {
    const renewed: string[] = [];
    for (const leaf of leaves) {
      if (!due(leaf)) continue;
      const pair = await leaf.issue();
      // Key first, then certificate: a reader that sees the new key with the old certificate finds they do not fit and waits for the next change.
      writeFileAtomic(leaf.files.keyFile, pair.key);
      writeFileAtomic(leaf.files.certFile, pair.cert, 0o644);
      renewed.push(leaf.name);
    }
    return renewed;
  };

  const first = await renewDue();
  if (first.length) options.log(`issued provider certificates (${first.join(', ')}), valid ${options.ttlMinutes} min, renewed before they expire`);
  let running = false;
  const timer = setInterval(
    () => {
      if (running) return;
      running = true;
      renewDue()
        .then((renewed) => {
          if (renewed.length) options.log(`renewed provider certificates: ${renewed.join(', ')}`);
        })
        .catch((error: unknown) => options.log(`renewing provider certificates failed (retried): ${error instanceof Error ? error.message : String(error)}`))
        .finally(() => {
          running = false;
        });
    },
    Math.max(1_000, Math.min(60_000, ttlMs / 12)),
  );
  timer.unref();
  return {
    caFile,
    simulator: leaves[0].files,
    web: leaves[1].files,
    worker: leaves[2].files,
    renewDue,
    stop: () => clearInterval(timer),
  };
}
