/**
 * Every program refuses to start on an invalid environment, naming the variable and the reason,
 * before it touches a database or a data directory (server/env.ts `envOrExit`).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT_CONFIG } from '@/lib/env-schema';
import { freePort } from './global-setup';

const root = path.resolve(__dirname, '..');
let dataDir = '';

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'meridian-env-startup-'));
});
afterAll(async () => {
  if (!dataDir) return;
  // Should a program get past its environment and start the embedded PostgreSQL here, stop that
  // server (and only it) before removing its directory.
  const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
  if (existsSync(pidFile)) {
    const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
    if (pid > 0) {
      try {
        process.kill(pid, 'SIGINT');
      } catch {
        // already gone
      }
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  }
  await rm(dataDir, { recursive: true, force: true });
});

/** Runs `node --import tsx <script> …args` with `vars` over a copy of this environment without Meridian's variables. */
function runProgram(script: string, args: string[], vars: Record<string, string>) {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^(DATABASE_|DATA_DIR$|PORT$|HOSTNAME$|SIMULATOR_|CNI_|DB_|LOG_LEVEL$|AUTH_)/.test(k)) base[k] = v;
  }
  // Unreachable on purpose: a program that got past its environment would fail here instead.
  const env = { ...base, DATABASE_URL: 'postgres://meridian@127.0.0.1:1/none', DB_CONNECT_TIMEOUT_SECONDS: '1', DATA_DIR: dataDir, ...vars };
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, script), ...args], {
      cwd: root,
      env: env as unknown as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const killer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, output });
    });
  });
}

describe('an invalid environment stops start-up with the variable named', () => {
  test.each([
    ['web', 'bin/web.ts', []],
    ['worker', 'bin/worker.ts', []],
    ['npm start', 'bin/start.ts', []],
    ['the admin CLI', 'bin/meridian.ts', ['migrate']],
  ] as [string, string, string[]][])('%s', async (_program, script, args) => {
    const { code, output } = await runProgram(script, args, { CNI_BLOCK_GRACE_SECONDS: 'abc', PROVIDER_TIMEOUT_MS: '-5' });
    expect(code, output).toBe(EXIT_CONFIG);
    expect(output).toContain('CNI_BLOCK_GRACE_SECONDS: must be a whole number from 0 to 604800');
    expect(output).toContain('PROVIDER_TIMEOUT_MS: must be a whole number');
    expect(output).not.toMatch(/\n\s+at /); // a reason, not a stack trace
  });

  test('npm start creates nothing in its data directory before refusing', async () => {
    const { code, output } = await runProgram('bin/start.ts', [], {
      DATABASE_URL: '',
      EMBEDDED_PG_PORT: String(await freePort()),
      MERIDIAN_DISABLED_MODULES: 'ipam,dns',
    });
    expect(code, output).toBe(EXIT_CONFIG);
    expect(output).toContain('MERIDIAN_DISABLED_MODULES: unknown module "dns"');
    expect(existsSync(path.join(dataDir, 'postgres'))).toBe(false);
    expect(await readdir(dataDir)).toEqual([]);
  });
});
