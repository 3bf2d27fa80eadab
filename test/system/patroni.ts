/**
 * A three-member PostgreSQL cluster managed by Patroni (Debian's `patroni`), with one etcd
 * (`etcd-server`) as its store, on loopback ports in a directory of its own — what a production
 * deployment runs outside Kubernetes. Settings: `ttl: 10`, `loop_wait: 2`, `retry_timeout: 4`,
 * `synchronous_mode: true` (a commit is acknowledged once a synchronous standby has it, and only
 * that standby may be promoted), `primary_start_timeout: 0` (a crashed leader is failed over at
 * once rather than recovered in place), `use_pg_rewind: true` (a demoted leader rejoins).
 *
 * Each member reaches etcd through a TCP proxy of this process (Patroni's `use_proxies: true`, so
 * it never goes around it): `partition(member)` cuts that member's connections to etcd and refuses
 * new ones until `heal(member)` — the leader cut off from the store, its PostgreSQL still up.
 * Faults: `killPostmaster` (SIGKILL the postmaster only), `loseNode` (SIGKILL Patroni and every
 * PostgreSQL process of the member: the host died), `partition`. The test never promotes: Patroni
 * decides.
 */
import { spawn, spawnSync, execFileSync, type ChildProcess } from 'node:child_process';
import { openSync, readdirSync, existsSync, readFileSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '@/test/global-setup';
import { postgresBinaries } from './replication';

export const PATRONI_SETTINGS = { ttl: 10, loop_wait: 2, retry_timeout: 4 } as const;

/** A TCP proxy to etcd that the test can cut (connections closed, new ones refused) and heal. */
class EtcdProxy {
  private readonly sockets = new Set<net.Socket>();
  private cut = false;
  readonly server: net.Server;
  constructor(private readonly target: number) {
    this.server = net.createServer((client) => {
      if (this.cut) return client.destroy();
      const upstream = net.connect(this.target, '127.0.0.1');
      this.sockets.add(client).add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.pipe(upstream).pipe(client);
    });
  }
  listen(port: number) {
    return new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
  }
  partition() {
    this.cut = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }
  heal() {
    this.cut = false;
  }
  close() {
    this.partition();
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export interface PatroniMember {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  config: string;
  proxy: EtcdProxy;
  patroni?: ChildProcess;
}

export interface ClusterMemberState {
  name: string;
  role: string;
  state: string;
  lag?: number | string;
}

/** The postmaster's pid (from its pid file, if that process is still this data directory's). */
function postmasterOf(dataDir: string): number | undefined {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  const cmdline = existsSync(`/proc/${pid}/cmdline`) ? readFileSync(`/proc/${pid}/cmdline`, 'utf8') : '';
  return cmdline.includes(dataDir) ? pid : undefined;
}

/** Every PostgreSQL process of a data directory: the postmaster and its children. */
function serverProcesses(dataDir: string): number[] {
  const postmaster = postmasterOf(dataDir);
  if (!postmaster) return [];
  const children = spawnSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' })
    .stdout.split('\n')
    .map(Number)
    .filter(Boolean);
  return [postmaster, ...children];
}

const kill = (pid: number | undefined, signal: NodeJS.Signals) => {
  if (!pid) return;
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
};

export interface PatroniCluster {
  members: PatroniMember[];
  dir: string;
  /** All three members, read-write wanted: what Meridian is given. */
  url(database: string): string;
  /** The cluster as Patroni sees it (GET /cluster on the first member that answers). */
  state(): Promise<ClusterMemberState[]>;
  /** The current leader (other than `not`, when given); waits until there is one. */
  leader(timeoutMs?: number, not?: PatroniMember): Promise<PatroniMember>;
  /** Waits until a leader, a synchronous standby and a streaming replica are there (all three members up). */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** A single-host URL of a member. */
  memberUrl(m: PatroniMember, database: string): string;
  killPostmaster(m: PatroniMember): void;
  loseNode(m: PatroniMember): void;
  /** Starts the member's Patroni again (after loseNode). */
  startMember(m: PatroniMember): void;
  partition(m: PatroniMember): void;
  heal(m: PatroniMember): void;
  stop(options?: { keep?: boolean }): Promise<void>;
}

export async function startPatroniCluster(options: { logDir?: string } = {}): Promise<PatroniCluster> {
  const bin = postgresBinaries();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'meridian-patroni-'));
  chmodSync(dir, 0o777);
  const logDir = options.logDir ?? dir;
  const [etcdClient, etcdPeer] = [await freePort(), await freePort()];
  const etcd = spawn(
    'etcd',
    [
      '--name=meridian-test',
      `--data-dir=${path.join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=meridian-test=http://127.0.0.1:${etcdPeer}`,
      '--log-level=warn',
    ],
    { stdio: ['ignore', 'ignore', openSync(path.join(logDir, 'etcd.log'), 'a')] },
  );
  const etcdDeadline = Date.now() + 30_000;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${etcdClient}/health`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > etcdDeadline) throw new Error('etcd did not start');
    await new Promise((r) => setTimeout(r, 200));
  }

  const members: PatroniMember[] = [];
  for (const name of ['pg1', 'pg2', 'pg3']) {
    const m: PatroniMember = {
      name,
      pgPort: await freePort(),
      restPort: await freePort(),
      dataDir: path.join(dir, name),
      config: path.join(dir, `${name}.yml`),
      proxy: new EtcdProxy(etcdClient),
    };
    const proxyPort = await freePort();
    await m.proxy.listen(proxyPort);
    mkdirSync(path.join(dir, `${name}-run`), { mode: 0o777 });
    chmodSync(path.join(dir, `${name}-run`), 0o777);
    // JSON is YAML: the configuration Patroni reads.
    const config = {
      scope: 'meridian',
      name,
      restapi: { listen: `127.0.0.1:${m.restPort}`, connect_address: `127.0.0.1:${m.restPort}` },
      etcd3: { hosts: [`127.0.0.1:${proxyPort}`], use_proxies: true },
      bootstrap: {
        dcs: {
          ...PATRONI_SETTINGS,
          maximum_lag_on_failover: 1048576,
          synchronous_mode: true,
          primary_start_timeout: 0,
          postgresql: {
            use_pg_rewind: true,
            use_slots: true,
            parameters: {
              max_connections: 200,
              // logical: each web process's change feed decodes the WAL (docs/watch.md).
              wal_level: 'logical',
              hot_standby: 'on',
              max_wal_senders: 40,
              max_replication_slots: 40,
              wal_log_hints: 'on',
              wal_keep_size: '512MB',
              // The test kills processes, not the host: the page cache survives, fsync only costs time.
              fsync: 'off',
              // For a failed run's post-mortem: which client's session (application name, client
              // port) ran into what, and when each session began.
              log_line_prefix: '%m [%p] %a %r ',
              log_connections: 'on',
            },
          },
        },
        initdb: [{ encoding: 'UTF8' }, { locale: 'C' }],
      },
      postgresql: {
        listen: `127.0.0.1:${m.pgPort}`,
        connect_address: `127.0.0.1:${m.pgPort}`,
        data_dir: m.dataDir,
        bin_dir: bin,
        pgpass: path.join(dir, `${name}-run`, 'pgpass'),
        pg_hba: ['local all all trust', 'host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust'],
        authentication: {
          superuser: { username: 'postgres', password: 'postgres' },
          replication: { username: 'postgres', password: 'postgres' },
          rewind: { username: 'postgres', password: 'postgres' },
        },
        parameters: { unix_socket_directories: path.join(dir, `${name}-run`) },
      },
      log: { level: 'INFO' },
    };
    writeFileSync(m.config, JSON.stringify(config, null, 2));
    chmodSync(m.config, 0o644);
    members.push(m);
  }

  const startMember = (m: PatroniMember) => {
    const log = openSync(path.join(logDir, `patroni-${m.name}.log`), 'a');
    // setpriv execs Patroni itself (no intermediate process): m.patroni.pid is Patroni's.
    const asRoot = process.getuid?.() === 0;
    const [cmd, args] = asRoot ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', 'patroni', m.config]] : ['patroni', [m.config]];
    m.patroni = spawn(cmd, args, { stdio: ['ignore', log, log], env: { ...process.env, HOME: path.join(dir, `${m.name}-run`) } });
  };

  const restGet = async (m: PatroniMember, p: string) => {
    const res = await fetch(`http://127.0.0.1:${m.restPort}${p}`, { signal: AbortSignal.timeout(2_000) });
    return { status: res.status, body: await res.text() };
  };

  const cluster: PatroniCluster = {
    members,
    dir,
    url: (database) => `postgres://postgres@${members.map((m) => `127.0.0.1:${m.pgPort}`).join(',')}/${database}?target_session_attrs=read-write`,
    memberUrl: (m, database) => `postgres://postgres@127.0.0.1:${m.pgPort}/${database}`,
    async state() {
      for (const m of members) {
        try {
          const { status, body } = await restGet(m, '/cluster');
          if (status === 200) return (JSON.parse(body) as { members: ClusterMemberState[] }).members;
        } catch {
          // this member's REST API is down: ask the next
        }
      }
      return [];
    },
    async leader(timeoutMs = 60_000, not?: PatroniMember) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const leader = (await cluster.state()).find((s) => s.role === 'leader' && s.state === 'running' && s.name !== not?.name);
        if (leader) return members.find((m) => m.name === leader.name)!;
        if (Date.now() > deadline) throw new Error('no Patroni leader');
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    async waitHealthy(timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const last = await cluster.state();
        // Patroni 3.0 says `running` of a replica that streams, later versions `streaming`.
        const up = (s: ClusterMemberState) => s.state === 'running' || s.state === 'streaming';
        const roles = last.filter(up).map((s) => s.role);
        if (roles.length === 3 && roles.includes('leader') && roles.includes('sync_standby') && roles.includes('replica')) return;
        if (Date.now() > deadline) throw new Error(`the Patroni cluster did not become healthy: ${JSON.stringify(last)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    },
    killPostmaster(m) {
      kill(postmasterOf(m.dataDir), 'SIGKILL');
    },
    loseNode(m) {
      const pids = serverProcesses(m.dataDir);
      kill(m.patroni?.pid, 'SIGKILL');
      for (const pid of pids) kill(pid, 'SIGKILL');
      m.patroni = undefined;
    },
    startMember,
    partition(m) {
      m.proxy.partition();
    },
    heal(m) {
      m.proxy.heal();
    },
    async stop({ keep = false } = {}) {
      for (const m of members) {
        kill(m.patroni?.pid, 'SIGKILL');
        await m.proxy.close();
      }
      // Patroni gone, nothing starts PostgreSQL again: every process still holding a data directory.
      for (const m of members) for (const pid of serverProcesses(m.dataDir)) kill(pid, 'SIGKILL');
      for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
        try {
          if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dir)) kill(Number(entry), 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      kill(etcd.pid, 'SIGKILL');
      if (keep) process.stdout.write(`patroni: data directories and logs kept in ${dir}\n`);
      else await rm(dir, { recursive: true, force: true });
    },
  };

  try {
    for (const m of members) {
      startMember(m);
      // The first member bootstraps the cluster; the others then clone it.
      if (m === members[0]) await cluster.leader(90_000);
    }
    await cluster.waitHealthy(180_000);
  } catch (e) {
    await cluster.stop({ keep: true });
    throw e;
  }
  return cluster;
}

/** Whether Debian's patroni and etcd are installed (the stage needs both). */
export function patroniMissing(): string | undefined {
  for (const tool of ['patroni', 'etcd']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed (Debian: apt-get install patroni etcd-server python3-etcd)`;
    }
  }
  return undefined;
}
