/**
 * Structured logging: one JSON object per line, info and below to stdout, warnings and errors to stderr.
 * Callers pass explicit fields; request headers (and so tokens) are never logged.
 */
import type { LogLevel } from './config';

const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

export function createLogger(level: LogLevel, base: LogFields = { service: 'simulator' }): Logger {
  const write = (lineLevel: LogLevel, msg: string, fields?: LogFields) => {
    if (order[lineLevel] < order[level]) return;
    const line = JSON.stringify({ ts: new Date().toISOString(), level: lineLevel, ...base, msg, ...fields });
    (order[lineLevel] >= order.warn ? process.stderr : process.stdout).write(`${line}\n`);
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
  };
}

/** A short description of an unknown thrown value, for a log field. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
