/**
 * The provider simulator: a standalone HTTPS service (mutual TLS on the runtime API) (see bin/simulator.ts) that stands in for a bare-metal
 * provider, with durable, fenced, idempotent operations and fault injection.
 */
import type { AddressInfo, Server } from 'node:net';
import { EXIT_CRASH_FAULT, type SimulatorConfig } from './config';
import { createSimulatorHttpServer } from './http-server';
import type { Logger } from './logger';
import { SimulatorService } from './service';

export { ConfigError, EXIT_CONFIG, EXIT_CRASH_FAULT, loadSimulatorConfig, type SimulatorConfig } from './config';
export { StateFileError } from './state';

export interface RunningSimulator {
  /** The runtime API's bound port (useful with SIMULATOR_PORT=0). */
  port: number;
  /** The admin API's bound port; null when the admin API is off. */
  adminPort: number | null;
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
  const listen = (server: Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, config.host, () => {
        server.off('error', reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  let port: number;
  let adminPort: number | null;
  try {
    port = await listen(http.server, config.port);
    adminPort = http.adminServer ? await listen(http.adminServer, config.adminPort) : null;
  } catch (error) {
    await http.close().catch(() => undefined);
    await service.close();
    throw error;
  }
  return {
    port,
    adminPort,
    host: config.host,
    async close() {
      await http.close();
      await service.close();
    },
  };
}
