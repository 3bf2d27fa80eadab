/**
 * One worker process: graphile-worker running Meridian's tasks. Needs DATABASE_URL; several may run
 * against one database and share the jobs. An invalid environment stops it at once with the
 * variable named (server/env.ts).
 */
import { configureDbPool, getDbHandle } from '../db/client';
import { dbPoolSettings, envOrExit } from '../server/env';
import { startWorker } from '../server/worker/runner';
import { log, logError } from '../server/observability/log';
import { sendHeartbeats } from './lib/supervisor';

async function main() {
  const e = envOrExit('worker');
  sendHeartbeats();
  const pool = dbPoolSettings('worker');
  configureDbPool(pool);
  const worker = await startWorker(getDbHandle(), pool.url, { concurrency: e.WORKER_CONCURRENCY });
  process.send?.({ type: 'ready', role: 'worker' });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log('info', 'worker stopping');
    await worker.stop().catch((err) => logError('worker stop', err));
    await getDbHandle()
      .close()
      .catch(() => {});
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('disconnect', stop);
  await worker.promise;
}

main().catch((err) => {
  logError('worker failed', err);
  process.exit(1);
});
