/**
 * Simulator configuration from the environment: the simulator's variables of the one environment
 * schema (lib/env-schema.ts), validated at start-up. An invalid environment fails start-up with the
 * variable named (exit code {@link EXIT_CONFIG}).
 */
import path from 'node:path';
import { EnvError, EXIT_CONFIG as PRODUCT_EXIT_CONFIG, envSchema, parseEnv } from '../lib/env-schema';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface SimulatorConfig {
  port: number;
  host: string;
  /** Absolute path of the durable state file. */
  stateFile: string;
  /** The runtime API's TLS: serving pair, the trust bundle client certificates must chain to, and the one trust domain accepted. */
  tls: { certFile: string; keyFile: string; clientCaFile: string; trustDomain: string };
  /** Target-level authorization policy (simulator/policy.ts); null: every verified workload may act on every asset. */
  policyFile: string | null;
  /** The admin API's own listener (same host); 0: any free port. */
  adminPort: number;
  /** Admin bearer token; null turns the admin API off (no admin listener). */
  adminToken: string | null;
  /** Simulated duration of every operation; 0 completes operations at submission. */
  operationMs: number;
  /** Assets created at start-up when missing. */
  seedAssets: string[];
  logLevel: LogLevel;
  /** How many terminal operations are retained beyond those still needed for replay (see retention in operations.ts). */
  retainOperations: number;
  /** How many log entries the state keeps (the newest). */
  logEntries: number;
}

/** Exit code for a refused start (bad environment, corrupt or unknown state file): a supervisor should not restart. */
export const EXIT_CONFIG = PRODUCT_EXIT_CONFIG;
/** Exit code of the `crash` fault: a supervisor should restart. */
export const EXIT_CRASH_FAULT = 70;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** The simulator's part of the one environment schema (lib/env-schema.ts): its variables, and DATA_DIR for the default state file. */
const EnvSchema = envSchema.pick({
  SIMULATOR_PORT: true,
  SIMULATOR_HOST: true,
  SIMULATOR_STATE_FILE: true,
  DATA_DIR: true,
  SIMULATOR_ADMIN_TOKEN: true,
  SIMULATOR_ADMIN_PORT: true,
  SIMULATOR_TLS_CERT_FILE: true,
  SIMULATOR_TLS_KEY_FILE: true,
  SIMULATOR_CLIENT_CA_FILE: true,
  SIMULATOR_POLICY_FILE: true,
  SPIFFE_TRUST_DOMAIN: true,
  SIMULATOR_OPERATION_MS: true,
  SIMULATOR_ASSETS: true,
  SIMULATOR_LOG_LEVEL: true,
  SIMULATOR_RETAIN_OPERATIONS: true,
  SIMULATOR_LOG_ENTRIES: true,
});

/** Reads and validates the simulator's environment; throws {@link ConfigError} naming the offending variable. */
export function loadSimulatorConfig(env: Record<string, string | undefined>): SimulatorConfig {
  let values;
  try {
    values = parseEnv(env, EnvSchema);
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    throw new ConfigError(`invalid simulator environment: ${error.problems.map((p) => `${p.variable} ${p.message}`).join('; ')}`);
  }
  const { SIMULATOR_TLS_CERT_FILE: certFile, SIMULATOR_TLS_KEY_FILE: keyFile, SIMULATOR_CLIENT_CA_FILE: clientCaFile } = values;
  if (!certFile || !keyFile || !clientCaFile) {
    const missing = !certFile ? 'SIMULATOR_TLS_CERT_FILE' : !keyFile ? 'SIMULATOR_TLS_KEY_FILE' : 'SIMULATOR_CLIENT_CA_FILE';
    throw new ConfigError(`invalid simulator environment: ${missing} is required: the runtime API is served over mutual TLS only`);
  }
  const stateFile = path.resolve(values.SIMULATOR_STATE_FILE ?? path.join(values.DATA_DIR, 'simulator', 'state.json'));
  return {
    port: values.SIMULATOR_PORT,
    host: values.SIMULATOR_HOST,
    stateFile,
    tls: {
      certFile: path.resolve(certFile),
      keyFile: path.resolve(keyFile),
      clientCaFile: path.resolve(clientCaFile),
      trustDomain: values.SPIFFE_TRUST_DOMAIN,
    },
    policyFile: values.SIMULATOR_POLICY_FILE ? path.resolve(values.SIMULATOR_POLICY_FILE) : null,
    adminPort: values.SIMULATOR_ADMIN_PORT,
    adminToken: values.SIMULATOR_ADMIN_TOKEN ?? null,
    operationMs: values.SIMULATOR_OPERATION_MS,
    seedAssets: values.SIMULATOR_ASSETS,
    logLevel: values.SIMULATOR_LOG_LEVEL,
    retainOperations: values.SIMULATOR_RETAIN_OPERATIONS,
    logEntries: values.SIMULATOR_LOG_ENTRIES,
  };
}

/** Only where the state file is (for `--backup` / `--restore`, which need no listener settings). */
export function stateFileOf(env: Record<string, string | undefined>): string {
  let values;
  try {
    values = parseEnv(env, envSchema.pick({ SIMULATOR_STATE_FILE: true, DATA_DIR: true }));
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    throw new ConfigError(`invalid simulator environment: ${error.problems.map((p) => `${p.variable} ${p.message}`).join('; ')}`);
  }
  return path.resolve(values.SIMULATOR_STATE_FILE ?? path.join(values.DATA_DIR, 'simulator', 'state.json'));
}
