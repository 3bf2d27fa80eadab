/** Runs a CNI plugin executable as a child process (asynchronously: the test's server keeps serving). */
import { spawn } from 'node:child_process';

export interface PluginRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, or undefined when stdout is empty. Throws if stdout is anything else. */
  json: Record<string, unknown> | undefined;
  ms: number;
}

export interface RunOptions {
  /** CNI_* variables and anything else; merged over a minimal base environment (PATH, HOME). */
  env: Record<string, string | undefined>;
  stdin?: string | Buffer;
  /** Kill the child after this many ms (a safety net for the tests, not the plugin's deadline). */
  killAfterMs?: number;
}

export function runPlugin(executable: string, opts: RunOptions): Promise<PluginRun> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root' };
  for (const [k, v] of Object.entries(opts.env)) if (v !== undefined) env[k] = v;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(executable, [], { env: env as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    const killer = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs ?? 30_000);
    child.on('error', (e) => {
      clearTimeout(killer);
      reject(e);
    });
    child.on('close', (status, signal) => {
      clearTimeout(killer);
      const ms = performance.now() - started;
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      let json: Record<string, unknown> | undefined;
      if (stdout.trim() !== '') {
        try {
          json = JSON.parse(stdout) as Record<string, unknown>;
        } catch {
          reject(new Error(`plugin wrote something other than one JSON document to stdout: ${JSON.stringify(stdout)}`));
          return;
        }
      }
      resolve({ status, signal, stdout, stderr, json, ms });
    });
    child.stdin.on('error', () => {}); // the plugin may exit without reading stdin (VERSION)
    child.stdin.end(opts.stdin ?? '');
  });
}
