import type { IncomingMessage } from 'node:http';
import type { Db } from '@/db/client';
import type { Env } from '@/lib/env-schema';
import { isDomainError } from '@/server/errors';
import { limiter } from '@/server/http/rate-limit';
import { projectIdBySlug } from '@/server/tenancy/projects';
import { tokenActor, verifyApiToken } from '@/server/tenancy/tokens';
import {
  createSubjectAccessReviewer,
  createTokenReviewer,
  readWebhookKubeconfig,
  WebhookUnavailable,
  type RequestAttributes,
  type SubjectAccessReviewer,
  type TokenReviewer,
} from './authorizer';
import type { DatabaseProbe } from './availability';
import type { KindDeclaration } from './declare';
import { frontProxyUser, parentOf, PARENT_NAME, PARENT_TYPE, type FrontProxyConfig, type UserInfo } from './front-proxy';
import { callerIn, errorReply, route, type Caller, type Reply } from './server';
import { KubeError } from './status';

/**
 * The HTTPS listener's root, as an extension API server serves it behind an aggregator (Milo's or
 * kube-apiserver's; docs/aggregated-api.md): the original paths (`/apis/ipam.miloapis.com/v1alpha1/
 * namespaces/{ns}/ipclaims…`, `/api`, `/apis`, `/openapi/…`, `/version`) and `/livez`, `/readyz`,
 * `/healthz`.
 *
 * Who acts:
 * - the front proxy's user (front-proxy.ts), authorized request by request by a SubjectAccessReview
 *   (authorizer.ts; groups in AUTHORIZATION_ALWAYS_ALLOW_GROUPS skip it), acting in the project
 *   Milo names in its extras (`iam.miloapis.com/parent-type: Project`, `…/parent-name`). A request
 *   whose parent is an organization, or that names none, reaches platform-wide kinds only.
 * - a TokenReview's user (AUTHENTICATION_WEBHOOK_CONFIG_FILE), the same way;
 * - a Meridian bearer token, with its roles as on a project's control plane: a project token acts
 *   in its project; a user or operator token names no project (platform-wide kinds only).
 */

export interface AggregatedConfig {
  /** Unset: no front proxy is trusted (REQUESTHEADER_CLIENT_CA_FILE unset). */
  frontProxy?: FrontProxyConfig;
  authorizer?: SubjectAccessReviewer;
  tokenReviewer?: TokenReviewer;
  alwaysAllowGroups: string[];
  probe: DatabaseProbe;
}

const HEALTH = /^\/(livez|readyz|healthz)(?:\/([a-z-]+))?$/;

/** `/livez`, `/readyz`, `/healthz` as k8s.io/apiserver answers them (text, `?verbose` lists the checks; 500 when one fails). */
async function health(kind: string, check: string | undefined, url: URL, probe: DatabaseProbe): Promise<Reply> {
  const checks: { name: string; run: () => Promise<string | undefined> }[] = [{ name: 'ping', run: async () => undefined }];
  // A process that runs is live; whether it can serve is readiness (the database).
  if (kind !== 'livez') checks.push({ name: 'database', run: () => probe.unavailable() });
  const chosen = check ? checks.filter((c) => c.name === check) : checks;
  if (chosen.length === 0) return { status: 404, body: `${kind} check "${check}" not found\n`, contentType: 'text/plain; charset=utf-8' };
  const results = await Promise.all(chosen.map(async (c) => ({ name: c.name, failure: await c.run() })));
  const failed = results.some((r) => r.failure);
  const lines = results.map((r) => (r.failure ? `[-]${r.name} failed: ${r.failure}` : `[+]${r.name} ok`));
  const verbose = url.searchParams.has('verbose') || failed;
  const text = verbose ? `${lines.join('\n')}\n${kind} check ${failed ? 'failed' : 'passed'}\n` : 'ok';
  return { status: failed ? 500 : 200, body: text, contentType: 'text/plain; charset=utf-8' };
}

const VERB_OF_METHOD: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch' };

/**
 * The attributes of a request, as k8s.io/apiserver's RequestInfoFactory finds them: a resource
 * request (`/api/v1/…`, `/apis/{group}/{version}/…` naming a resource) with its verb, group,
 * version, resource, subresource, namespace and name; anything else (discovery, OpenAPI, version)
 * is a non-resource request by path and lower-case method.
 */
export function requestAttributes(method: string, url: URL): RequestAttributes {
  const parts = url.pathname.split('/').filter(Boolean).map(safeDecode);
  const nonResource: RequestAttributes = { kind: 'nonResource', verb: method === 'HEAD' ? 'get' : method.toLowerCase(), path: url.pathname };
  let rest: string[];
  let group = '';
  let version: string;
  if (parts[0] === 'api' && parts.length >= 3) {
    version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1];
    version = parts[2];
    rest = parts.slice(3);
  } else {
    return nonResource;
  }
  let namespace = '';
  // namespaces/{ns}/{resource}…; `namespaces` and `namespaces/{name}` are the namespaces resource itself.
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  } else if (rest[0] === 'namespaces' && rest.length === 2) {
    namespace = rest[1];
  }
  const [resource, name = '', subresource = ''] = rest;
  const watch = ['true', '1'].includes(url.searchParams.get('watch') ?? '');
  const m = method === 'HEAD' ? 'GET' : method;
  const verb =
    m === 'GET' ? (watch ? 'watch' : name ? 'get' : 'list') : m === 'DELETE' ? (name ? 'delete' : 'deletecollection') : (VERB_OF_METHOD[m] ?? m.toLowerCase());
  return { kind: 'resource', verb, group, version, resource, subresource, namespace, name };
}

function safeDecode(s: string) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The Forbidden message kube-apiserver gives, with the authorizer's reason. */
function forbiddenFor(user: UserInfo, a: RequestAttributes, reason: string): KubeError {
  const why = reason ? `: ${reason}` : '';
  if (a.kind === 'nonResource') {
    return new KubeError(403, 'Forbidden', `forbidden: User "${user.username}" cannot ${a.verb} path "${a.path}"${why}`);
  }
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const qualified = a.group ? `${a.resource}.${a.group}` : a.resource;
  return new KubeError(
    403,
    'Forbidden',
    `${qualified}${a.name ? ` "${a.name}"` : ''} is forbidden: User "${user.username}" cannot ${a.verb} resource "${resource}" in API group "${a.group}"${a.namespace ? ` in the namespace "${a.namespace}"` : ''}${why}`,
    { name: a.name || undefined, group: a.group, kind: a.resource },
  );
}

const unauthorized = () => new KubeError(401, 'Unauthorized', 'Unauthorized', {}, { 'www-authenticate': 'Bearer' });

/** A refusal to reach a kind that lives in a project, for a caller that names none. */
const needsProject = (what: string, parent: string) =>
  new KubeError(
    404,
    'NotFound',
    `the server could not find the requested resource: ${what} live in a project, and this request names ${parent} (Milo names it with the extras ${PARENT_TYPE}: Project and ${PARENT_NAME})`,
  );

/** Decides a delegated user's request: allowed, or the refusal to answer (403 denied, 503 the authorizer did not answer). */
async function authorize(config: AggregatedConfig, user: UserInfo, a: RequestAttributes): Promise<KubeError | undefined> {
  if (user.groups.some((g) => config.alwaysAllowGroups.includes(g))) return undefined;
  if (!config.authorizer) {
    return forbiddenFor(user, a, 'no authorizer is configured (AUTHORIZATION_WEBHOOK_CONFIG_FILE): a delegated user may do nothing');
  }
  try {
    const decision = await config.authorizer.authorize(user, a);
    return decision.allowed ? undefined : forbiddenFor(user, a, decision.reason);
  } catch (e) {
    if (!(e instanceof WebhookUnavailable)) throw e;
    return new KubeError(
      503,
      'ServiceUnavailable',
      `the request cannot be authorized: ${e.message}; it is refused until the authorizer answers`,
      { retryAfterSeconds: 1 },
      { 'retry-after': '1' },
    );
  }
}

/** Who a delegated user is as a caller: the parent's project (or none), with every right (the authorizer decided), named in audit events as the user. */
async function delegatedCaller(db: Db, user: UserInfo, via: 'front proxy' | 'TokenReview'): Promise<{ caller: Caller; parent: string } | KubeError> {
  const parent = parentOf(user);
  if ('error' in parent) return new KubeError(400, 'BadRequest', parent.error);
  const actor = { type: 'system' as const, label: `${user.username} (${via})` };
  if (parent.type !== 'Project') {
    return {
      caller: { projectId: '', projectSlug: '', role: 'owner', operator: true, actor, user: user.username },
      parent: parent.type === 'none' ? 'no parent' : `organization "${parent.name}"`,
    };
  }
  try {
    return {
      caller: { projectId: await projectIdBySlug(db, parent.name), projectSlug: parent.name, role: 'owner', operator: false, actor, user: user.username },
      parent: `project "${parent.name}"`,
    };
  } catch (e) {
    if (isDomainError(e) && e.code === 'NotFound')
      return new KubeError(404, 'NotFound', `project "${parent.name}" not found`, { name: parent.name, kind: 'projects' });
    throw e;
  }
}

/** A Meridian token at the root: a project token acts in its project; a user or operator token in none. */
async function tokenCaller(db: Db, secret: string): Promise<{ caller: Caller; parent: string } | KubeError | undefined> {
  const principal = await verifyApiToken(db, secret);
  if (!principal) return undefined;
  if (principal.kind === 'project') {
    const caller = await callerIn(db, secret, principal.projectSlug);
    if (!caller) return unauthorized();
    return caller instanceof KubeError ? caller : { caller, parent: `project "${principal.projectSlug}"` };
  }
  const limited = limiter('token').take(principal.tokenId);
  if (!limited.ok) {
    return new KubeError(429, 'TooManyRequests', `too many requests for this token; retry in ${limited.retryAfterSeconds} s`, {
      retryAfterSeconds: limited.retryAfterSeconds,
    });
  }
  return {
    caller: {
      projectId: '',
      projectSlug: '',
      role: 'viewer',
      operator: principal.kind === 'operator',
      actor: tokenActor(principal),
      user: principal.userEmail,
    },
    parent: 'no project',
  };
}

export interface RootHandler {
  handle(req: IncomingMessage, url: URL, body: Buffer, kinds: readonly KindDeclaration[], db: Db): Promise<Reply>;
}

export function createRootHandler(config: AggregatedConfig): RootHandler {
  return {
    async handle(req, url, body, kinds, db) {
      const method = req.method ?? 'GET';
      const probe = HEALTH.exec(url.pathname);
      // Health answers everyone, as k8s.io/apiserver's always-allowed paths.
      if (probe && (method === 'GET' || method === 'HEAD')) return health(probe[1], probe[2], url, config.probe);

      let who: { caller: Caller; parent: string } | KubeError | undefined;
      const proxied = config.frontProxy ? frontProxyUser(req, config.frontProxy) : undefined;
      const secret = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
      let delegated: UserInfo | undefined = typeof proxied === 'object' ? proxied : undefined;
      if (!delegated && secret) {
        who = await tokenCaller(db, secret);
        if (!who && config.tokenReviewer) {
          try {
            delegated = await config.tokenReviewer.authenticate(secret);
          } catch (e) {
            if (!(e instanceof WebhookUnavailable)) throw e;
            return errorReply(
              new KubeError(503, 'ServiceUnavailable', `the token cannot be authenticated: ${e.message}`, { retryAfterSeconds: 1 }, { 'retry-after': '1' }),
            );
          }
        }
      }
      if (delegated) {
        const refused = await authorize(config, delegated, requestAttributes(method, url));
        if (refused) return errorReply(refused);
        who = await delegatedCaller(db, delegated, typeof proxied === 'object' ? 'front proxy' : 'TokenReview');
      }
      if (!who) return errorReply(unauthorized());
      if (who instanceof KubeError) return errorReply(who);
      const { caller, parent } = who;
      return route(req, url, url.pathname, '', kinds, db, caller, body, {
        probe: config.probe,
        reach: (k) => {
          if (k !== 'namespaces' && (k.plane ?? 'project') === 'platform') return undefined;
          if (caller.projectId) return undefined;
          return needsProject(k === 'namespaces' ? 'namespaces' : `${k.plural}.${k.group}`, parent);
        },
      });
    },
  };
}

/** The root's configuration from the environment: the front proxy, the webhooks and their caches. Throws naming a file that cannot be read. */
export function aggregatedConfigFromEnv(e: Env, probe: DatabaseProbe): AggregatedConfig {
  const timeoutMs = e.AUTHORIZATION_WEBHOOK_TIMEOUT;
  return {
    frontProxy: e.REQUESTHEADER_CLIENT_CA_FILE
      ? {
          allowedNames: e.REQUESTHEADER_ALLOWED_NAMES,
          usernameHeaders: e.REQUESTHEADER_USERNAME_HEADERS,
          groupHeaders: e.REQUESTHEADER_GROUP_HEADERS,
          extraPrefixes: e.REQUESTHEADER_EXTRA_HEADERS_PREFIX,
        }
      : undefined,
    authorizer: e.AUTHORIZATION_WEBHOOK_CONFIG_FILE
      ? createSubjectAccessReviewer(readWebhookKubeconfig(e.AUTHORIZATION_WEBHOOK_CONFIG_FILE), {
          authorizedTtlMs: e.AUTHORIZATION_WEBHOOK_CACHE_AUTHORIZED_TTL,
          unauthorizedTtlMs: e.AUTHORIZATION_WEBHOOK_CACHE_UNAUTHORIZED_TTL,
          timeoutMs,
        })
      : undefined,
    tokenReviewer: e.AUTHENTICATION_WEBHOOK_CONFIG_FILE
      ? createTokenReviewer(readWebhookKubeconfig(e.AUTHENTICATION_WEBHOOK_CONFIG_FILE), { ttlMs: e.AUTHENTICATION_WEBHOOK_CACHE_TTL, timeoutMs })
      : undefined,
    alwaysAllowGroups: e.AUTHORIZATION_ALWAYS_ALLOW_GROUPS,
    probe,
  };
}
