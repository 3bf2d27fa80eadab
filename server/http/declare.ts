import type { z } from 'zod';
import type { Db } from '@/db/client';
import type { Actor } from '@/server/audit/events';
import type { ModuleName } from '@/lib/env-schema';
import { DomainError } from '@/server/errors';
import type { ProjectRole, SessionUser } from '@/server/tenancy/roles';
import type { ApiPrincipal, OperatorPrincipal, TokenPrincipal, UserPrincipal } from '@/server/tenancy/tokens';
import { jsonReply } from './buffered';

/**
 * How a domain declares its REST v1 routes (server/<domain>/rest.ts): each route once, as data —
 * method, path, group, summary, who may call it, its query, body and output schemas, and its handler. The
 * REST server (api-server.ts), the OpenAPI document (openapi.ts), discovery (`GET /api/v1`), the
 * request metrics' route labels and the isolation and fuzz suites all read the table these make
 * (server/api/routes.ts). This module holds only declarations; what a declaration means at request time
 * (authentication, the role, reading the body, coded errors) is rest.ts.
 */

export { jsonReply };

export const ROUTE_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type RouteMethod = (typeof ROUTE_METHODS)[number];

/** An API group: a line of `GET /api/v1`, a tag of the OpenAPI document, and the module that switches it off. */
export interface ApiGroup {
  name: string;
  description: string;
  /** The module (MERIDIAN_DISABLED_MODULES) whose routes these are: switched off, the group is absent and its routes answer 404. */
  module?: ModuleName;
}

/** `{ project: string; name: string }` for `/api/v1/projects/{project}/networks/{name}`. */
export type PathParams<P extends string> = { [K in ParamNames<P>]: string };
type ParamNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}` ? Name | ParamNames<Rest> : never;

// ---- Bodies -------------------------------------------------------------------------------------

/** A JSON body parsed with `schema`; with `optional`, a request without a body reads as `{}`. */
export interface JsonBody<S extends z.ZodType = z.ZodType> {
  kind: 'json';
  schema: S;
  optional: boolean;
}

/**
 * A JSON body whose schema depends on a path parameter (the CNI lease API: one schema per command).
 * For a value with no schema the body is still read (its content type and syntax checked), then
 * `unknown(value)` is thrown.
 */
export interface JsonBodyByParam<M extends Record<string, z.ZodType> = Record<string, z.ZodType>> {
  kind: 'byParam';
  param: string;
  schemas: M;
  unknown: (value: string) => Error;
}

export type BodySpec = JsonBody | JsonBodyByParam;

/** The request body: a JSON document (content-type application/json) valid for `schema`. */
export const jsonBody = <S extends z.ZodType>(schema: S): JsonBody<S> => ({ kind: 'json', schema, optional: false });

/** As `jsonBody`, but a request without a body reads as `{}` (actions whose fields are all optional). */
export const optionalJsonBody = <S extends z.ZodType>(schema: S): JsonBody<S> => ({ kind: 'json', schema, optional: true });

/** A JSON body valid for `schemas[value of the path parameter]`; the handler reads it with that value. */
export const jsonBodyByParam = <M extends Record<string, z.ZodType>>(param: string, schemas: M, unknown: (value: string) => Error): JsonBodyByParam<M> => ({
  kind: 'byParam',
  param,
  schemas,
  unknown,
});

/**
 * How a handler reads its body: parsed with the declared schema when it asks (so a handler can
 * refuse on something else first, as the CNI API answers an unknown cluster before its body). A
 * malformed body is 400 naming `body`, a wrong content type 400 naming `content-type`, an invalid
 * one 400 naming the field.
 */
export type BodyReader<B> =
  B extends JsonBody<infer S>
    ? () => z.output<S>
    : B extends JsonBodyByParam<infer M>
      ? <K extends string>(key: K) => K extends keyof M ? z.output<M[K]> : never
      : never;

/** How a handler reads its query: parsed with the declared schema (unknown parameters ignored). */
export type QueryReader<Q> = Q extends z.ZodType ? () => z.output<Q> : never;

// ---- Who may call a route -----------------------------------------------------------------------

/**
 * How a route takes its bearer token where it differs from every route's, declared by the route's
 * own code (the CNI's: server/cni/rest.ts) and applied by rest.ts at the steps named here.
 */
export interface TokenHandling<P = Record<string, string>, R = AnyBodyReader> {
  /** The path's parameters the project check sees, given the token (a path that names the token's own project). */
  checkedParams?: (params: P, principal: TokenPrincipal) => P;
  /**
   * Requests whose handler checks in its own write's transaction that the token is unrevoked and
   * still holds the route's role, and throws Unauthenticated or Forbidden when it does not: a token
   * verified in the last 30 s is not read again first (server/tenancy/tokens.ts). Until that check,
   * a token revoked meanwhile can still get the route's other refusals (400, 404, 429); it never
   * gets a write.
   */
  reuseVerified?: (params: P) => boolean;
  /**
   * A refused token's (unknown or revoked) last chance: an answer in place of the 401, under the
   * token id its rate limit counts, or undefined to keep the 401.
   */
  whenRefused?: (request: { db: Db; secret: string; params: P; body: R }) => Promise<{ tokenId: string; answer: () => Promise<unknown> } | undefined>;
}

/** A body reader whatever the route's body (how rest.ts holds them). */
export type AnyBodyReader = (key?: string) => unknown;

/**
 * Who may call a route:
 * - `token`: a project token of the path's project with at least `minRole` (404 for another
 *   project, 403 below the role, 403 for an operator token);
 * - `projectRead`: a read (GET) of the path's project by its own tokens (viewer and up, as `token`)
 *   or by an operator token, for any project;
 * - `projectOrOperator`: a project write by the project's own tokens with at least `minRole` (not a
 *   cluster token), or by an operator token, for any project;
 * - `operator`: an operator token only (project and cluster tokens 403);
 * - `user`: a token that acts for a person — a user token, or an operator token (its operator) —
 *   with that person's current memberships, which the handler checks (project and cluster tokens
 *   403: they act within their project only);
 * - `anyToken`: any valid token, whatever it acts for.
 */
export type RouteAuth =
  | {
      kind: 'token';
      minRole: ProjectRole;
      /** Where the route takes its token otherwise than every route (TokenHandling). */
      handling?: TokenHandling;
    }
  | { kind: 'projectRead' }
  | { kind: 'projectOrOperator'; minRole: ProjectRole }
  | { kind: 'operator' }
  | { kind: 'user' }
  | { kind: 'anyToken' };

// ---- What a handler gets ------------------------------------------------------------------------

interface Inputs<P, Q, B> {
  db: Db;
  /** The path's parameters, percent-decoded, as sent (handlers validate what they use). */
  params: P;
  query: QueryReader<Q>;
  body: BodyReader<B>;
}

/** A `token` route's handler: the project token and its audit actor. */
export type TokenContext<P, Q = undefined, B = undefined> = Inputs<P, Q, B> & { principal: TokenPrincipal; actor: Actor };
/** A `projectRead` route's handler: the project addressed (the token's own, or the path's for an operator token) and whoever calls. */
export type ProjectReadContext<P, Q = undefined, B = undefined> = Inputs<P, Q, B> & {
  principal: ApiPrincipal;
  actor: Actor;
  project: { id: string; slug: string };
};
/** A `projectOrOperator` route's handler: as `projectRead`, for a write. */
export type ProjectOrOperatorContext<P, Q = undefined, B = undefined> = ProjectReadContext<P, Q, B>;
/** An `operator` route's handler: the operator token and the operator's audit actor. */
export type OperatorContext<P, Q = undefined, B = undefined> = Inputs<P, Q, B> & { principal: OperatorPrincipal; actor: Actor };
/** A `user` route's handler: the user or operator token, the person it acts for (as the domain sees a signed-in user) and the audit actor. */
export type UserContext<P, Q = undefined, B = undefined> = Inputs<P, Q, B> & { principal: UserPrincipal | OperatorPrincipal; user: SessionUser; actor: Actor };
/** An `anyToken` route's handler: whoever calls. */
export type AnyTokenContext<P, Q = undefined, B = undefined> = Inputs<P, Q, B> & { principal: ApiPrincipal; actor: Actor };

/** What a handler returns: a `jsonReply` (to set the status or headers), or any value, answered as JSON with 200. */
export type HandlerResult = Promise<unknown>;

// ---- The declaration ----------------------------------------------------------------------------

/** A declared route, as the dispatcher, the OpenAPI document and the test suites read it. */
export interface RestRoute {
  readonly method: RouteMethod;
  /** OpenAPI-style path, e.g. `/api/v1/projects/{project}/networks/{name}`. */
  readonly path: string;
  readonly group: ApiGroup;
  readonly summary: string;
  readonly auth: RouteAuth;
  /** The query parameters the route reads (a zod object: each key one parameter). */
  readonly query?: z.ZodObject;
  readonly body?: BodySpec;
  /** The JSON body of every successful answer (server/http/outputs.ts). */
  readonly output: z.ZodType;
  /** Called with the context of `auth.kind` (rest.ts builds it). */
  readonly handler: (context: never) => HandlerResult;
}

interface Common<M extends RouteMethod, P extends string, Q, B> {
  method: M;
  path: P;
  group: ApiGroup;
  summary: string;
  query?: Q;
  body?: B;
  /** What a successful answer's JSON body is (the OpenAPI response schema; checked by the test suites' REST caller). */
  output: z.ZodType;
}

type Query = z.ZodObject | undefined;
type Body = BodySpec | undefined;

const SEGMENT = /^(?:[a-z0-9.-]+|\{\w+\})$/;

/** Checks what the types cannot: a path of static segments and `{param}`s under /api/v1, bodies only where a request has one. */
function declare(spec: Common<RouteMethod, string, Query, Body> & { handler: unknown }, auth: RouteAuth): RestRoute {
  const where = `${spec.method} ${spec.path}`;
  const segments = spec.path.split('/').slice(1);
  if (segments[0] !== 'api' || segments[1] !== 'v1' || segments.length < 3 || !segments.every((s) => SEGMENT.test(s))) {
    throw new Error(`${where}: a REST v1 path is /api/v1/ then lower-case segments or {param}s`);
  }
  if (typeof spec.handler !== 'function') throw new Error(`${where}: no handler`);
  if (spec.body && spec.method === 'GET') throw new Error(`${where}: a GET has no body`);
  if (spec.body?.kind === 'byParam' && !spec.path.includes(`{${spec.body.param}}`))
    throw new Error(`${where}: the body depends on {${spec.body.param}}, which the path lacks`);
  if (auth.kind === 'projectRead' && spec.method !== 'GET') throw new Error(`${where}: routes open to operators' reads are GET only`);
  if ((auth.kind === 'projectRead' || auth.kind === 'projectOrOperator') && !spec.path.startsWith('/api/v1/projects/{project}')) {
    throw new Error(`${where}: a route for an operator on any project addresses it as /api/v1/projects/{project}`);
  }
  return Object.freeze({
    method: spec.method,
    path: spec.path,
    group: spec.group,
    summary: spec.summary,
    auth,
    query: spec.query,
    body: spec.body,
    output: spec.output,
    handler: spec.handler as RestRoute['handler'],
  });
}

/**
 * A route for project tokens: bearer-token authentication (401 without a valid, unrevoked token),
 * the project in the path checked against the token's (404 for any other: another tenant's project
 * is never revealed), the minimum role (403), and coded errors. The project always comes from the
 * token, never from the body. Operator tokens are refused (403): they act on the operator routes,
 * not as a member of a project.
 */
export function tokenRoute<const P extends string, Q extends Query = undefined, B extends Body = undefined>(
  spec: Common<RouteMethod, P, Q, B> & {
    minRole: ProjectRole;
    tokenHandling?: TokenHandling<PathParams<P>, BodyReader<B>>;
    handler: (context: TokenContext<PathParams<P>, Q, B>) => HandlerResult;
  },
): RestRoute {
  const { minRole, tokenHandling } = spec;
  return declare(spec, { kind: 'token', minRole, handling: tokenHandling as TokenHandling | undefined });
}

/**
 * A read of a project's data that platform operators may also make: project tokens exactly as
 * `tokenRoute` (viewer and up, their own project only); operator tokens for any project, named in
 * the path (404 when it does not exist). GET only: nothing written can be reached by an operator
 * token without `operatorRoute` or `projectOrOperatorRoute`.
 */
export function projectReadRoute<const P extends `/api/v1/projects/{project}${string}`, Q extends Query = undefined>(
  spec: Common<'GET', P, Q, undefined> & { handler: (context: ProjectReadContext<PathParams<P>, Q>) => HandlerResult },
): RestRoute {
  return declare(spec, { kind: 'projectRead' });
}

/**
 * A project write that both the project's own tokens and platform operators may make — one
 * reserved to owners, such as deleting the project: a project token of the path's project with at
 * least `minRole` (404 for any other project, 403 below the role, 403 for a cluster token, which
 * acts for its cluster only), or an operator token for any project named in the path (404 when
 * there is none).
 */
export function projectOrOperatorRoute<const P extends `/api/v1/projects/{project}${string}`, Q extends Query = undefined, B extends Body = undefined>(
  spec: Common<RouteMethod, P, Q, B> & { minRole: ProjectRole; handler: (context: ProjectOrOperatorContext<PathParams<P>, Q, B>) => HandlerResult },
): RestRoute {
  return declare(spec, { kind: 'projectOrOperator', minRole: spec.minRole });
}

/**
 * An operator route: only an operator token (its user still an enabled platform operator) gets
 * through. Project tokens of any role and cluster tokens are refused with 403 and no data, before
 * the path or the body is looked at; unknown, revoked and orphaned operator tokens get 401.
 */
export function operatorRoute<const P extends string, Q extends Query = undefined, B extends Body = undefined>(
  spec: Common<RouteMethod, P, Q, B> & { handler: (context: OperatorContext<PathParams<P>, Q, B>) => HandlerResult },
): RestRoute {
  return declare(spec, { kind: 'operator' });
}

/**
 * A route for a person's token (a user token, or an operator token acting for its operator): the
 * handler gets the user and decides with their current memberships, as the console does for a
 * signed-in user. Project and cluster tokens are refused (403) before the path or body is read;
 * unknown, revoked and disabled users' tokens get 401.
 */
export function userRoute<const P extends string, Q extends Query = undefined, B extends Body = undefined>(
  spec: Common<RouteMethod, P, Q, B> & { handler: (context: UserContext<PathParams<P>, Q, B>) => HandlerResult },
): RestRoute {
  return declare(spec, { kind: 'user' });
}

/** A route any valid token may call, whatever it acts for (identity: `GET /api/v1/whoami`). */
export function anyTokenRoute<const P extends string, Q extends Query = undefined>(
  spec: Common<'GET', P, Q, undefined> & { handler: (context: AnyTokenContext<PathParams<P>, Q>) => HandlerResult },
): RestRoute {
  return declare(spec, { kind: 'anyToken' });
}

// ---- Small helpers handlers share ---------------------------------------------------------------

/**
 * A name given both in the path and in the body must agree (the path decides what is addressed);
 * otherwise 400 naming the body field.
 */
export function expectSameAsPath(field: string, inBody: string | undefined, inPath: string): void {
  if (inBody !== undefined && inBody !== inPath) throw new DomainError('ValidationFailed', `${field}: must be "${inPath}" (as in the path) or omitted`, field);
}

export { decodeContinue, encodeContinue, pageQuery } from './pagination';
export { listOutput, statusOutput, timestamp } from '@/lib/rest-outputs';
