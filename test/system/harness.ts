/**
 * The system-test harness: Meridian as it runs scaled out — N web processes (bin/web.ts on the
 * production build), N worker processes (bin/worker.ts), one simulator (bin/simulator.ts) — against
 * one fresh PostgreSQL database (TEST_DATABASE_URL's / DATABASE_URL's server, or a throwaway
 * embedded one). Every process can be killed (SIGKILL included) and started again on the same
 * port; the harness records when, so the checks can tell a killed run from a duplicate one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { ensureBuild } from '@/bin/lib/build';
import { EMBEDDED_APP_ROLE, startEmbeddedPostgres } from '@/bin/lib/embedded-postgres';
import { createDb, type DbHandle } from '@/db/client';
import { migrateDatabase } from '@/db/migrate';
import { createHttpProviderAdminClient, type ProviderAdminClient } from '@/server/provider';
import { ensureTestPki, TEST_SITE, type TestPki } from '@/simulator/spawn-simulator';
import { freePort } from '@/test/global-setup';

export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The web processes serve the production build: reuse it while the sources are unchanged (in
 * `npm test` the build stage has just made it), otherwise build first — as `npm start` does.
 */
export async function ensureProductionBuild(): Promise<void> {
  await ensureBuild(repositoryRoot, (line) => process.stdout.write(`${line}\n`));
  if (!existsSync(path.join(repositoryRoot, '.next', 'BUILD_ID'))) throw new Error('no production build in .next (npm run build)');
}

/** One run of a worker's job (from its debug trace, logged inside the job's lock). */
export interface JobRun {
  process: string;
  pid: number;
  jobId: string;
  task: string;
  attempt: number;
  payload: Record<string, unknown>;
  start: number;
  /** When the run returned or threw; undefined when its process died first (or it still runs). */
  end?: number;
  outcome?: 'success' | 'error';
}

/** A SIGKILL the harness sent: which process, which pid, when. */
export interface Kill {
  process: string;
  pid: number;
  at: number;
}

type Role = 'web' | 'worker' | 'simulator';

/**
 * One Meridian process, started with `node --import tsx <script>` and an IPC channel (so it exits
 * when the test process goes away, and says `ready`). Output goes to `<logDir>/<name>.log`.
 */
export class SystemProcess {
  child?: ChildProcess;
  /** Every pid this process had, in order. */
  readonly pids: number[] = [];
  private readonly log: WriteStream;

  constructor(
    readonly name: string,
    readonly role: Role,
    private readonly script: string,
    private readonly env: Record<string, string>,
    logDir: string,
    private readonly onLine: (process: SystemProcess, pid: number, line: string) => void,
    private readonly readyTimeoutMs: number,
  ) {
    this.log = createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
  }

  /** Appends to the log unless it was closed (a dying process's pipes may drain after the end). */
  private write(text: string) {
    if (!this.log.writableEnded) this.log.write(text);
  }

  /** Started and said `ready`, and not exited since. */
  ready = false;

  get running(): boolean {
    return Boolean(this.child && this.child.exitCode === null && this.child.signalCode === null);
  }

  get pid(): number | undefined {
    return this.running ? this.child!.pid : undefined;
  }

  /** Starts the process and resolves once it sent `ready` (rejects when it exits or times out first). */
  async start(): Promise<void> {
    if (this.running) return;
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repositoryRoot, this.script)], {
      cwd: repositoryRoot,
      env: this.env as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.child = child;
    const pid = child.pid!;
    this.pids.push(pid);
    this.write(`--- ${new Date().toISOString()} ${this.name} started (pid ${pid})\n`);
    for (const stream of [child.stdout!, child.stderr!]) {
      let partial = '';
      stream.setEncoding('utf8').on('data', (chunk: string) => {
        this.write(chunk);
        const lines = (partial + chunk).split('\n');
        partial = lines.pop()!;
        for (const line of lines) this.onLine(this, pid, line);
      });
    }
    child.once('exit', (code, signal) => {
      if (this.child === child) this.ready = false;
      this.write(`--- ${new Date().toISOString()} ${this.name} exited (pid ${pid}, ${signal ?? `code ${code}`})\n`);
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`${this.name} was not ready within ${this.readyTimeoutMs} ms (see ${this.log.path})`));
      }, this.readyTimeoutMs);
      child.on('message', (m: { type?: string }) => {
        if (m?.type !== 'ready') return;
        clearTimeout(timer);
        this.ready = true;
        resolve();
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited (${signal ?? `code ${code}`}) before it was ready (see ${this.log.path})`));
      });
    });
  }

  /** Sends `signal` and waits for the exit (SIGKILL after `graceMs` for a polite signal). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = signal === 'SIGKILL' ? undefined : setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill(signal);
    });
  }

  closeLog(): Promise<void> {
    return new Promise((resolve) => this.log.end(resolve));
  }
}

export interface SystemOptions {
  webs?: number;
  workers?: number;
  /** How long the simulator's operations take (SIMULATOR_OPERATION_MS). */
  operationMs?: number;
  workerConcurrency?: number;
  /** Printed with every harness message (e.g. the chaos seed). */
  label?: string;
  /** A database of the caller's (e.g. a replicated pair); by default a fresh one (`freshDatabase`). Migrated here either way. */
  database?: { url: string; appUrl?: string; appRole?: string; drop(): Promise<void> };
  /** More environment for the web and worker processes. */
  env?: Record<string, string>;
  /** More environment for the web processes only (e.g. a DATABASE_URL through a proxy the test stalls). */
  webEnv?: Record<string, string>;
}

export interface System {
  url: string;
  db: DbHandle['db'];
  handle: DbHandle;
  webs: SystemProcess[];
  workers: SystemProcess[];
  simulator: SystemProcess;
  processes: SystemProcess[];
  /** Base URLs of the web processes, in order. */
  webBases: string[];
  admin: ProviderAdminClient;
  /** The provider protocol's CA and workload certificates (web and worker of site `test`). */
  pki: TestPki;
  logDir: string;
  jobRuns: JobRun[];
  kills: Kill[];
  /** SIGKILLs a process now (recorded for the checks). */
  kill(process: SystemProcess): Promise<void>;
  /** Stops everything; removes the logs and the database unless `keep` (a failed run keeps them; so does SYSTEM_TEST_KEEP=1). */
  stop(options?: { keep?: boolean }): Promise<void>;
}

/**
 * A fresh database for one system run, and how to drop it. On the embedded server the processes
 * connect as its application role (`appUrl`, no superuser), as under `npm start`.
 */
export async function freshDatabase(): Promise<{ url: string; appUrl?: string; appRole?: string; drop(): Promise<void> }> {
  const name = `meridian_system_${Date.now()}_${process.pid}`;
  const external = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
  if (external) {
    const admin = postgres(external, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${name}"`);
    await admin.end();
    const u = new URL(external);
    u.pathname = `/${name}`;
    return {
      url: u.toString(),
      async drop() {
        const a = postgres(external, { max: 1, onnotice: () => {} });
        await a.unsafe(`drop database if exists "${name}" with (force)`);
        await a.end();
      },
    };
  }
  // A directory of its own: as root the server runs as `postgres`, which startEmbeddedPostgres lets
  // into the directory it is given, not into a private parent such as the log directory.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'meridian-system-pg-'));
  const pg = await startEmbeddedPostgres({ dataDir: dir, port: await freePort(), database: name });
  return {
    url: pg.url,
    appUrl: pg.appUrl,
    appRole: EMBEDDED_APP_ROLE,
    async drop() {
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Starts the database, the simulator, the workers and the web processes; resolves when all are ready. */
export async function startSystem(options: SystemOptions = {}): Promise<System> {
  const startup: Record<string, number> = {};
  let mark = Date.now();
  const lap = (what: string) => {
    startup[what] = (Date.now() - mark) / 1000;
    mark = Date.now();
  };
  await ensureProductionBuild();
  lap('build');
  const logDir = await mkdtemp(path.join(os.tmpdir(), 'meridian-system-'));
  const database = options.database ?? (await freshDatabase());
  await migrateDatabase(database.url, { appRole: database.appRole });
  lap('database');
  const handle = createDb(database.url, { max: 10, applicationName: 'meridian-system-test' });

  const simulatorPort = await freePort();
  const simulatorAdminPort = await freePort();
  const simulatorUrl = `https://127.0.0.1:${simulatorPort}`;
  const simulatorAdminUrl = `https://127.0.0.1:${simulatorAdminPort}`;
  // The provider protocol over mutual TLS, as under `npm start`: web and worker present workload certificates.
  const pki = await ensureTestPki(path.join(logDir, 'pki'));
  const identity = (role: 'web' | 'worker') => ({
    PROVIDER_TLS_CERT_FILE: pki[role].certFile,
    PROVIDER_TLS_KEY_FILE: pki[role].keyFile,
    PROVIDER_TLS_CA_FILE: pki.caFile,
  });
  const simulatorAdminToken = `admin-${randomBytes(16).toString('hex')}`;
  const jobRuns: JobRun[] = [];
  const open = new Map<string, JobRun>();
  const onLine = (p: SystemProcess, pid: number, line: string) => {
    if (p.role !== 'worker' || !line.includes('"msg":"job ')) return;
    let rec: { t: string; msg: string; jobId: string; task: string; attempt: number; payload: Record<string, unknown> };
    try {
      rec = JSON.parse(line);
    } catch {
      return;
    }
    const key = `${pid}:${rec.jobId}`;
    const at = Date.parse(rec.t);
    if (rec.msg === 'job start') {
      const run: JobRun = { process: p.name, pid, jobId: rec.jobId, task: rec.task, attempt: rec.attempt, payload: rec.payload ?? {}, start: at };
      jobRuns.push(run);
      open.set(key, run);
    } else if (rec.msg === 'job success' || rec.msg === 'job error') {
      const run = open.get(key);
      if (!run) return;
      run.end = at;
      run.outcome = rec.msg === 'job success' ? 'success' : 'error';
      open.delete(key);
    }
  };

  // Only what the processes need: a copy of this environment without the test's own database and
  // provider settings, then theirs.
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^(DATABASE_URL|TEST_DATABASE_URL|SIMULATOR_|PORT$|HOSTNAME$|LOG_LEVEL$|VITEST|NODE_ENV$)/.test(k)) base[k] = v;
  }
  const common = {
    ...base,
    DATABASE_URL: database.appUrl ?? database.url,
    SIMULATOR_URL: simulatorUrl,
    SPIFFE_TRUST_DOMAIN: pki.trustDomain,
    MERIDIAN_SITE: TEST_SITE,
    PROVIDER_TIMEOUT_MS: '2000',
    PROVIDER_RETRY_CAP_MS: '2000',
    NEXT_TELEMETRY_DISABLED: '1',
    ...options.env,
  };
  const simulator = new SystemProcess(
    'simulator',
    'simulator',
    'bin/simulator.ts',
    {
      ...base,
      SIMULATOR_PORT: String(simulatorPort),
      SIMULATOR_ADMIN_PORT: String(simulatorAdminPort),
      SIMULATOR_STATE_FILE: path.join(logDir, 'simulator-state.json'),
      SIMULATOR_TLS_CERT_FILE: pki.server.certFile,
      SIMULATOR_TLS_KEY_FILE: pki.server.keyFile,
      SIMULATOR_CLIENT_CA_FILE: pki.caFile,
      SPIFFE_TRUST_DOMAIN: pki.trustDomain,
      SIMULATOR_ADMIN_TOKEN: simulatorAdminToken,
      SIMULATOR_OPERATION_MS: String(options.operationMs ?? 300),
      // Keep every operation so the checks can account for each one.
      SIMULATOR_RETAIN_OPERATIONS: '1000000',
      SIMULATOR_LOG_LEVEL: 'warn',
    },
    logDir,
    onLine,
    30_000,
  );
  const workers = Array.from(
    { length: options.workers ?? 2 },
    (_, i) =>
      new SystemProcess(
        `worker-${i + 1}`,
        'worker',
        'bin/worker.ts',
        { ...common, ...identity('worker'), WORKER_CONCURRENCY: String(options.workerConcurrency ?? 4), LOG_LEVEL: 'debug' },
        logDir,
        onLine,
        60_000,
      ),
  );
  const authSecret = randomBytes(32).toString('base64url');
  const webPorts = await Promise.all(Array.from({ length: options.webs ?? 2 }, () => freePort()));
  const webs = webPorts.map(
    (port, i) =>
      new SystemProcess(
        `web-${i + 1}`,
        'web',
        'bin/web.ts',
        {
          ...common,
          ...identity('web'),
          PORT: String(port),
          HOSTNAME: '127.0.0.1',
          HTTPS_PORT: '0',
          // Replicas share one secret, as the scale-out recipe of docs/deployment.md says.
          AUTH_SECRET: authSecret,
          SIMULATOR_ADMIN_URL: simulatorAdminUrl,
          SIMULATOR_ADMIN_TOKEN: simulatorAdminToken,
          DB_POOL_SIZE: '10',
          LOG_LEVEL: 'warn',
          RATE_LIMIT_TOKEN_RPS: '100000',
          RATE_LIMIT_TOKEN_BURST: '100000',
          ...options.webEnv,
        },
        logDir,
        onLine,
        120_000,
      ),
  );
  const processes = [simulator, ...workers, ...webs];
  const kills: Kill[] = [];
  const system: System = {
    url: database.url,
    db: handle.db,
    handle,
    webs,
    workers,
    simulator,
    processes,
    webBases: webPorts.map((p) => `http://127.0.0.1:${p}`),
    admin: createHttpProviderAdminClient({ baseUrl: simulatorAdminUrl, token: simulatorAdminToken, tls: { caFile: pki.caFile }, timeoutMs: 10_000 }),
    pki,
    logDir,
    jobRuns,
    kills,
    async kill(p) {
      const pid = p.pid;
      if (pid === undefined) return;
      kills.push({ process: p.name, pid, at: Date.now() });
      await p.stop('SIGKILL');
    },
    async stop({ keep = process.env.SYSTEM_TEST_KEEP === '1' } = {}) {
      await Promise.all([...webs, ...workers].map((p) => p.stop()));
      await simulator.stop();
      await Promise.all(processes.map((p) => p.closeLog()));
      await handle.close();
      if (keep) {
        process.stdout.write(
          `system test logs kept in ${logDir}${process.env.TEST_DATABASE_URL || process.env.DATABASE_URL ? ` (database ${database.url.replace(/:[^:@/]*@/, ':…@')})` : ''}\n`,
        );
        if (!(process.env.TEST_DATABASE_URL || process.env.DATABASE_URL)) await database.drop();
        return;
      }
      await database.drop();
      await rm(logDir, { recursive: true, force: true });
    },
  };
  try {
    await simulator.start();
    lap('simulator');
    await Promise.all(workers.map((w) => w.start()));
    lap('workers');
    // One web at a time: each loads the whole build, and two cold starts at once on two busy cores
    // only make both slower.
    for (const w of webs) await w.start();
    lap('webs');
  } catch (e) {
    await system.stop({ keep: true });
    throw e;
  }
  process.stdout.write(
    `system: started in ${Object.entries(startup)
      .map(([k, v]) => `${k} ${v.toFixed(1)} s`)
      .join(', ')}\n`,
  );
  return system;
}
