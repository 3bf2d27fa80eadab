import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

function e2eDataDir(): string {
  const dataDir = process.env.E2E_DATA_DIR;
  if (!dataDir) throw new Error('E2E_DATA_DIR is not set (playwright.config.ts sets it for the workers)');
  return dataDir;
}

/**
 * The URLs of the e2e run's embedded database (bin/start.ts on `E2E_DATA_DIR`, port `E2E_PG_PORT`):
 * `app` is the role `npm start` gives its web and worker processes (row access only), `owner` the
 * schema owner's, as bin/lib/embedded-postgres.ts makes them.
 */
export function e2eDatabaseUrls(): { app: string; owner: string } {
  const dataDir = e2eDataDir();
  const port = process.env.E2E_PG_PORT ?? '54339';
  const secret = (file: string) => encodeURIComponent(readFileSync(path.join(dataDir, file), 'utf8').trim());
  return {
    app: `postgres://meridian_app:${secret('postgres-app.password')}@127.0.0.1:${port}/meridian`,
    owner: `postgres://meridian:${secret('postgres.password')}@127.0.0.1:${port}/meridian`,
  };
}

export interface WebProcess {
  /** Where a browser reaches it: `http://127.0.0.1:<port>`. */
  base: string;
  /** What it wrote to stdout and stderr, for a failure's message. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * One more Meridian web process (bin/web.ts, the production build) on `port`, against the e2e run's
 * database, with `env` on top of the worker's environment: for a spec that needs a configuration
 * the main e2e web server must not have. It talks to this process over IPC, as `npm start`'s
 * supervisor does: it says when it is ready, and stops when this process goes away.
 */
export async function startWebProcess(port: number, env: Record<string, string>): Promise<WebProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(process.cwd(), 'bin/web.ts')], {
    env: {
      ...process.env,
      DATABASE_URL: e2eDatabaseUrls().app,
      DATA_DIR: e2eDataDir(),
      PORT: String(port),
      HTTPS_PORT: '0',
      HOSTNAME: '127.0.0.1',
      LOG_LEVEL: 'warn',
      NEXT_TELEMETRY_DISABLED: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`web process not ready after 120 s:\n${output}`)), 120_000);
    child.on('message', (message: { type?: string }) => {
      if (message?.type !== 'ready') return;
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`web process exited (${code ?? signal}) before it was ready:\n${output}`));
    });
  });
  return {
    base: `http://127.0.0.1:${port}`,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
