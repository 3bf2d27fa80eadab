/**
 * A primary and a synchronous streaming standby of Debian's PostgreSQL server binaries
 * (`/usr/lib/postgresql/<version>/bin`), on loopback ports, in a directory of their own: what a
 * production deployment runs (Patroni or CloudNativePG manage the same two servers), small enough
 * for a test to kill the primary (every process of it, SIGKILL: the host died), stall it (SIGSTOP),
 * and promote the standby.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { freePort } from '@/test/global-setup';

/** The newest installed Debian PostgreSQL server binaries (`/usr/lib/postgresql/<version>/bin`). */
export function postgresBinaries(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'initdb'))) : [];
  if (versions.length === 0) throw new Error(`no PostgreSQL server binaries in ${root}/*/bin (apt-get install postgresql)`);
  return path.join(root, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin');
}

/** Runs a server binary as the `postgres` system user (PostgreSQL refuses to run as root). */
function asPostgres(bin: string, args: string[]): string {
  const asRoot = process.getuid?.() === 0;
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${path.basename(bin)} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** The postmaster's pid and every process it started. */
function serverProcesses(dataDir: string): number[] {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return [];
  const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  // A stale pid file (the server was killed) may name a pid that now belongs to someone else.
  const cmdline = existsSync(`/proc/${postmaster}/cmdline`) ? readFileSync(`/proc/${postmaster}/cmdline`, 'utf8') : '';
  if (!cmdline.includes(dataDir)) return [];
  const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' })
    .split('\n')
    .map(Number)
    .filter(Boolean);
  return [postmaster, ...children];
}

export interface ReplicatedPair {
  primaryPort: number;
  standbyPort: number;
  /** `postgres://…@primary,standby/<database>?target_session_attrs=read-write`: what Meridian is given. */
  url(database: string): string;
  /** A single-host URL of the primary (to create the database). */
  primaryUrl(database: string): string;
  /** Waits until the standby confirms commits synchronously. */
  waitForSync(timeoutMs?: number): Promise<void>;
  /** SIGKILLs the primary's postmaster and every backend of it. */
  killPrimary(): void;
  /** SIGSTOPs every process of the primary; `resume` SIGCONTs them. */
  stallPrimary(): { resume(): void };
  /** Promotes the standby to primary (waits until it accepts writes). */
  promote(): void;
  /** Stops both servers; with `keep`, leaves their data directories (`dir`) for a post-mortem. */
  stop(options?: { keep?: boolean }): Promise<void>;
  /** The directory holding both data directories and their logs. */
  dir: string;
}

export async function startReplicatedPair(): Promise<ReplicatedPair> {
  const bin = postgresBinaries();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'meridian-replication-'));
  chmodSync(dir, 0o777);
  const primary = path.join(dir, 'primary');
  const standby = path.join(dir, 'standby');
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const tool = (name: string) => path.join(bin, name);

  asPostgres(tool('initdb'), ['-D', primary, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C']);
  appendFileSync(
    path.join(primary, 'postgresql.conf'),
    [
      `port = ${primaryPort}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${dir}'`,
      'max_connections = 200',
      // logical: each web process's change feed decodes the WAL (docs/watch.md).
      'wal_level = logical',
      'max_replication_slots = 32',
      'max_wal_senders = 40',
      'wal_keep_size = 512MB',
      // A commit is acknowledged once the standby has it: nothing acknowledged is lost in a failover.
      `synchronous_standby_names = 'standby1'`,
      'synchronous_commit = on',
      // The test kills processes, not the host: the page cache survives, fsync only costs time.
      'fsync = off',
      '',
    ].join('\n'),
  );
  writeFileSync(
    path.join(primary, 'pg_hba.conf'),
    ['local all all trust', 'host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust', ''].join('\n'),
  );
  asPostgres(tool('pg_ctl'), ['-D', primary, '-l', path.join(dir, 'primary.log'), '-w', '-t', '60', 'start']);

  asPostgres(tool('pg_basebackup'), ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', standby, '-X', 'stream', '-R']);
  // Later lines win: the standby's own port, and no synchronous standby of its own once promoted
  // (it would wait for one forever).
  appendFileSync(path.join(standby, 'postgresql.conf'), [`port = ${standbyPort}`, `synchronous_standby_names = ''`, ''].join('\n'));
  appendFileSync(
    path.join(standby, 'postgresql.auto.conf'),
    `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres application_name=standby1'\n`,
  );
  asPostgres(tool('pg_ctl'), ['-D', standby, '-l', path.join(dir, 'standby.log'), '-w', '-t', '60', 'start']);

  const single = (port: number, database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const pair: ReplicatedPair = {
    primaryPort,
    standbyPort,
    url: (database) => `postgres://postgres@127.0.0.1:${primaryPort},127.0.0.1:${standbyPort}/${database}?target_session_attrs=read-write`,
    primaryUrl: (database) => single(primaryPort, database),
    async waitForSync(timeoutMs = 30_000) {
      const sql = postgres(single(primaryPort, 'postgres'), { max: 1, onnotice: () => {} });
      try {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const rows = await sql`select sync_state from pg_stat_replication where application_name = 'standby1'`;
          if (rows[0]?.sync_state === 'sync') return;
          if (Date.now() > deadline) throw new Error('the standby did not become synchronous');
          await new Promise((r) => setTimeout(r, 200));
        }
      } finally {
        await sql.end();
      }
    },
    killPrimary() {
      for (const pid of serverProcesses(primary)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    },
    stallPrimary() {
      const pids = serverProcesses(primary);
      for (const pid of pids) process.kill(pid, 'SIGSTOP');
      return {
        resume: () => {
          for (const pid of pids) {
            try {
              process.kill(pid, 'SIGCONT');
            } catch {
              // gone meanwhile
            }
          }
        },
      };
    },
    promote() {
      asPostgres(tool('pg_ctl'), ['-D', standby, '-w', '-t', '60', 'promote']);
    },
    dir,
    async stop({ keep = false } = {}) {
      for (const d of [primary, standby]) {
        if (serverProcesses(d).length === 0) continue;
        try {
          asPostgres(tool('pg_ctl'), ['-D', d, '-m', 'immediate', '-w', 'stop']);
        } catch {
          for (const pid of serverProcesses(d)) process.kill(pid, 'SIGKILL');
        }
      }
      if (keep) process.stdout.write(`replication: data directories kept in ${dir}\n`);
      else await rm(dir, { recursive: true, force: true });
    },
  };
  return pair;
}
