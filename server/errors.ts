import type { ZodError } from 'zod';

/**
 * Domain errors. Every failure the domain reports on purpose is a `DomainError` with a literal
 * `code`; adapters (tRPC, REST, CLI) map codes to their own status through one table
 * (server/error-table.ts). Anything else is a bug: logged once, answered as a 500 without internals.
 */
import { DeadlineExceeded } from '@/db/deadline';

export const errorCodes = [
  'ValidationFailed',
  'Unauthenticated',
  'Forbidden',
  'NotFound',
  'Conflict',
  'RateLimited',
  'PayloadTooLarge',
  'InvalidCidr',
  'PrefixLengthRejected',
  'NoOfferingPool',
  'Overlap',
  'Exhausted',
  'ClaimExists',
  'AllocationRetained',
  'QuotaExceeded',
  'PolicyFailed',
  'Unavailable',
  'StaleEpoch',
  'LocationUnavailable',
  'NoCapacity',
  'InvalidTransition',
  'CheckMismatch',
  'ProjectDeleting',
  'LastOwner',
  'LinkUnusable',
  'DatabaseUnavailable',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** The input field the error is about (dotted path), when there is one. */
    readonly field?: string,
    /** Structured facts for clients (e.g. `{ requested, available, limit }`). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalid = (field: string, message: string) => new DomainError('ValidationFailed', message, field);

/** One problem with client input: the field's dotted path (`''` for the input itself) and the reason. */
export interface FieldIssue {
  field: string;
  message: string;
}

/**
 * The problems a zod parse of client input found, one per field. A key a strict object does not
 * know is named with its full path, the way Kubernetes' strict field validation does
 * (`unknown field "spec.prefixLenght"`). Unknown fields come first: a misspelt field usually also
 * leaves the real one missing, and the misspelling is the cause to report.
 */
export function fieldIssues(e: ZodError): FieldIssue[] {
  const unknown: FieldIssue[] = [];
  const other: FieldIssue[] = [];
  for (const issue of e.issues) {
    const at = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const field = [...at, key].join('.');
        unknown.push({ field, message: `unknown field "${field}"` });
      }
    } else other.push({ field: at.join('.'), message: issue.message });
  }
  return [...unknown, ...other];
}

/**
 * Client input that failed its schema, as every edge answers it (REST and tRPC alike): 400
 * `ValidationFailed` naming the first field, every issue in `details.issues`.
 */
export function validationFailed(e: ZodError): DomainError {
  const issues = fieldIssues(e);
  const { field, message } = issues[0];
  // An unknown field's message already names it (and is listed first when there is one).
  const named = !field || e.issues.some((i) => i.code === 'unrecognized_keys');
  return new DomainError('ValidationFailed', named ? message : `${field}: ${message}`, field || undefined, { issues });
}

export function isDomainError(e: unknown): e is DomainError {
  return e instanceof DomainError;
}

/**
 * The PostgreSQL error behind a driver or ORM error (drizzle wraps the driver's error in `cause`),
 * with its SQLSTATE and constraint name, or undefined when it is not one.
 */
export function pgError(e: unknown): { code: string; message: string; constraint?: string; detail?: string } | undefined {
  for (let cur = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const c = cur as { code?: unknown; message?: unknown; constraint_name?: unknown; detail?: unknown };
    if (typeof c.code === 'string' && /^[0-9A-Z]{5}$/.test(c.code)) {
      return {
        code: c.code,
        message: String(c.message ?? ''),
        constraint: typeof c.constraint_name === 'string' ? c.constraint_name : undefined,
        detail: typeof c.detail === 'string' ? c.detail : undefined,
      };
    }
  }
  return undefined;
}

/**
 * Errors the database raises on purpose, as the domain errors they are, wherever they surface (the
 * adapters call this before mapping): 'MP001' is the guard refusing new objects in a project being
 * deleted (server/tenancy/sql/project_refuse_new_objects.sql), whichever insert — or SQL function — ran into it.
 */
export function asDomainError(e: unknown): DomainError | undefined {
  if (isDomainError(e)) return e;
  const pg = pgError(e);
  if (pg?.code === 'MP001') return new DomainError('ProjectDeleting', pg.message, 'project', pg.detail ? { project: pg.detail } : undefined);
  const unavailable = databaseUnavailability(e);
  if (unavailable) return new DomainError('DatabaseUnavailable', unavailable, undefined, { retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS });
  return undefined;
}

/** What a client told DatabaseUnavailable is asked to wait before retrying (the Retry-After header). */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/**
 * SQLSTATEs that mean "the database cannot serve this now; the same request may succeed shortly":
 * connection failures (class 08), the server shutting down or starting up or in recovery (57P01–
 * 57P03), and a read-only server (25006: a standby, before failover completes).
 */
const unavailableStates = new Set(['57P01', '57P02', '57P03', '25006']);
/** Our own timeouts, which the database answered with: the request took too long, not the database. */
const timeoutStates: Record<string, string> = {
  '57014': 'the request did not finish within its statement timeout; retry shortly',
  '55P03': 'the request waited too long for a lock; retry shortly',
};
/** The postgres driver's and Node's codes for a connection that could not be made or was lost. */
const unavailableDriverCodes = new Set([
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Why the database could not serve the request (a message for the client, naming no internals),
 * when `e` is a request deadline that passed, a timeout of ours or a connection-level failure;
 * undefined otherwise. A deadline names the database only when the database answered none of the
 * request's statements; once it did, the request itself did not finish in time
 * (`DeadlineExceeded.answered`), and so it is for a statement or lock timeout (the server's own
 * answer).
 */
export function databaseUnavailability(e: unknown): string | undefined {
  for (let cur = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    // By name: Next's bundle has a copy of db/deadline.ts whose class is not this one.
    if (cur instanceof DeadlineExceeded || (cur as Error).name === 'DeadlineExceeded') {
      const { budgetMs, answered } = cur as DeadlineExceeded;
      return answered ? `the request did not finish within ${budgetMs} ms; retry shortly` : `the database did not answer within ${budgetMs} ms; retry shortly`;
    }
    const code = (cur as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    if (code in timeoutStates) return timeoutStates[code];
    if (unavailableDriverCodes.has(code)) return 'the database is unreachable; retry shortly';
    if (unavailableStates.has(code) || code.startsWith('08')) return 'the database is unavailable; retry shortly';
  }
  return undefined;
}

/**
 * Whether `e` is the database being out of reach rather than a request's own failure: a connection
 * that could not be made or was lost (the driver's codes, class 08), the server shutting down or
 * starting up (57P01–57P03), or a read-only server (25006: a standby before a failover completes).
 * Timeouts and deadlines are not: the database answered, the work took too long.
 */
export function databaseUnreachable(e: unknown): boolean {
  for (let cur = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    if (unavailableDriverCodes.has(code) || unavailableStates.has(code) || code.startsWith('08')) return true;
  }
  return false;
}

/** PostgreSQL SQLSTATE of a driver error, if it is one (`23505` unique, `23P01` exclusion, `40001` serialization). */
export function pgCode(e: unknown): string | undefined {
  return pgError(e)?.code;
}
