import { fork, type ChildProcess } from 'node:child_process';

export interface ManagedProcessOptions {
  name: string;
  script: string;
  env: NodeJS.ProcessEnv;
  /** Restart when it exits unexpectedly, with capped exponential backoff. */
  restart: boolean;
  /** Exit codes that mean "restarting will not help" (e.g. the simulator's 78 for a bad state file). */
  fatalExitCodes?: number[];
  log: (line: string) => void;
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
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
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
    });
  }
}
