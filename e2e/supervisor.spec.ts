import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';

/**
 * `npm start` as a user runs it: a second instance on its own port and data directory. SIGTERM
 * stops everything (no process left behind); a restart keeps the data.
 */
/** Ports for one instance (web, embedded PostgreSQL, the simulator's runtime and admin APIs), free now: instances never collide with other runs. */
async function instancePorts(): Promise<{ PORT: string; EMBEDDED_PG_PORT: string; SIMULATOR_PORT: string; SIMULATOR_ADMIN_PORT: string }> {
  const one = () =>
    new Promise<string>((resolve, reject) => {
      const srv = createServer();
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const address = srv.address();
        srv.close(() => resolve(String(typeof address === 'object' && address ? address.port : 0)));
      });
    });
  return { PORT: await one(), EMBEDDED_PG_PORT: await one(), SIMULATOR_PORT: await one(), SIMULATOR_ADMIN_PORT: await one() };
}

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
  const env = { ...(await instancePorts()), DATA_DIR: dataDir, MERIDIAN_DEMO_PASSWORD: 'supervisor-pass-1', DATABASE_URL: '' };
  try {
    const first = startInstance(env);
    await first.running;
    expect(first.log()).toContain('seeded demo data');
    const token = execFileSync(
      process.execPath,
      ['--import', 'tsx', 'bin/meridian.ts', 'token', 'create', '--project', 'acme-dev', '--name', 'survives-restart'],
      { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' },
    ).trim();
    expect(token).toMatch(/^mrd_[A-Za-z0-9_-]+$/);
    const ready = await (await fetch(`http://localhost:${env.PORT}/readyz`)).json();
    expect(ready.dependencies.map((d: { name: string }) => d.name)).toEqual(expect.arrayContaining(['database', 'migrations', 'worker', 'simulator']));

    first.child.kill('SIGTERM');
    expect(await first.stopped).toBe(0);
    expect(survivors(dataDir, first.child.pid!)).toEqual([]);

    const second = startInstance(env);
    await second.running;
    expect(second.log()).not.toContain('seeded demo data');
    const who = await fetch(`http://localhost:${env.PORT}/api/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
    expect(who.status).toBe(200);
    expect((await who.json()).project).toBe('acme-dev');
    second.child.kill('SIGTERM');
    expect(await second.stopped).toBe(0);
    expect(survivors(dataDir, second.child.pid!)).toEqual([]);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** The pids of processes whose parent is `ppid` and whose command line contains `pattern`. */
function childrenOf(ppid: number, pattern: string): number[] {
  return execFileSync('ps', ['-eo', 'pid,ppid,args'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => Boolean(m && Number(m[2]) === ppid && m[3].includes(pattern)))
    .map((m) => Number(m[1]));
}

/** Every process below `pid` (children, grandchildren, …). */
function descendants(pid: number): number[] {
  const rows = execFileSync('ps', ['-eo', 'pid,ppid'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number))
    .filter((r) => r.length === 2 && !Number.isNaN(r[0]));
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of rows) {
      if (parent === p) {
        out.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return out;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await Promise.resolve(fn()).catch(() => undefined);
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const readyStatus = (port: string) => fetch(`http://localhost:${port}/readyz`, { signal: AbortSignal.timeout(3_000) }).then((r) => r.status);

test('kill -9 of the embedded PostgreSQL: it is restarted on its data, web and worker reconnect without a restart', async () => {
  test.setTimeout(400_000);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'meridian-supervisor-'));
  const env = { ...(await instancePorts()), DATA_DIR: dataDir, MERIDIAN_DEMO_PASSWORD: 'supervisor-pass-1', DATABASE_URL: '' };
  const instance = startInstance(env);
  try {
    await instance.running;
    const supervisor = instance.child.pid!;
    const [web] = childrenOf(supervisor, 'bin/web.ts');
    const [worker] = childrenOf(supervisor, 'bin/worker.ts');
    const [postmaster] = childrenOf(supervisor, path.join(dataDir, 'postgres'));
    expect(
      web && worker && postmaster,
      `children of ${supervisor}:\n${execFileSync('ps', ['-eo', 'pid,ppid,args'], { encoding: 'utf8' })}\n${instance.log()}`,
    ).toBeTruthy();
    await until('ready', async () => (await readyStatus(env.PORT)) === 200, 60_000);

    process.kill(postmaster, 'SIGKILL');
    await until('the supervisor to notice', () => instance.log().includes('PostgreSQL exited unexpectedly (SIGKILL'), 10_000);
    await until('PostgreSQL back', () => instance.log().includes('PostgreSQL is back'), 60_000);
    const [again] = childrenOf(supervisor, path.join(dataDir, 'postgres'));
    expect(again).not.toBe(postmaster);
    await until('ready again', async () => (await readyStatus(env.PORT)) === 200, 60_000);

    // A write and a read through the same web process.
    const token = execFileSync(process.execPath, ['--import', 'tsx', 'bin/meridian.ts', 'token', 'create', '--project', 'acme-dev', '--name', 'after-crash'], {
      cwd: root,
      env: { ...process.env, ...env },
      encoding: 'utf8',
    }).trim();
    const who = await fetch(`http://localhost:${env.PORT}/api/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
    expect(who.status).toBe(200);
    expect(childrenOf(supervisor, 'bin/web.ts')).toEqual([web]);
    expect(childrenOf(supervisor, 'bin/worker.ts')).toEqual([worker]);
    expect(instance.log()).not.toMatch(/(web|worker) exited/);
  } finally {
    instance.child.kill('SIGTERM');
    await instance.stopped;
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a hung worker (SIGSTOP) is killed and restarted; a database that cannot come back stops the system with a clear message', async () => {
  test.setTimeout(400_000);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'meridian-supervisor-'));
  const env = {
    ...(await instancePorts()),
    DATA_DIR: dataDir,
    MERIDIAN_DEMO_PASSWORD: 'supervisor-pass-1',
    DATABASE_URL: '',
    SUPERVISOR_HEARTBEAT_TIMEOUT_SECONDS: '5',
    DB_RESTART_WINDOW_SECONDS: '3',
  };
  const instance = startInstance(env);
  try {
    await instance.running;
    const supervisor = instance.child.pid!;
    const [worker] = childrenOf(supervisor, 'bin/worker.ts');
    expect(worker).toBeGreaterThan(0);
    process.kill(worker, 'SIGSTOP');
    await until('the hung worker to be killed', () => instance.log().includes('worker sent no heartbeat'), 30_000);
    await until('a new worker', () => childrenOf(supervisor, 'bin/worker.ts').find((p) => p !== worker), 30_000);
    expect(alive(worker)).toBe(false);
    await until('ready with the new worker', async () => (await readyStatus(env.PORT)) === 200, 90_000);

    // The data directory is gone: a restart must not initialise an empty database in its place.
    const [postmaster] = childrenOf(supervisor, path.join(dataDir, 'postgres'));
    renameSync(path.join(dataDir, 'postgres'), path.join(dataDir, 'postgres.moved'));
    process.kill(postmaster, 'SIGKILL');
    expect(await instance.stopped).toBe(1);
    expect(instance.log()).toContain('could not be restarted');
    expect(instance.log()).toContain('no PostgreSQL data in');
    expect(survivors(dataDir, supervisor)).toEqual([]);
  } finally {
    if (instance.child.exitCode === null) instance.child.kill('SIGTERM');
    await instance.stopped;
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('SIGTERM to the npm start process stops the supervisor and everything below it', async () => {
  test.setTimeout(400_000);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'meridian-supervisor-'));
  const env = { ...(await instancePorts()), DATA_DIR: dataDir, MERIDIAN_DEMO_PASSWORD: 'supervisor-pass-1', DATABASE_URL: '' };
  const npm = spawn('npm', ['start'], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  npm.stdout.on('data', (d) => (log += d));
  npm.stderr.on('data', (d) => (log += d));
  try {
    await until('npm start running', () => log.includes('Meridian is running'), 180_000);
    const below = descendants(npm.pid!);
    expect(below.length).toBeGreaterThanOrEqual(5);
    npm.kill('SIGTERM');
    await until('everything below npm start to stop', () => below.every((p) => !alive(p)), 30_000);
    expect(survivors(dataDir, npm.pid!)).toEqual([]);
  } finally {
    for (const p of descendants(npm.pid!)) process.kill(p, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});
