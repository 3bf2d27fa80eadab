/**
 * Starts the real simulator process (`node --import tsx bin/simulator.ts`) on a free port, for tests and
 * benchmarks. Not used by the service itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entryPoint = path.join(repositoryRoot, 'bin', 'simulator.ts');

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SpawnedSimulator {
  baseUrl: string;
  port: number;
  stateFile: string;
  token: string;
  adminToken: string | null;
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
  token?: string;
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

function launch(env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<ExitStatus> } {
  const childEnv: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('SIMULATOR_')) childEnv[key] = value;
  }
  Object.assign(childEnv, env);
  const child = spawn(process.execPath, ['--import', 'tsx', entryPoint], {
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
  const token = options.token ?? randomToken('runtime');
  const adminToken = options.adminToken ?? null;
  const env: Record<string, string> = {
    SIMULATOR_PORT: '0',
    SIMULATOR_STATE_FILE: options.stateFile,
    SIMULATOR_TOKEN: token,
    ...(adminToken ? { SIMULATOR_ADMIN_TOKEN: adminToken } : {}),
    ...options.env,
  };
  const { child, output, exited } = launch(env);
  const port = await new Promise<number>((resolve, reject) => {
    const timeout = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`simulator did not start within ${options.startTimeoutMs ?? 15_000} ms:\n${output()}`));
    }, options.startTimeoutMs ?? 15_000);
    const onData = () => {
      const match = /"msg":"listening"[^\n]*"port":(\d+)/.exec(output());
      if (match) {
        clearTimeout(timeout);
        child.stdout?.off('data', onData);
        resolve(Number(match[1]));
      }
    };
    child.stdout?.on('data', onData);
    void exited.then((status) => {
      clearTimeout(timeout);
      reject(new Error(`simulator exited (${status.code ?? status.signal}) before listening:\n${output()}`));
    });
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    stateFile: options.stateFile,
    token,
    adminToken,
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
export async function runSimulatorUntilExit(env: Record<string, string>, timeoutMs = 15_000): Promise<ExitStatus & { output: string }> {
  const { child, output, exited } = launch(env);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const status = await exited;
  clearTimeout(timer);
  return { ...status, output: output() };
}
