import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';

/**
 * `npm start` as a user runs it: a second instance on its own port and data directory. SIGTERM
 * stops everything (no process left behind); a restart keeps the data.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function startInstance(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  const running = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not running after 180 s:\n${log}`)), 180_000);
    child.stdout.on('data', () => {
      if (log.includes('Meridian is running')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`exited early (${code}):\n${log}`)));
  });
  const stopped = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, running, stopped, log: () => log };
}

/** Processes whose command line mentions the data directory (postgres) or that descend from the supervisor. */
function survivors(dataDir: string, pid: number): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,ppid,args'], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes(dataDir) || new RegExp(`^\\s*\\d+\\s+${pid}\\s`).test(line))
    .filter((line) => !line.includes('ps -eo'));
}

test('SIGTERM stops web, worker and PostgreSQL; a restart keeps the data', async () => {
  test.setTimeout(400_000);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'meridian-supervisor-'));
  const env = { PORT: '3190', EMBEDDED_PG_PORT: '54391', SIMULATOR_PORT: '4191', DATA_DIR: dataDir, MERIDIAN_DEMO_PASSWORD: 'supervisor-pass-1', DATABASE_URL: '' };
  try {
    const first = startInstance(env);
    await first.running;
    expect(first.log()).toContain('seeded demo data');
    const token = execFileSync(process.execPath, ['--import', 'tsx', 'bin/meridian.ts', 'token', 'create', '--project', 'acme-dev', '--name', 'survives-restart'], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' }).trim();
    expect(token).toMatch(/^mrd_[A-Za-z0-9_-]+$/);
    const ready = await (await fetch('http://localhost:3190/readyz')).json();
    expect(ready.dependencies.map((d: { name: string }) => d.name)).toEqual(expect.arrayContaining(['database', 'migrations', 'worker', 'simulator']));

    first.child.kill('SIGTERM');
    expect(await first.stopped).toBe(0);
    expect(survivors(dataDir, first.child.pid!)).toEqual([]);

    const second = startInstance(env);
    await second.running;
    expect(second.log()).not.toContain('seeded demo data');
    const who = await fetch('http://localhost:3190/api/v1/whoami', { headers: { authorization: `Bearer ${token}` } });
    expect(who.status).toBe(200);
    expect((await who.json()).project).toBe('acme-dev');
    second.child.kill('SIGTERM');
    expect(await second.stopped).toBe(0);
    expect(survivors(dataDir, second.child.pid!)).toEqual([]);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
