import { ZodError } from 'zod';
import { asDomainError, DATABASE_RETRY_AFTER_SECONDS, fieldIssues } from '@/server/errors';
import { errorTable } from '@/server/error-table';
import { internalErrorBody } from '@/server/observability/log';
import { ApplyConflict } from './managed-fields';

/**
 * Errors of the Kubernetes API as `kind: Status` (metav1.Status): `reason` and `code` as
 * kube-apiserver answers them, `details.causes[]` naming the fields.
 */

export interface Cause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: Cause[];
  retryAfterSeconds?: number;
}

/** An error the Kubernetes API answers: its status code, reason, message and details. */
export class KubeError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details: StatusDetails = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function statusBody(e: KubeError) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: e.message,
    reason: e.reason,
    ...(Object.keys(e.details).length ? { details: e.details } : {}),
    code: e.code,
  };
}

/** What the object is, for an error's details. */
export interface Subject {
  name?: string;
  group: string;
  kind: string;
  /** `ipclaims.ipam.miloapis.com`: how Kubernetes names a resource in its messages. */
  resource: string;
}

export const notFound = (s: Subject & { name: string }) =>
  new KubeError(404, 'NotFound', `${s.resource} "${s.name}" not found`, { name: s.name, group: s.group, kind: s.resource.split('.')[0] });

export const alreadyExists = (s: Subject & { name: string }, message?: string) =>
  new KubeError(409, 'AlreadyExists', message ?? `${s.resource} "${s.name}" already exists`, { name: s.name, group: s.group, kind: s.kind });

export const conflict = (s: Subject & { name: string }, why: string) =>
  new KubeError(409, 'Conflict', `Operation cannot be fulfilled on ${s.resource} "${s.name}": ${why}`, { name: s.name, group: s.group, kind: s.kind });

/** 422 Invalid: `IPClaim.ipam.miloapis.com "web" is invalid: spec.network: Invalid value: …: field is immutable`. */
export function invalid(s: Subject, causes: Cause[]) {
  const what = `${s.kind}.${s.group || 'core'} "${s.name ?? ''}"`;
  return new KubeError(422, 'Invalid', `${what} is invalid: ${causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ')}`, {
    name: s.name,
    group: s.group,
    kind: s.kind,
    causes,
  });
}

export const badRequest = (message: string) => new KubeError(400, 'BadRequest', message);

/** The reason Kubernetes gives for an HTTP status. */
function reasonOf(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 413:
      return 'RequestEntityTooLarge';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return code >= 500 ? 'InternalError' : 'BadRequest';
  }
}

/**
 * Any error as a KubeError: domain errors through the error table (a refused field is 422 Invalid
 * naming it in the object, through `fieldPath`), a server-side apply conflict as 409 naming the
 * managers and fields, an unavailable database as 503 with Retry-After; anything else is logged
 * once and answered 500 without internals.
 */
export function toKubeError(e: unknown, subject: Subject, fieldPath: (domainField: string) => string): KubeError {
  if (e instanceof KubeError) return e;
  if (e instanceof ApplyConflict) {
    return new KubeError(409, 'Conflict', e.message, {
      name: subject.name,
      group: subject.group,
      kind: subject.kind,
      causes: e.conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with "${c.manager}" using ${e.apiVersion}`, field: c.field })),
    });
  }
  if (e instanceof ZodError) {
    return invalid(
      subject,
      fieldIssues(e).map((i) => ({ reason: 'FieldValueInvalid', message: `Invalid value: ${i.message}`, field: i.field })),
    );
  }
  const domain = asDomainError(e);
  if (!domain) {
    const body = internalErrorBody('kube', e);
    return new KubeError(500, 'InternalError', body.error.message);
  }
  if (domain.code === 'DatabaseUnavailable') {
    return new KubeError(
      503,
      'ServiceUnavailable',
      domain.message,
      { retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS },
      {
        'retry-after': String(DATABASE_RETRY_AFTER_SECONDS),
      },
    );
  }
  const http = errorTable[domain.code].http;
  if (http === 400 || domain.code === 'PolicyFailed') {
    const field = domain.field ? fieldPath(domain.field) : undefined;
    return invalid(subject, [{ reason: 'FieldValueInvalid', message: domain.message, ...(field ? { field } : {}) }]);
  }
  if (domain.code === 'NotFound' && domain.field === 'name' && subject.name) return notFound({ ...subject, name: subject.name });
  const retry = domain.details?.retryAfterSeconds;
  return new KubeError(
    http,
    reasonOf(http),
    domain.message,
    { name: subject.name, group: subject.group, kind: subject.kind, ...(typeof retry === 'number' ? { retryAfterSeconds: retry } : {}) },
    typeof retry === 'number' ? { 'retry-after': String(retry) } : {},
  );
}

export { reasonOf };
