/**
 * `npm start`: the whole system on one machine. Starts an embedded PostgreSQL when DATABASE_URL is
 * unset, applies migrations, seeds demo data on first start, builds the web app if needed, then
 * supervises the provider simulator, the worker and the web server — and the embedded PostgreSQL
 * itself, which is started again on its data directory when it dies. Ctrl-C / SIGTERM (to this
 * process or to the `npm start` above it) stops the children, then PostgreSQL. The whole environment
 * (server/env.ts) is validated first: an invalid value stops `npm start` before anything starts.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDb } from '../db/client';
import { describeMigration, migrateDatabase } from '../db/migrate';
import { roleOfUrl } from '../db/roles';
import { seedDemoData } from './lib/seed';
import { EXIT_CONFIG } from '../lib/env-schema';
import { dataDir, envOrExit } from '../server/env';
import { ensureBuild } from './lib/build';
import { EMBEDDED_APP_ROLE, startEmbeddedPostgres } from './lib/embedded-postgres';
import { listenForControl, simulatorSettings } from './lib/control';
import { metricsToken } from './lib/metrics-token';
import { startProviderPki } from './lib/provider-pki';
import { ManagedProcess, SupervisedDatabase } from './lib/supervisor';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (line: string) => process.stdout.write(`[meridian] ${line}\n`);

async function main() {
  const e = envOrExit('npm start');
  let embedded: SupervisedDatabase | undefined;
  // The processes connect as `url`'s role; migrations and the seed run as `ownerUrl`'s (db/roles.ts).
  let url = e.DATABASE_URL;
  let ownerUrl = e.DATABASE_OWNER_URL ?? url;
  let appRole = e.DATABASE_OWNER_URL && url ? roleOfUrl(url) : undefined;
  const children: ManagedProcess[] = [];
  let control: { close(): Promise<void> } | undefined;
  let stopPki = () => {};
  let shuttingDown = false;

  const shutdown = async (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    embedded?.shuttingDown();
    say('stopping…');
    stopPki();
    await control?.close().catch(() => {});
    await Promise.all(children.map((c) => c.stop()));
    if (embedded) {
      say('stopping PostgreSQL');
      await Promise.race([embedded.stop(), new Promise((r) => setTimeout(r, 15_000))]).catch(() => {});
    }
    say('stopped');
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  process.on('SIGHUP', () => void shutdown(0));
  watchParent(() => {
    say('the process that started Meridian went away (npm start stopped); stopping');
    void shutdown(0);
  });

  if (!url) {
    say(`starting embedded PostgreSQL (data in ${path.join(dataDir(), 'postgres')}, port ${e.EMBEDDED_PG_PORT})`);
    embedded = new SupervisedDatabase({
      start: (restart) => startEmbeddedPostgres({ dataDir: dataDir(), port: e.EMBEDDED_PG_PORT, database: 'meridian', mustExist: restart, log: () => {} }),
      restartWindowMs: e.DB_RESTART_WINDOW_SECONDS * 1000,
      log: say,
      onFatal: (message) => {
        process.stderr.write(`[meridian] ${message}\n`);
        void shutdown(1);
      },
    });
    const started = await embedded.start();
    [url, ownerUrl, appRole] = [started.appUrl, started.url, EMBEDDED_APP_ROLE];
  }
  if (!url || !ownerUrl) throw new Error('no database');
  say('applying migrations');
  say(describeMigration(await migrateDatabase(ownerUrl, { appRole })));

  const handle = createDb(ownerUrl, { max: 2, applicationName: 'meridian-start' });
  try {
    const credentials = await seedDemoData(handle.db, { password: e.MERIDIAN_DEMO_PASSWORD });
    if (credentials) {
      say('seeded demo data. Demo sign-ins (shown once):');
      for (const c of credentials) say(`  ${c.email.padEnd(24)} ${e.MERIDIAN_DEMO_PASSWORD ? '(MERIDIAN_DEMO_PASSWORD)' : c.password}`);
    }
  } finally {
    await handle.close();
  }

  await ensureBuild(root, say);
  if (shuttingDown) return;

  const sim = await simulatorSettings(dataDir(), e);
  const metrics = await metricsToken(dataDir(), e.METRICS_TOKEN);
  // The provider protocol's identities: given as files (production: cert-manager's or SPIRE's), or made here.
  const pki = e.PROVIDER_TLS_CERT_FILE
    ? undefined
    : await startProviderPki({
        dataDir: dataDir(),
        trustDomain: e.SPIFFE_TRUST_DOMAIN,
        site: e.MERIDIAN_SITE,
        ttlMinutes: e.PROVIDER_CERT_TTL_MINUTES,
        log: say,
      });
  stopPki = () => pki?.stop();
  const identity = (role: 'web' | 'worker') =>
    pki ? { PROVIDER_TLS_CERT_FILE: pki[role].certFile, PROVIDER_TLS_KEY_FILE: pki[role].keyFile, PROVIDER_TLS_CA_FILE: pki.caFile } : {};
  const childEnv = {
    ...process.env,
    DATABASE_URL: url,
    METRICS_TOKEN: metrics.token,
    NEXT_TELEMETRY_DISABLED: '1',
    SIMULATOR_URL: sim.url,
    SIMULATOR_ADMIN_URL: sim.adminUrl,
    SIMULATOR_ADMIN_TOKEN: sim.adminToken,
  };
  const simulatorTls = pki
    ? { SIMULATOR_TLS_CERT_FILE: pki.simulator.certFile, SIMULATOR_TLS_KEY_FILE: pki.simulator.keyFile, SIMULATOR_CLIENT_CA_FILE: pki.caFile }
    : {};
  const simulator = new ManagedProcess({
    name: 'simulator',
    script: path.join(root, 'bin', 'simulator.ts'),
    env: { ...childEnv, ...simulatorTls, SIMULATOR_PORT: String(sim.port), SIMULATOR_ADMIN_PORT: String(sim.adminPort), DATABASE_URL: '' },
    restart: true,
    fatalExitCodes: [EXIT_CONFIG],
    heartbeatTimeoutMs: e.SUPERVISOR_HEARTBEAT_TIMEOUT_SECONDS * 1000,
    log: say,
  });
  const heartbeatTimeoutMs = e.SUPERVISOR_HEARTBEAT_TIMEOUT_SECONDS * 1000;
  const worker = new ManagedProcess({
    name: 'worker',
    script: path.join(root, 'bin', 'worker.ts'),
    env: { ...childEnv, ...identity('worker') },
    restart: true,
    heartbeatTimeoutMs,
    log: say,
  });
  const web = new ManagedProcess({
    name: 'web',
    script: path.join(root, 'bin', 'web.ts'),
    env: { ...childEnv, ...identity('web') },
    restart: true,
    heartbeatTimeoutMs,
    log: say,
  });
  children.push(web, worker, simulator);
  await simulator.start();
  await Promise.all([worker.start(), web.start()]);
  // The QA console's "restart simulator" button reaches us through the database (any web replica can ask).
  control = await listenForControl(url, async (command) => {
    if (command === 'restart:simulator') await simulator.restartNow();
  });
  say(`Meridian is running: http://localhost:${e.PORT}`);
  say(
    `/metrics needs Authorization: Bearer <token>; the token is ${metrics.file ? `in ${metrics.file}` : 'METRICS_TOKEN'}` +
      (e.METRICS_PUBLIC === '1' ? ' (METRICS_PUBLIC=1: without it, the aggregate series only)' : ''),
  );
}

/**
 * Calls `onGone` once when the process that started this one exits: `npm start` runs us through
 * npm and a shell, and a SIGTERM or SIGKILL sent to npm does not reach us; we notice that we were
 * re-parented instead, so no supervisor is left serving after its `npm start` is gone.
 */
function watchParent(onGone: () => void) {
  const parent = process.ppid;
  if (parent <= 1) return;
  const timer = setInterval(() => {
    let alive = process.ppid === parent;
    if (alive) {
      try {
        process.kill(parent, 0);
      } catch {
        alive = false;
      }
    }
    if (alive) return;
    clearInterval(timer);
    onGone();
  }, 500);
  timer.unref();
}

main().catch((err) => {
  process.stderr.write(`[meridian] start failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
