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

export function log(level: Level, msg: string, fields: Record<string, unknown> = {}) {
  const threshold = (process.env.LOG_LEVEL as Level | undefined) ?? 'info';
  if (order[level] < (order[threshold] ?? 20)) return;
  const line = JSON.stringify({ t: new Date().toISOString(), level, msg: redact(msg), ...fields });
  process.stderr.write(redact(line) + '\n');
}

/** Logs an unexpected error once, with its stack, for a 500 that hides internals from clients. */
export function logError(context: string, error: unknown) {
  const e = error instanceof Error ? error : new Error(String(error));
  // A driver error wrapped by the query builder carries the database's reason as its cause.
  const cause = (e as { cause?: { message?: unknown; code?: unknown; detail?: unknown } }).cause;
  const why = cause && typeof cause.message === 'string' ? { cause: cause.message, code: cause.code, detail: cause.detail } : {};
  log('error', `${context}: ${e.message}`, { ...why, stack: e.stack });
}
