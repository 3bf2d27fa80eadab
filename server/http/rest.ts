import { ZodError, type z } from 'zod';
import { getDb, type Db } from '@/db/client';
import { moduleEnabled } from '@/server/api/modules';
import { withDeadline } from '@/db/deadline';
import { env } from '@/server/env';
import { asDomainError, DATABASE_RETRY_AFTER_SECONDS, DomainError, isDomainError, validationFailed } from '@/server/errors';
import { internalErrorBody } from '@/server/observability/log';
import { MAX_BODY_BYTES, readWebBody } from './body-limit';
import { bufferedBody, jsonReply, JsonReply, type ApiRequest } from './buffered';
import { limiter } from './rate-limit';
import { refuseUnstorableText } from './untrusted-text';
import { roleAtLeast, type MemberRole } from '@/server/tenancy/roles';
import type { Actor } from '@/server/audit/events';
import { projectIdBySlug } from '@/server/tenancy/projects';
import {
  forgetVerifiedToken,
  revokedTokenOfGoneCluster,
  tokenActor,
  verifyApiToken,
  type ApiPrincipal,
  type GoneClusterToken,
  type OperatorPrincipal,
  type TokenPrincipal,
} from '@/server/tenancy/tokens';
import { errorTable } from '@/server/error-table';

export interface RestContext<P> {
  db: Db;
  req: ApiRequest;
  url: URL;
  params: P;
  principal: TokenPrincipal;
}

/** What an operator route's handler gets: the operator token's principal and its audit actor. */
export interface OperatorRestContext<P> {
  db: Db;
  req: ApiRequest;
  url: URL;
  params: P;
  principal: OperatorPrincipal;
  actor: Actor;
}

/**
 * What a project read open to operators gets: the project addressed (the token's own for a project
 * token, the path's for an operator token) and whoever calls.
 */
export interface ProjectReadContext<P> {
  db: Db;
  req: ApiRequest;
  url: URL;
  params: P;
  project: { id: string; slug: string };
  principal: ApiPrincipal;
}

/** The JSON error body every REST error uses: `{ error: { code, message, field?, details? } }`. */
export function errorReply(status: number, code: string, message: string, field?: string | null, details?: unknown, headers?: Record<string, string>) {
  return jsonReply({ error: { code, message, ...(field ? { field } : {}), ...(details ? { details } : {}) } }, { status, headers });
}

function toReply(e: unknown): JsonReply {
  const domain = e instanceof ZodError ? validationFailed(e) : asDomainError(e);
  if (domain?.code === 'DatabaseUnavailable') {
    return errorReply(503, domain.code, domain.message, null, undefined, { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) });
  }
  if (domain) return errorReply(errorTable[domain.code].http, domain.code, domain.message, domain.field, domain.details);
  return jsonReply(internalErrorBody('rest', e), { status: 500 });
}

/** Reads a JSON body with a size limit; malformed JSON and oversized bodies are coded 4xx. */
export async function readJson(req: ApiRequest): Promise<unknown> {
  const declared = Number(req.headers.get('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) throw new DomainError('PayloadTooLarge', `body exceeds ${MAX_BODY_BYTES} bytes`);
  const type = req.headers.get('content-type') ?? '';
  if (!type.includes('application/json')) throw new DomainError('ValidationFailed', 'content-type must be application/json', 'content-type');
  const text = (bufferedBody(req) ?? (await streamedBody(req as Request))).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new DomainError('ValidationFailed', 'body is not valid JSON', 'body');
  }
  refuseUnstorableText(value, 'body');
  return value;
}

/** The body of a request that came through Next: read from its stream, within the size limit. */
async function streamedBody(req: Request): Promise<Buffer> {
  const body = await readWebBody(req);
  if (body === 'tooLarge') throw new DomainError('PayloadTooLarge', `body exceeds ${MAX_BODY_BYTES} bytes`);
  return body;
}

/** Like `readJson`, but a request without a body reads as `{}` (actions whose body is optional). */
export async function readOptionalJson(req: ApiRequest): Promise<unknown> {
  const buffered = bufferedBody(req);
  if (buffered ? buffered.length === 0 : (req as Request).body === null || req.headers.get('content-length') === '0') return {};
  return readJson(req);
}

/**
 * A name given both in the path and in the body must agree (the path decides what is addressed);
 * otherwise 400 naming the body field.
 */
export function expectSameAsPath(field: string, inBody: string | undefined, inPath: string): void {
  if (inBody !== undefined && inBody !== inPath) throw new DomainError('ValidationFailed', `${field}: must be "${inPath}" (as in the path) or omitted`, field);
}

/** Parses with a zod schema; failures become 400s naming the field. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  return schema.parse(value);
}

type Handler<P, C = RestContext<P>> = (ctx: C) => Promise<Response | JsonReply | unknown>;

/** A REST v1 route as the REST server calls it (api-server.ts): its own request and the path's parameters in, a reply out. */
export type DirectHandler = (req: ApiRequest, params: Record<string, string>) => Promise<JsonReply | Response>;

/** A route file's handler: the signature Next gives App Router handlers, plus the REST server's `direct` entry. */
export type RestHandler = ((req: Request, context?: { params: Promise<Record<string, string>> }) => Promise<Response>) & { direct: DirectHandler };

const unauthenticated = (message = 'a valid bearer token is required') => errorReply(401, 'Unauthenticated', message, null, undefined, { 'www-authenticate': 'Bearer' });

/** The per-token rate limit's 429, or null when the request may go on. */
function rateLimited(tokenId: string): JsonReply | null {
  const allowed = limiter('token').take(tokenId);
  if (allowed.ok) return null;
  return errorReply(429, 'RateLimited', `too many requests for this token; retry in ${allowed.retryAfterSeconds} s`, null, undefined, {
    'retry-after': String(allowed.retryAfterSeconds),
  });
}

/** What sets a route apart before its own checks: its API module, and whether its write confirms the token. */
interface RouteOptions<P> {
  module?: string;
  /**
   * Requests whose handler checks in its own write's transaction that the token is unrevoked and
   * still holds the route's role, and throws Unauthenticated or Forbidden when it does not (the CNI
   * ADD): a cluster token verified in the last 30 s is not read again first (server/tenancy/tokens.ts). Until that check, a token revoked meanwhile
   * can still get the route's other refusals (400, 404, 429); it never gets a write.
   */
  confirmsToken?: (params: P) => boolean;
  /**
   * What a revoked cluster token may still do once its cluster is gone (the CNI DEL: a deleted
   * cluster's pods must still be torn down). For requests where `applies` holds, a token refused
   * as unknown or revoked is looked up as a revoked token of a gone cluster
   * (`revokedTokenOfGoneCluster`); `answer` then answers in place of the 401, or returns undefined
   * to keep the 401. Nothing else is granted: the token stays refused everywhere else.
   */
  goneCluster?: { applies: (params: P) => boolean; answer: (token: GoneClusterToken, base: { req: ApiRequest; params: P }) => Promise<unknown> };
}

/**
 * The steps every REST v1 route shares: the module switch, bearer authentication (401 without a
 * valid token: unknown, revoked, or an operator token whose user lost the role; for `confirmsToken`
 * requests, revocation is found by the handler's write), the per-token
 * rate limit, then `authorize` (which refuses with a reply or passes a context to the handler),
 * and coded errors. The result serves both Next (Web Request in, Web Response out) and, as
 * `direct`, the REST server.
 */
function restRoute<P extends Record<string, string>, C>(
  { module, confirmsToken, goneCluster }: RouteOptions<P>,
  authorize: (principal: ApiPrincipal, base: { db: Db; req: ApiRequest; url: URL; params: P }) => Promise<JsonReply | C>,
  handler: (ctx: C) => Promise<Response | JsonReply | unknown>,
): RestHandler {
  const direct = async (req: ApiRequest, params: Record<string, string>): Promise<JsonReply | Response> => {
    const match = /^Bearer\s+(\S+)$/i.exec(req.headers.get('authorization') ?? '');
    try {
      // The whole request — token, checks, handler — within one budget (db/deadline.ts).
      return await withDeadline(env().DB_REQUEST_TIMEOUT_MS, () => serve(req, params, match));
    } catch (e) {
      // A write that found its token revoked or below the role: the token is not reused again.
      if (match && confirmsToken?.(params as P) && isDomainError(e) && (e.code === 'Unauthenticated' || e.code === 'Forbidden')) {
        forgetVerifiedToken(match[1]);
        if (e.code === 'Unauthenticated') return unauthenticated(e.message);
      }
      return toReply(e);
    }
  };
  const serve = async (req: ApiRequest, params: Record<string, string>, match: RegExpExecArray | null): Promise<JsonReply | Response> => {
    if (module && !moduleEnabled(module)) return errorReply(404, 'NotFound', 'this API is not served here');
    const db = getDb();
    const principal = match ? await verifyApiToken(db, match[1], { reuseRecent: confirmsToken?.(params as P) }) : undefined;
    if (!principal) {
      const gone = match && goneCluster?.applies(params as P) ? await revokedTokenOfGoneCluster(db, match[1]) : undefined;
      if (!gone) return unauthenticated();
      const answer = rateLimited(gone.tokenId) ?? (await goneCluster!.answer(gone, { req, params: params as P }));
      return answer === undefined ? unauthenticated() : answer instanceof JsonReply ? answer : jsonReply(answer);
    }
    const limited = rateLimited(principal.tokenId);
    if (limited) return limited;
    const ctx = await authorize(principal, { db, req, url: new URL(req.url), params: params as P });
    if (ctx instanceof JsonReply) return ctx;
    const result = await handler(ctx);
    return result instanceof Response || result instanceof JsonReply ? result : jsonReply(result);
  };
  const viaNext = async (req: Request, context?: { params: Promise<Record<string, string>> }): Promise<Response> => {
    const reply = await direct(req, (await context?.params) ?? {});
    return reply instanceof JsonReply ? reply.toResponse() : reply;
  };
  return Object.assign(viaNext, { direct });
}

const operatorTokenHere = () =>
  errorReply(403, 'Forbidden', 'an operator token acts on the operator routes only; use a project token for project routes');

/** A project token's project and role, checked against the path (404 for any other project: another tenant's is never revealed). */
function checkProjectToken(principal: TokenPrincipal, params: Record<string, string>, minRole: MemberRole): JsonReply | null {
  if ('project' in params && params.project !== principal.projectSlug) {
    return errorReply(404, 'NotFound', `project "${params.project}" not found`, 'project');
  }
  if (!roleAtLeast(principal.role, minRole)) {
    return errorReply(403, 'Forbidden', principal.role === 'viewer' ? `this token is read-only; the ${minRole} role is needed` : `this needs a token with the ${minRole} role (this one is ${principal.role})`);
  }
  return null;
}

/**
 * The path's project on routes with `projectFromToken`: the token's own (no project slug can be
 * "-"). A client that holds a token for one project need not name it (the CNI plugin without
 * `ipam.project`).
 */
export const TOKEN_PROJECT = '-';

/**
 * Wraps a REST v1 handler for project tokens: bearer-token authentication (401 without a valid,
 * unrevoked token), the project in the path checked against the token's (404 for any other:
 * another tenant's project is never revealed), the minimum role, and coded errors. The project
 * always comes from the token, never from the body. Operator tokens are refused (403): they act on
 * the operator routes, not as a member of a project. With `projectFromToken`, the path's project
 * may be `-` (TOKEN_PROJECT): the token's own.
 */
export function tokenRoute<P extends Record<string, string>>(options: RouteOptions<P> & { minRole: MemberRole; projectFromToken?: boolean }, handler: Handler<P>) {
  return restRoute<P, RestContext<P>>(
    options,
    async (principal, base) => {
      if (principal.kind !== 'project') return operatorTokenHere();
      const params = options.projectFromToken && base.params.project === TOKEN_PROJECT ? { ...base.params, project: principal.projectSlug } : base.params;
      return checkProjectToken(principal, params, options.minRole) ?? { ...base, principal };
    },
    handler,
  );
}

/**
 * Wraps a read of a project's data that platform operators may also make: project tokens exactly
 * as `tokenRoute` (viewer and up, their own project only); operator tokens for any project, named
 * in the path (404 when it does not exist). Reads only: nothing written here can be reached by an
 * operator token without going through `operatorRoute`.
 */
export function projectReadRoute<P extends { project: string }>(options: { module?: string }, handler: Handler<P, ProjectReadContext<P>>) {
  return restRoute<P, ProjectReadContext<P>>(
    { module: options.module },
    async (principal, base) => {
      if (base.req.method !== 'GET') return errorReply(405, 'MethodNotAllowed', 'project reads open to operators are GET only');
      if (principal.kind === 'project') {
        return checkProjectToken(principal, base.params, 'viewer') ?? { ...base, principal, project: { id: principal.projectId, slug: principal.projectSlug } };
      }
      return { ...base, principal, project: { id: await projectIdBySlug(base.db, base.params.project), slug: base.params.project } };
    },
    handler,
  );
}

/**
 * Wraps a project route that both the project's own tokens and platform operators may call — a
 * write reserved to owners, such as deleting the project: a project token of the path's project
 * with at least `minRole` (404 for any other project, 403 below the role, and 403 for a cluster
 * token, which acts for its cluster only), or an operator token for any project named in the path
 * (404 when there is none). The handler gets the project and the caller's audit actor.
 */
export function projectOrOperatorRoute<P extends { project: string }>(
  options: { minRole: MemberRole; module?: string },
  handler: Handler<P, ProjectReadContext<P> & { actor: Actor }>,
) {
  return restRoute<P, ProjectReadContext<P> & { actor: Actor }>(
    { module: options.module },
    async (principal, base) => {
      if (principal.kind === 'project') {
        const refused = checkProjectToken(principal, base.params, options.minRole);
        if (refused) return refused;
        if (principal.clusterName) return errorReply(403, 'Forbidden', 'a cluster token acts for its cluster only');
        return { ...base, principal, actor: tokenActor(principal), project: { id: principal.projectId, slug: principal.projectSlug } };
      }
      return { ...base, principal, actor: tokenActor(principal), project: { id: await projectIdBySlug(base.db, base.params.project), slug: base.params.project } };
    },
    handler,
  );
}

/**
 * Wraps an operator REST route: only an operator token (its user still an enabled platform
 * operator) gets through. Project tokens of any role and cluster tokens are refused with 403 and
 * no data, before the path or the body is looked at; unknown, revoked and orphaned operator tokens
 * get 401. The handler acts with the operator's audit actor.
 */
export function operatorRoute<P extends Record<string, string>>(options: { module?: string }, handler: Handler<P, OperatorRestContext<P>>) {
  return restRoute<P, OperatorRestContext<P>>(
    { module: options.module },
    async (principal, base) => {
      if (principal.kind !== 'operator') return errorReply(403, 'Forbidden', 'this route needs an operator token; project and cluster tokens cannot use it');
      return { ...base, principal, actor: tokenActor(principal) };
    },
    handler,
  );
}

/** Wraps a route any valid token may call, whatever it acts for (identity: `GET /api/v1/whoami`). */
export function anyTokenRoute<P extends Record<string, string>>(handler: Handler<P, { db: Db; req: ApiRequest; url: URL; params: P; principal: ApiPrincipal }>) {
  return restRoute<P, { db: Db; req: ApiRequest; url: URL; params: P; principal: ApiPrincipal }>({}, async (principal, base) => ({ ...base, principal }), handler);
}
