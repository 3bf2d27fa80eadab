/**
 * Simulator configuration from the environment, validated with zod. An invalid environment fails start-up
 * with the variable named (exit code {@link EXIT_CONFIG}).
 */
import path from 'node:path';
import { z } from 'zod';
import { AssetIdSchema } from '../provider/wire';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface SimulatorConfig {
  port: number;
  host: string;
  /** Absolute path of the durable state file. */
  stateFile: string;
  /** Runtime bearer token (never logged). */
  token: string;
  /** Admin bearer token; null turns the admin API off (every /admin path answers 404). */
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
export const EXIT_CONFIG = 78;
/** Exit code of the `crash` fault: a supervisor should restart. */
export const EXIT_CRASH_FAULT = 70;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const emptyAsUndefined = (value: unknown) => (value === '' ? undefined : value);
const intFromEnv = (min: number, max: number, fallback: number) =>
  z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^\d+$/, `must be an integer between ${min} and ${max}`)
      .transform(Number)
      .pipe(z.int().min(min, `must be ≥ ${min}`).max(max, `must be ≤ ${max}`))
      .default(fallback),
  );
const tokenFromEnv = z.string().min(16, 'must be at least 16 characters').regex(/^\S+$/, 'must not contain whitespace');

const EnvSchema = z.object({
  SIMULATOR_PORT: intFromEnv(0, 65_535, 4100),
  SIMULATOR_HOST: z.preprocess(emptyAsUndefined, z.string().min(1).default('127.0.0.1')),
  SIMULATOR_STATE_FILE: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),
  DATA_DIR: z.preprocess(emptyAsUndefined, z.string().min(1).default('.data')),
  SIMULATOR_TOKEN: z.preprocess(
    emptyAsUndefined,
    z.string({ error: (issue) => (issue.input === undefined ? 'is required: set the runtime bearer token' : 'must be a string') }).pipe(tokenFromEnv),
  ),
  SIMULATOR_ADMIN_TOKEN: z.preprocess(emptyAsUndefined, tokenFromEnv.optional()),
  SIMULATOR_OPERATION_MS: intFromEnv(0, 3_600_000, 0),
  SIMULATOR_ASSETS: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .transform((value) => value.split(',').map((id) => id.trim()).filter(Boolean))
      .pipe(z.array(AssetIdSchema))
      .default([]),
  ),
  SIMULATOR_LOG_LEVEL: z.preprocess(emptyAsUndefined, z.enum(['debug', 'info', 'warn', 'error']).default('info')),
  SIMULATOR_RETAIN_OPERATIONS: intFromEnv(100, 1_000_000, 250),
  SIMULATOR_LOG_ENTRIES: intFromEnv(10, 100_000, 250),
});

/** Reads and validates the simulator's environment; throws {@link ConfigError} naming the offending variable. */
export function loadSimulatorConfig(env: Record<string, string | undefined>): SimulatorConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'} ${issue.message}`);
    throw new ConfigError(`invalid simulator environment: ${problems.join('; ')}`);
  }
  const values = parsed.data;
  if (values.SIMULATOR_ADMIN_TOKEN !== undefined && values.SIMULATOR_ADMIN_TOKEN === values.SIMULATOR_TOKEN) {
    throw new ConfigError('invalid simulator environment: SIMULATOR_ADMIN_TOKEN must differ from SIMULATOR_TOKEN');
  }
  const stateFile = path.resolve(values.SIMULATOR_STATE_FILE ?? path.join(values.DATA_DIR, 'simulator', 'state.json'));
  return {
    port: values.SIMULATOR_PORT,
    host: values.SIMULATOR_HOST,
    stateFile,
    token: values.SIMULATOR_TOKEN,
    adminToken: values.SIMULATOR_ADMIN_TOKEN ?? null,
    operationMs: values.SIMULATOR_OPERATION_MS,
    seedAssets: values.SIMULATOR_ASSETS,
    logLevel: values.SIMULATOR_LOG_LEVEL,
    retainOperations: values.SIMULATOR_RETAIN_OPERATIONS,
    logEntries: values.SIMULATOR_LOG_ENTRIES,
  };
}
