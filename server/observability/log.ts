import { randomBytes } from 'node:crypto';
import { env } from '@/server/env';

/**
 * Minimal structured logging: one JSON line per record on stderr. Never pass secrets or tokens;
 * `redact` scrubs anything that looks like a bearer token or password from free text.
 */
type Level = 'debug' | 'info' | 'warn' | 'error';
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function redact(text: string): string {
  return text
    .replace(/mrd_[A-Za-z0-9_-]{10,}/g, 'mrd_[redacted]')
    .replace(/(Bearer\s+)[^\s"']+/gi, '$1[redacted]')
    .replace(/(password["'=:\s]+)[^\s"',}]+/gi, '$1[redacted]')
    .replace(/(postgres(?:ql)?:\/\/[^:/@\s]+:)[^@\s]+@/g, '$1[redacted]@');
}

/** LOG_LEVEL; `info` while the environment is invalid (the entry point is about to stop, naming why). */
function threshold(): Level {
  try {
    return env().LOG_LEVEL;
  } catch {
    return 'info';
  }
}

export function log(level: Level, msg: string, fields: Record<string, unknown> = {}) {
  if (order[level] < order[threshold()]) return;
  const line = JSON.stringify({ t: new Date().toISOString(), level, msg: redact(msg), ...fields });
  process.stderr.write(redact(line) + '\n');
}

const errorIds = new WeakMap<object, string>();

/**
 * The correlation id of an unexpected error: 12 hex digits, the same for the same error object
 * however often it is asked for, so the id a client is shown and the one logged agree whichever
 * is written first.
 */
export function errorIdOf(error: unknown): string {
  if (typeof error !== 'object' || error === null) return randomBytes(6).toString('hex');
  let id = errorIds.get(error);
  if (!id) errorIds.set(error, (id = randomBytes(6).toString('hex')));
  return id;
}

/**
 * Logs an unexpected error once, with its stack and its correlation id (`errorId`, returned), for
 * a 500 that hides internals from clients and names only the id.
 */
export function logError(context: string, error: unknown, errorId = errorIdOf(error)): string {
  const e = error instanceof Error ? error : new Error(String(error));
  // A driver error wrapped by the query builder carries the database's reason as its cause.
  const cause = (e as { cause?: { message?: unknown; code?: unknown; detail?: unknown } }).cause;
  const why = cause && typeof cause.message === 'string' ? { cause: cause.message, code: cause.code, detail: cause.detail } : {};
  log('error', `${context}: ${e.message}`, { errorId, ...why, stack: e.stack });
  return errorId;
}

/** What a client is told of a failure nobody coded: that it happened, and the id to look for in the log. */
export const internalErrorMessage = (errorId: string) => `internal error (error id ${errorId}; the server log has the details)`;

/**
 * The JSON error body of a failure nobody coded, logged here once: `{ error: { code: "Internal",
 * message, details: { errorId } } }`, the shape of every REST error, with no SQL, parameters or
 * stack frames, whatever the error held.
 */
export function internalErrorBody(context: string, error: unknown) {
  const errorId = logError(context, error);
  return { error: { code: 'Internal' as const, message: internalErrorMessage(errorId), details: { errorId } } };
}
