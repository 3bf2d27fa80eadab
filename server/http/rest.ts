import { ZodError } from 'zod';
import { getDb, type Db } from '@/db/client';
import { withDeadline } from '@/db/deadline';
import { env } from '@/server/env';
import { asDomainError, DATABASE_RETRY_AFTER_SECONDS, DomainError, isDomainError, validationFailed } from '@/server/errors';
import { internalErrorBody } from '@/server/observability/log';
import { projectIdBySlug, resolveProjectAccess } from '@/server/tenancy/projects';
import { roleAtLeast, type ProjectRole } from '@/server/tenancy/roles';
import {
  forgetVerifiedToken,
  principalUser,
  tokenActor,
  verifyApiToken,
  type ApiPrincipal,
  type TokenPrincipal,
  type UserPrincipal,
} from '@/server/tenancy/tokens';
import { errorTable } from '@/server/error-table';
import { jsonReply, JsonReply, type BufferedRequest } from './buffered';
import type { AnyBodyReader, BodySpec, RestRoute } from './declare';
import { moduleEnabled } from './modules';
import { parseQuery } from './pagination';
import { limiter } from './rate-limit';
import { refuseUnstorableText } from './untrusted-text';

/**
 * What a declared route (declare.ts) means at request time: the steps every REST v1 route shares —
 * its module switch, bearer authentication (401 without a valid token: unknown, revoked, or an
 * operator token whose user lost the role; where the route's token handling reuses a recently
 * verified token, revocation is found by the handler's write), the per-token rate limit, then who may call it (`auth`: refused with a
 * reply, or a context for the handler), the handler, and coded errors — within one request budget
 * (db/deadline.ts).
 */

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

/** The request's JSON body: 400 naming `content-type` unless it is JSON, `body` when it does not parse, the field when it holds text PostgreSQL cannot store. */
function readJson(req: BufferedRequest): unknown {
  const type = req.headers.get('content-type') ?? '';
  if (!type.includes('application/json')) throw new DomainError('ValidationFailed', 'content-type must be application/json', 'content-type');
  let value: unknown;
  try {
    value = JSON.parse(req.body.toString('utf8'));
  } catch {
    throw new DomainError('ValidationFailed', 'body is not valid JSON', 'body');
  }
  refuseUnstorableText(value, 'body');
  return value;
}

/** Reads the body as the route declares it: its schema, or the schema for `key` (the path parameter's value). */
function bodyReader(spec: BodySpec | undefined, req: BufferedRequest, params: Record<string, string>): AnyBodyReader {
  if (!spec) return () => undefined;
  if (spec.kind === 'json') return () => spec.schema.parse(spec.optional && req.body.length === 0 ? {} : readJson(req));
  return (key) => {
    if (key === undefined || params[spec.param] !== key) throw new Error(`the body of {${spec.param}} "${params[spec.param]}" was read as "${key}"`);
    const value = readJson(req);
    if (!Object.hasOwn(spec.schemas, key)) throw spec.unknown(key);
    return spec.schemas[key].parse(value);
  };
}

const unauthenticated = (message = 'a valid bearer token is required') =>
  errorReply(401, 'Unauthenticated', message, null, undefined, { 'www-authenticate': 'Bearer' });

/** The per-token rate limit's 429, or null when the request may go on. */
function rateLimited(tokenId: string): JsonReply | null {
  const allowed = limiter('token').take(tokenId);
  if (allowed.ok) return null;
  return errorReply(429, 'RateLimited', `too many requests for this token; retry in ${allowed.retryAfterSeconds} s`, null, undefined, {
    'retry-after': String(allowed.retryAfterSeconds),
  });
}

const operatorTokenHere = () => errorReply(403, 'Forbidden', 'an operator token acts on the operator routes only; use a project token for project routes');

/** A project token's project and role, checked against the path (404 for any other project: another tenant's is never revealed). */
function checkProjectToken(principal: TokenPrincipal, params: Record<string, string>, minRole: ProjectRole): JsonReply | null {
  if ('project' in params && params.project !== principal.projectSlug) {
    return errorReply(404, 'NotFound', `project "${params.project}" not found`, 'project');
  }
  if (!roleAtLeast(principal.role, minRole)) {
    return errorReply(
      403,
      'Forbidden',
      principal.role === 'viewer'
        ? `this token is read-only; the ${minRole} role is needed`
        : `this needs a token with the ${minRole} role (this one is ${principal.role})`,
    );
  }
  return null;
}

/**
 * A user token on a route of the path's project: the project and the user's role there, as the
 * console resolves them for the signed-in user (404 where they have none, 403 below `minRole`).
 */
async function userProjectAccess(principal: UserPrincipal, inputs: Inputs, minRole: ProjectRole): Promise<JsonReply | { id: string; slug: string }> {
  const access = await resolveProjectAccess(inputs.db, principalUser(principal), inputs.params.project);
  if (!roleAtLeast(access.role, minRole)) return errorReply(403, 'Forbidden', `this needs the ${minRole} role in project "${access.project.slug}"`);
  return { id: access.project.id, slug: access.project.slug };
}

interface Inputs {
  db: Db;
  params: Record<string, string>;
  query: () => unknown;
  body: AnyBodyReader;
}

/** Who may call the route (`auth`): a refusal, or the handler's context. */
async function authorize(route: RestRoute, principal: ApiPrincipal, inputs: Inputs): Promise<JsonReply | object> {
  const { auth } = route;
  const actor = tokenActor(principal);
  switch (auth.kind) {
    case 'token': {
      if (principal.kind === 'user')
        return errorReply(403, 'Forbidden', 'a user token acts on the tenancy routes only; use a project token for project routes');
      if (principal.kind !== 'project') return operatorTokenHere();
      const params = auth.handling?.checkedParams ? auth.handling.checkedParams(inputs.params, principal) : inputs.params;
      return checkProjectToken(principal, params, auth.minRole) ?? { ...inputs, principal, actor };
    }
    case 'projectRead':
      if (principal.kind === 'user') {
        const project = await userProjectAccess(principal, inputs, 'viewer');
        return project instanceof JsonReply ? project : { ...inputs, principal, actor, project };
      }
      if (principal.kind === 'project') {
        return (
          checkProjectToken(principal, inputs.params, 'viewer') ?? {
            ...inputs,
            principal,
            actor,
            project: { id: principal.projectId, slug: principal.projectSlug },
          }
        );
      }
      return { ...inputs, principal, actor, project: { id: await projectIdBySlug(inputs.db, inputs.params.project), slug: inputs.params.project } };
    case 'projectOrOperator':
      if (principal.kind === 'user') {
        const project = await userProjectAccess(principal, inputs, auth.minRole);
        return project instanceof JsonReply ? project : { ...inputs, principal, actor, project };
      }
      if (principal.kind === 'project') {
        const refused = checkProjectToken(principal, inputs.params, auth.minRole);
        if (refused) return refused;
        if (principal.clusterName) return errorReply(403, 'Forbidden', 'a cluster token acts for its cluster only');
        return { ...inputs, principal, actor, project: { id: principal.projectId, slug: principal.projectSlug } };
      }
      return { ...inputs, principal, actor, project: { id: await projectIdBySlug(inputs.db, inputs.params.project), slug: inputs.params.project } };
    case 'operator':
      if (principal.kind !== 'operator')
        return errorReply(403, 'Forbidden', 'this route needs an operator token; project, cluster and user tokens cannot use it');
      return { ...inputs, principal, actor };
    case 'user':
      if (principal.kind === 'project') {
        return errorReply(403, 'Forbidden', 'this route needs a user token (or an operator token); a project token acts within its project only');
      }
      return { ...inputs, principal, actor, user: principalUser(principal) };
    case 'anyToken':
      return { ...inputs, principal, actor };
  }
}

async function serve(
  route: RestRoute,
  req: BufferedRequest,
  params: Record<string, string>,
  secret: string | undefined,
  confirms: boolean,
): Promise<JsonReply> {
  const module = route.group.module;
  if (module && !moduleEnabled(module)) return errorReply(404, 'NotFound', 'this API is not served here');
  const db = getDb();
  const body = bodyReader(route.body, req, params);
  const principal = secret ? await verifyApiToken(db, secret, { reuseRecent: confirms }) : undefined;
  if (!principal) {
    const whenRefused = route.auth.kind === 'token' ? route.auth.handling?.whenRefused : undefined;
    const fallback = secret && whenRefused ? await whenRefused({ db, secret, params, body }) : undefined;
    if (!fallback) return unauthenticated();
    const answer = rateLimited(fallback.tokenId) ?? (await fallback.answer());
    return answer === undefined ? unauthenticated() : answer instanceof JsonReply ? answer : jsonReply(answer);
  }
  const limited = rateLimited(principal.tokenId);
  if (limited) return limited;
  const query = route.query ? () => parseQuery(new URL(req.url).searchParams, route.query!) : () => undefined;
  const context = await authorize(route, principal, { db, params, query, body });
  if (context instanceof JsonReply) return context;
  const result = await route.handler(context as never);
  return result instanceof JsonReply ? result : jsonReply(result);
}

/**
 * Answers one request to `route` (already matched: `params` are the path's, percent-decoded; the
 * body read whole within the size limit). Never throws: every failure is a coded JSON error, and
 * one nobody coded is a 500 with only the id under which it is logged.
 */
export async function serveRoute(route: RestRoute, req: BufferedRequest, params: Record<string, string>): Promise<JsonReply> {
  const secret = /^Bearer\s+(\S+)$/i.exec(req.headers.get('authorization') ?? '')?.[1];
  const confirms = route.auth.kind === 'token' && (route.auth.handling?.reuseVerified?.(params) ?? false);
  try {
    // The whole request — token, checks, handler — within one budget (db/deadline.ts).
    return await withDeadline(env().DB_REQUEST_TIMEOUT_MS, () => serve(route, req, params, secret, confirms));
  } catch (e) {
    // A write that found its token revoked or below the role: the token is not reused again.
    if (secret && confirms && isDomainError(e) && (e.code === 'Unauthenticated' || e.code === 'Forbidden')) {
      forgetVerifiedToken(secret);
      if (e.code === 'Unauthenticated') return unauthenticated(e.message);
    }
    return toReply(e);
  }
}
