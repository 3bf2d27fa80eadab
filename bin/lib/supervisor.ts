import { fork, type ChildProcess } from 'node:child_process';
import type { EmbeddedDatabase } from './embedded-postgres';

export interface ManagedProcessOptions {
  name: string;
  script: string;
  env: NodeJS.ProcessEnv;
  /** Restart when it exits unexpectedly, with capped exponential backoff. */
  restart: boolean;
  /** Exit codes that mean "restarting will not help" (e.g. the simulator's 78 for a bad state file). */
  fatalExitCodes?: number[];
  /**
   * Kill and restart the child when it sends no heartbeat (see `sendHeartbeats`) for this long: a
   * process whose event loop is blocked or stopped (SIGSTOP) is as good as dead. Off when unset.
   */
  heartbeatTimeoutMs?: number;
  log: (line: string) => void;
}

/** How long a child may take to send its first heartbeat (loading its modules). */
const STARTUP_GRACE_MS = 120_000;

/** How often a supervised child says it is alive. */
export const HEARTBEAT_INTERVAL_MS = 2_000;

/**
 * In a supervised child: tells the supervisor over IPC, every HEARTBEAT_INTERVAL_MS, that the event
 * loop still turns. Does nothing when the process was not started by a supervisor.
 */
export function sendHeartbeats(): void {
  if (!process.send) return;
  const beat = () => {
    if (process.connected) process.send?.({ type: 'heartbeat' });
  };
  setInterval(beat, HEARTBEAT_INTERVAL_MS).unref();
}

/**
 * A child process run with `node --import tsx`, connected by IPC so it exits when the supervisor
 * disappears (no orphans), restarted with capped backoff (1 s doubling to 30 s, reset after a
 * minute of healthy running) when it dies unexpectedly.
 */
export class ManagedProcess {
  private child?: ChildProcess;
  private stopping = false;
  private backoffMs = 1000;
  private restartTimer?: NodeJS.Timeout;
  private startedAt = 0;
  private watchdog?: NodeJS.Timeout;
  private lastHeartbeat = 0;
  restarts = 0;

  constructor(private readonly options: ManagedProcessOptions) {}

  start(): Promise<void> {
    this.startedAt = Date.now();
    const child = fork(this.options.script, [], {
      execArgv: ['--import', 'tsx'],
      env: this.options.env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child = child;
    const ready = new Promise<void>((resolve) => {
      child.on('message', (m: { type?: string }) => m?.type === 'ready' && resolve());
      child.once('exit', () => resolve());
    });
    this.watch(child);
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
      clearInterval(this.watchdog);
      if (this.stopping) return;
      this.options.log(`${this.options.name} exited (${signal ?? `code ${code}`})`);
      if (!this.options.restart) return;
      if (code !== null && this.options.fatalExitCodes?.includes(code)) {
        this.options.log(`${this.options.name} refused to start (code ${code}); not restarting — fix the cause and restart it from the console or npm start`);
        return;
      }
      if (Date.now() - this.startedAt > 60_000) this.backoffMs = 1000;
      const delay = this.backoffMs;
      this.backoffMs = Math.min(this.backoffMs * 2, 30_000);
      this.restarts++;
      this.options.log(`restarting ${this.options.name} in ${delay} ms`);
      this.restartTimer = setTimeout(() => void this.start(), delay);
    });
    return ready;
  }

  /**
   * Kills the child (SIGKILL; the exit handler restarts it) when its heartbeats stop. Until its
   * first heartbeat the child is still loading its modules, which on a busy machine takes longer
   * than a heartbeat timeout: it gets STARTUP_GRACE_MS for that.
   */
  private watch(child: ChildProcess) {
    const timeout = this.options.heartbeatTimeoutMs;
    clearInterval(this.watchdog);
    if (!timeout) return;
    this.lastHeartbeat = Date.now();
    let started = false;
    child.on('message', (m: { type?: string }) => {
      if (m?.type !== 'heartbeat' && m?.type !== 'ready') return;
      started = true;
      this.lastHeartbeat = Date.now();
    });
    this.watchdog = setInterval(
      () => {
        if (this.child !== child || this.stopping) return;
        const silent = Date.now() - this.lastHeartbeat;
        if (silent < (started ? timeout : Math.max(timeout, STARTUP_GRACE_MS))) return;
        clearInterval(this.watchdog);
        this.options.log(`${this.options.name} sent no heartbeat for ${Math.round(silent / 1000)} s (hung or stopped); killing it`);
        child.kill('SIGKILL');
      },
      Math.min(1_000, timeout),
    );
    this.watchdog.unref();
  }

  /** Starts the process now if it is not running (cancelling a pending backoff), resetting the backoff. */
  async restartNow(): Promise<boolean> {
    if (this.stopping) return false;
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) return false;
    clearTimeout(this.restartTimer);
    this.backoffMs = 1000;
    this.options.log(`starting ${this.options.name} on request`);
    await this.start();
    return true;
  }

  get running(): boolean {
    return Boolean(this.child && this.child.exitCode === null && this.child.signalCode === null);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Asks the child to stop (SIGTERM), then kills it after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    clearInterval(this.watchdog);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.options.log(`${this.options.name} did not stop in ${graceMs} ms; killing it`);
        child.kill('SIGKILL');
      }, graceMs);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
      // A stopped (SIGSTOP) child would hold SIGTERM until continued.
      child.kill('SIGCONT');
    });
  }
}

export interface SupervisedDatabaseOptions {
  /**
   * Starts the server on its data directory (crash recovery happens in PostgreSQL itself). On a
   * restart the directory must already hold a database: a fresh one would be an empty system.
   */
  start: (restart: boolean) => Promise<EmbeddedDatabase>;
  /** How long to keep trying to restart a server that died before giving up. */
  restartWindowMs: number;
  /** Called once the server died and could not be started again within the window. */
  onFatal: (message: string) => void;
  log: (line: string) => void;
}

/**
 * The embedded PostgreSQL under supervision: its exit is noticed at once (the postmaster is our
 * child), logged, and the server is started again on the same data directory, where PostgreSQL
 * replays its WAL (crash recovery). Web and worker keep running and reconnect by themselves: their
 * pools open new connections on the next query. A kill -9 leaves the old server's backends behind
 * for a moment (they exit when they see the postmaster gone) and their shared memory blocks a new
 * postmaster until then, so starts are retried with backoff until `restartWindowMs` has passed.
 */
export class SupervisedDatabase {
  private current?: EmbeddedDatabase;
  private stopping = false;
  private restarting?: Promise<void>;
  restarts = 0;

  constructor(private readonly options: SupervisedDatabaseOptions) {}

  async start(): Promise<EmbeddedDatabase> {
    const db = await this.options.start(false);
    this.adopt(db);
    return db;
  }

  private adopt(db: EmbeddedDatabase) {
    this.current = db;
    void db.exited.then(({ code, signal }) => {
      if (this.current !== db || this.stopping) return;
      this.current = undefined;
      this.options.log(`PostgreSQL exited unexpectedly (${signal ?? `code ${code}`}, pid ${db.pid}); restarting it on the same data directory`);
      this.restarting = this.restart().finally(() => (this.restarting = undefined));
    });
  }

  private async restart() {
    const deadline = Date.now() + this.options.restartWindowMs;
    let delay = 250;
    let lastError = 'no attempt made';
    while (!this.stopping) {
      try {
        const started = Date.now();
        const db = await this.options.start(true);
        if (this.stopping) {
          await db.stop();
          return;
        }
        this.restarts++;
        this.options.log(`PostgreSQL is back (pid ${db.pid}, recovered in ${Date.now() - started} ms)`);
        this.adopt(db);
        return;
      } catch (e) {
        lastError = e instanceof Error ? e.message : String(e ?? 'the server exited during start-up');
      }
      if (Date.now() + delay > deadline) break;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 5_000);
    }
    if (this.stopping) return;
    this.options.onFatal(
      `PostgreSQL died and could not be restarted within ${Math.round(this.options.restartWindowMs / 1000)} s (${lastError}); ` +
        'stopping Meridian. Check the server log in the data directory, free the port or the disk, and run npm start again.',
    );
  }

  /**
   * From now on an exit is not restarted: the system is shutting down (a signal sent to the whole
   * process group reaches PostgreSQL too, and may stop it before `stop` is called).
   */
  shuttingDown(): void {
    this.stopping = true;
  }

  /** Stops the server, after a restart in flight has finished (its server is stopped too); at once when none runs. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.restarting;
    await this.current?.stop();
  }
}
