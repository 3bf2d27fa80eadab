/**
 * Provider simulator entry point: `node --import tsx bin/simulator.ts` (npm run start:simulator);
 * with `--backup FILE` or `--restore FILE`, copies the state file out or in and exits (simulator/backup.ts).
 *
 * Exit codes: 0 after SIGTERM/SIGINT; 78 when start-up is refused (invalid environment, corrupt or
 * unknown-version state file — restarting will not help); 70 when the crash fault fires; 1 otherwise.
 */
import { ConfigError, EXIT_CONFIG, loadSimulatorConfig, startSimulator, StateFileError } from '../simulator';
import { backupState, restoreState } from '../simulator/backup';
import { stateFileOf } from '../simulator/config';
import { createLogger, describeError } from '../simulator/logger';
import { PolicyError } from '../simulator/policy';
import { sendHeartbeats } from './lib/supervisor';

/** `--backup FILE` / `--restore FILE`: one-shot, then exit (0, or 78 when the file is refused). */
async function stateCommand(args: string[]): Promise<boolean> {
  const [flag, file] = args;
  if (flag !== '--backup' && flag !== '--restore') return false;
  const logger = createLogger('info');
  if (!file) {
    logger.error(`${flag} needs a file: npm run start:simulator -- ${flag} FILE`);
    process.exit(EXIT_CONFIG);
  }
  try {
    const stateFile = stateFileOf(process.env);
    if (flag === '--backup') logger.info('backup written', await backupState(stateFile, file));
    else logger.info('state restored (the simulator migrates an older version at its next start)', await restoreState(file, stateFile));
  } catch (error) {
    if (error instanceof StateFileError || error instanceof ConfigError) {
      logger.error(error.message);
      process.exit(EXIT_CONFIG);
    }
    throw error;
  }
  return true;
}

async function main(): Promise<void> {
  if (await stateCommand(process.argv.slice(2))) return;
  sendHeartbeats();
  let config;
  try {
    config = loadSimulatorConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      createLogger('info').error(error.message);
      process.exit(EXIT_CONFIG);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  if (!['127.0.0.1', '::1', 'localhost'].includes(config.host)) {
    logger.warn('listening beyond loopback: the runtime and admin APIs are reachable from the network', { host: config.host });
  }

  let simulator;
  try {
    simulator = await startSimulator(config, logger);
  } catch (error) {
    if (error instanceof StateFileError) {
      logger.error(error.message, { stateFile: error.filePath });
      process.exit(EXIT_CONFIG);
    }
    if (error instanceof PolicyError) {
      logger.error(error.message, { policyFile: config.policyFile });
      process.exit(EXIT_CONFIG);
    }
    logger.error('simulator failed to start', { error: describeError(error) });
    process.exit(1);
  }
  logger.info('listening', {
    host: simulator.host,
    port: simulator.port,
    adminPort: simulator.adminPort,
    trustDomain: config.tls.trustDomain,
    policyFile: config.policyFile,
    stateFile: config.stateFile,
    adminApi: config.adminToken !== null,
    operationMs: config.operationMs,
  });
  // Under the `npm start` supervisor: say we are up, and stop when the supervisor goes away.
  process.send?.({ type: 'ready', role: 'simulator' });
  process.on('disconnect', () => stop('supervisor gone'));

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping', { signal });
    simulator.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('shutdown failed', { error: describeError(error) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${JSON.stringify({ ts: new Date().toISOString(), level: 'error', service: 'simulator', msg: 'fatal', error: describeError(error) })}\n`,
  );
  process.exit(1);
});
