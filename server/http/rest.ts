import { ZodError, type z } from 'zod';
import { getDb, type Db } from '@/db/client';
import { moduleEnabled } from '@/server/api/modules';
import { DomainError, isDomainError } from '@/server/errors';
import { logError } from '@/server/observability/log';
import { limiter } from './rate-limit';
import { roleAtLeast, type MemberRole } from '@/server/tenancy/roles';
import { verifyApiToken, type TokenPrincipal } from '@/server/tenancy/tokens';
import { errorTable } from '@/server/trpc/errors';

/** Bodies above this are refused with 413 before parsing. */
export const MAX_BODY_BYTES = 64 * 1024;

export interface RestContext<P> {
  db: Db;
  req: Request;
  url: URL;
  params: P;
  principal: TokenPrincipal;
}

/** The JSON error body every REST error uses: `{ error: { code, message, field?, details? } }`. */
export function errorResponse(status: number, code: string, message: string, field?: string | null, details?: unknown, headers?: HeadersInit) {
  return Response.json({ error: { code, message, ...(field ? { field } : {}), ...(details ? { details } : {}) } }, { status, headers });
}

function toResponse(e: unknown): Response {
  if (isDomainError(e)) return errorResponse(errorTable[e.code].http, e.code, e.message, e.field, e.details);
  if (e instanceof ZodError) {
    const issue = e.issues[0];
    const field = issue.path.join('.') || null;
    return errorResponse(400, 'ValidationFailed', `${field ? `${field}: ` : ''}${issue.message}`, field, {
      issues: e.issues.map((i) => ({ field: i.path.join('.'), message: i.message })),
    });
  }
  logError('rest', e);
  return errorResponse(500, 'Internal', 'internal error');
}

/** Reads a JSON body with a size limit; malformed JSON and oversized bodies are coded 4xx. */
export async function readJson(req: Request): Promise<unknown> {
  const declared = Number(req.headers.get('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) throw new DomainError('PayloadTooLarge', `body exceeds ${MAX_BODY_BYTES} bytes`);
  const type = req.headers.get('content-type') ?? '';
  if (!type.includes('application/json')) throw new DomainError('ValidationFailed', 'content-type must be application/json', 'content-type');
  const reader = req.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw new DomainError('PayloadTooLarge', `body exceeds ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(value);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new DomainError('ValidationFailed', 'body is not valid JSON', 'body');
  }
}

/** Parses with a zod schema; failures become 400s naming the field. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  return schema.parse(value);
}

type Handler<P> = (ctx: RestContext<P>) => Promise<Response | unknown>;

/**
 * Wraps a REST v1 handler: bearer-token authentication (401 without a valid, unrevoked token),
 * the project in the path checked against the token's (404 for any other: another tenant's
 * project is never revealed), the minimum role, and coded errors. The project always comes from
 * the token, never from the body.
 */
export function tokenRoute<P extends Record<string, string>>(options: { minRole: MemberRole; module?: string }, handler: Handler<P>) {
  return async (req: Request, context?: { params: Promise<P> }): Promise<Response> => {
    try {
      if (options.module && !moduleEnabled(options.module)) return errorResponse(404, 'NotFound', 'this API is not served here');
      const header = req.headers.get('authorization') ?? '';
      const match = /^Bearer\s+(\S+)$/i.exec(header);
      const db = getDb();
      const principal = match ? await verifyApiToken(db, match[1]) : undefined;
      if (!principal) {
        return errorResponse(401, 'Unauthenticated', 'a valid bearer token is required', null, undefined, { 'www-authenticate': 'Bearer' });
      }
      const allowed = limiter('token').take(principal.tokenId);
      if (!allowed.ok) {
        return errorResponse(429, 'RateLimited', `too many requests for this token; retry in ${allowed.retryAfterSeconds} s`, null, undefined, {
          'retry-after': String(allowed.retryAfterSeconds),
        });
      }
      const params = ((await context?.params) ?? {}) as P;
      if ('project' in params && params.project !== principal.projectSlug) {
        return errorResponse(404, 'NotFound', `project "${params.project}" not found`, 'project');
      }
      if (!roleAtLeast(principal.role, options.minRole)) {
        return errorResponse(403, 'Forbidden', `this token is read-only; the ${options.minRole} role is needed`);
      }
      const result = await handler({ db, req, url: new URL(req.url), params, principal });
      return result instanceof Response ? result : Response.json(result);
    } catch (e) {
      return toResponse(e);
    }
  };
}
