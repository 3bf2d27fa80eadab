/**
 * The provider simulator: a standalone HTTP service (see bin/simulator.ts) that stands in for a bare-metal
 * provider, with durable, fenced, idempotent operations and fault injection.
 */
import type { AddressInfo } from 'node:net';
import { EXIT_CRASH_FAULT, type SimulatorConfig } from './config';
import { createSimulatorHttpServer } from './http-server';
import type { Logger } from './logger';
import { SimulatorService } from './service';

export { ConfigError, EXIT_CONFIG, EXIT_CRASH_FAULT, loadSimulatorConfig, type SimulatorConfig } from './config';
export { StateFileError } from './state';

export interface RunningSimulator {
  /** The bound port (useful with SIMULATOR_PORT=0). */
  port: number;
  host: string;
  /** Graceful stop: stop listening, reset held requests, flush pending writes. */
  close(): Promise<void>;
}

export interface SimulatorHooks {
  /** The crash fault fired; default: exit with {@link EXIT_CRASH_FAULT}. */
  onCrash?: () => void;
  /** A state write failed (fail-stop); default: exit 1. */
  onFatal?: (error: unknown) => void;
}

/**
 * Loads the state (throws StateFileError if it cannot be used) and starts listening.
 * Resolves once the state is durable and the port is bound.
 */
export async function startSimulator(config: SimulatorConfig, logger: Logger, hooks: SimulatorHooks = {}): Promise<RunningSimulator> {
  const onCrash =
    hooks.onCrash ??
    (() => {
      logger.warn('crash fault fired: exiting', { exitCode: EXIT_CRASH_FAULT });
      process.exit(EXIT_CRASH_FAULT);
    });
  const onFatal =
    hooks.onFatal ??
    ((error: unknown) => {
      logger.error('state write failed: stopping so that memory never runs ahead of the disk', {
        stateFile: config.stateFile,
        error: error instanceof Error ? error.message : String(error),
      });
      process.exit(1);
    });

  const service = await SimulatorService.open(config, logger, onFatal);
  const http = createSimulatorHttpServer({ service, config, logger, onCrash });
  await new Promise<void>((resolve, reject) => {
    http.server.once('error', reject);
    http.server.listen(config.port, config.host, () => {
      http.server.off('error', reject);
      resolve();
    });
  });
  const address = http.server.address() as AddressInfo;
  return {
    port: address.port,
    host: config.host,
    async close() {
      await http.close();
      await service.close();
    },
  };
}
