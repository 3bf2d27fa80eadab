/**
 * Starts the real simulator process (`node --import tsx bin/simulator.ts`) on a free port, for tests and
 * benchmarks. Not used by the service itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { createCa, issueCertificate, meridianSpiffeId, writeFileAtomic, type PemPair } from '../lib/workload-pki';

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entryPoint = path.join(repositoryRoot, 'bin', 'simulator.ts');

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CertFiles {
  certFile: string;
  keyFile: string;
}

/** A test PKI: a CA, the simulator's serving pair, and workload pairs for site `test` (web, worker). */
export interface TestPki {
  dir: string;
  trustDomain: string;
  ca: PemPair;
  caFile: string;
  server: CertFiles;
  web: CertFiles;
  worker: CertFiles;
}

export const TEST_TRUST_DOMAIN = 'meridian.test';
export const TEST_SITE = 'test';

/**
 * Makes (or reuses, when `dir` holds one already) a PKI for a test simulator and its callers. Workload
 * certificates are valid for a day; `makeWorkload` issues others (another site, role, CA or lifetime).
 */
export async function ensureTestPki(dir: string, trustDomain = TEST_TRUST_DOMAIN): Promise<TestPki> {
  const file = (name: string) => path.join(dir, name);
  const pair = (name: string): CertFiles => ({ certFile: file(`${name}.crt`), keyFile: file(`${name}.key`) });
  const pki = { dir, trustDomain, caFile: file('ca.crt'), server: pair('server'), web: pair('web'), worker: pair('worker') };
  if (existsSync(file('ca.crt')) && existsSync(file('ca.key')) && existsSync(pki.worker.certFile)) {
    return { ...pki, ca: { cert: readFileSync(file('ca.crt'), 'utf8'), key: readFileSync(file('ca.key'), 'utf8') } };
  }
  const ca = await createCa({ name: 'Meridian test provider CA', validMs: 365 * 24 * 3600 * 1000 });
  writeFileAtomic(file('ca.key'), ca.key);
  writeFileAtomic(file('ca.crt'), ca.cert);
  const write = (files: CertFiles, issued: PemPair) => {
    writeFileAtomic(files.keyFile, issued.key);
    writeFileAtomic(files.certFile, issued.cert);
  };
  const day = 24 * 3600 * 1000;
  write(pki.server, await issueCertificate({ ca, commonName: 'simulator', hostnames: ['localhost', '127.0.0.1', '::1'], usage: 'server', validMs: day }));
  for (const role of ['web', 'worker'] as const) {
    write(pki[role], await issueCertificate({ ca, commonName: role, spiffeId: meridianSpiffeId(trustDomain, TEST_SITE, role), usage: 'client', validMs: day }));
  }
  return { ...pki, ca };
}

export interface SpawnedSimulator {
  /** The runtime API (https, mutual TLS). */
  baseUrl: string;
  port: number;
  /** The admin API's own listener (https, bearer admin token); null when the admin API is off. */
  adminUrl: string | null;
  stateFile: string;
  pki: TestPki;
  adminToken: string | null;
  /** TLS files a caller of the runtime API presents as `role` (site `test`). */
  clientTls(role?: 'web' | 'worker'): { caFile: string; certFile: string; keyFile: string };
  /** The environment that makes a web or worker process call this simulator as `role`. */
  clientEnv(role: 'web' | 'worker'): Record<string, string>;
  child: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr, interleaved). */
  output(): string;
  /** Resolves when the process has exited. */
  exited: Promise<ExitStatus>;
  /** Sends `signal` and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<ExitStatus>;
}

export interface SpawnOptions {
  stateFile: string;
  /** Where the test PKI is made or reused; default: `pki` next to the state file. */
  pkiDir?: string;
  /** null: admin API off (the default when omitted is off as well). */
  adminToken?: string | null;
  /** Extra environment (SIMULATOR_OPERATION_MS, …); SIMULATOR_PORT defaults to 0 (any free port). */
  env?: Record<string, string>;
  startTimeoutMs?: number;
}

export function randomToken(prefix: string): string {
  return `${prefix}-${randomBytes(16).toString('hex')}`;
}

export async function makeTempDir(prefix = 'meridian-sim-'): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

function launch(env: Record<string, string>, args: string[] = []): { child: ChildProcess; output: () => string; exited: Promise<ExitStatus> } {
  const childEnv: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('SIMULATOR_')) childEnv[key] = value;
  }
  Object.assign(childEnv, env);
  const child = spawn(process.execPath, ['--import', 'tsx', entryPoint, ...args], {
    cwd: repositoryRoot,
    env: childEnv as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  // Drain both pipes continuously: the simulator writes logs synchronously and must never block on them.
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
    if (text.length > 4_000_000) text = text.slice(-2_000_000);
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
  });
  // 'close' (not 'exit'): fires once the output pipes are drained too, so the output is complete.
  const exited = new Promise<ExitStatus>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  return { child, output: () => text, exited };
}

/** Starts a simulator and resolves once it logged `listening` (rejects with its output if it exits first). */
export async function spawnSimulator(options: SpawnOptions): Promise<SpawnedSimulator> {
  const adminToken = options.adminToken ?? null;
  const pki = await ensureTestPki(options.pkiDir ?? path.join(path.dirname(options.stateFile), 'pki'));
  const env: Record<string, string> = {
    SIMULATOR_PORT: '0',
    SIMULATOR_ADMIN_PORT: '0',
    SIMULATOR_STATE_FILE: options.stateFile,
    SIMULATOR_TLS_CERT_FILE: pki.server.certFile,
    SIMULATOR_TLS_KEY_FILE: pki.server.keyFile,
    SIMULATOR_CLIENT_CA_FILE: pki.caFile,
    SPIFFE_TRUST_DOMAIN: pki.trustDomain,
    ...(adminToken ? { SIMULATOR_ADMIN_TOKEN: adminToken } : {}),
    ...options.env,
  };
  const { child, output, exited } = launch(env);
  const { port, adminPort } = await new Promise<{ port: number; adminPort: number | null }>((resolve, reject) => {
    const timeout = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`simulator did not start within ${options.startTimeoutMs ?? 60_000} ms:\n${output()}`));
    }, options.startTimeoutMs ?? 60_000);
    const onData = () => {
      const line = /^.*"msg":"listening".*$/m.exec(output());
      if (line) {
        clearTimeout(timeout);
        child.stdout?.off('data', onData);
        const fields = JSON.parse(line[0]) as { port: number; adminPort: number | null };
        resolve({ port: fields.port, adminPort: fields.adminPort });
      }
    };
    child.stdout?.on('data', onData);
    void exited.then((status) => {
      clearTimeout(timeout);
      reject(new Error(`simulator exited (${status.code ?? status.signal}) before listening:\n${output()}`));
    });
  });
  const clientTls = (role: 'web' | 'worker' = 'worker') => ({ caFile: pki.caFile, ...pki[role] });
  const baseUrl = `https://127.0.0.1:${port}`;
  const adminUrl = adminPort === null ? null : `https://127.0.0.1:${adminPort}`;
  return {
    baseUrl,
    port,
    adminUrl,
    stateFile: options.stateFile,
    pki,
    adminToken,
    clientTls,
    clientEnv: (role) => ({
      SIMULATOR_URL: baseUrl,
      PROVIDER_TLS_CERT_FILE: pki[role].certFile,
      PROVIDER_TLS_KEY_FILE: pki[role].keyFile,
      PROVIDER_TLS_CA_FILE: pki.caFile,
      SPIFFE_TRUST_DOMAIN: pki.trustDomain,
      MERIDIAN_SITE: TEST_SITE,
      ...(adminUrl && adminToken ? { SIMULATOR_ADMIN_URL: adminUrl, SIMULATOR_ADMIN_TOKEN: adminToken } : {}),
    }),
    child,
    output,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs the simulator with an environment that should make it refuse to start; returns its exit status and output. */
export async function runSimulatorUntilExit(env: Record<string, string>, timeoutMs = 60_000, args: string[] = []): Promise<ExitStatus & { output: string }> {
  const { child, output, exited } = launch(env, args);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const status = await exited;
  clearTimeout(timer);
  return { ...status, output: output() };
}

/** The simulator's TLS variables for `pki` (to start one by hand, e.g. with {@link runSimulatorUntilExit}). */
export function simulatorTlsEnv(pki: TestPki): Record<string, string> {
  return {
    SIMULATOR_TLS_CERT_FILE: pki.server.certFile,
    SIMULATOR_TLS_KEY_FILE: pki.server.keyFile,
    SIMULATOR_CLIENT_CA_FILE: pki.caFile,
    SPIFFE_TRUST_DOMAIN: pki.trustDomain,
  };
}
