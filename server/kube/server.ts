import type { IncomingMessage, ServerResponse } from 'node:http';
import yaml from 'js-yaml';
import { getDb, type Db } from '@/db/client';
import { withDeadline } from '@/db/deadline';
import { env } from '@/server/env';
import { isDomainError } from '@/server/errors';
import { MAX_BODY_BYTES, readNodeBody } from '@/server/http/body-limit';
import { limiter } from '@/server/http/rate-limit';
import { projectIdBySlug, resolveProjectAccess } from '@/server/tenancy/projects';
import { roleAtLeast, type ProjectRole } from '@/server/tenancy/roles';
import { principalUser, tokenActor, verifyApiToken } from '@/server/tenancy/tokens';
import type { Actor } from '@/server/audit/events';
import type { ModuleName } from '@/lib/env-schema';
import { enabledKinds, type DatabaseProbe } from './availability';
import { apiVersionOf, kindsOfPlane, type KindDeclaration } from './declare';
import { aggregatedDiscovery, AGGREGATED_DISCOVERY_TYPE, apiGroupList, apiGroupOf, apiVersions, coreResourceList, resourceList } from './discovery';
import {
  createObject,
  decodeObject,
  deleteObject,
  getObject,
  listObjects,
  PATCH_TYPES,
  patchObject,
  updateStatusObject,
  readDeleteOptions,
  subjectOf,
  updateObject,
  type FieldValidation,
  type PatchType,
  type RequestContext,
} from './objects';
import { decodeProtobufObject } from './protobuf';
import { openApiV2, openApiV3, openApiV3Core, openApiV3Index } from './openapi';
import { badRequest, KubeError, reasonOf, statusBody, toKubeError, type Subject } from './status';
import { createNamespace, currentResourceVersion, deleteNamespace, getNamespace, listNamespaces, type NamespaceView } from './store';
import { kindCells, kindColumns, namespaceColumns, table, wantsTable } from './table';

/**
 * The Kubernetes API of each project, as Milo lays it out: a control plane per project at
 * `/apis/resourcemanager.miloapis.com/v1alpha1/projects/{project}/control-plane`, with version,
 * discovery (legacy and aggregated), OpenAPI v2/v3, namespaces, and every declared kind
 * (server/api/kinds.ts) with get, list, create, update, patch and delete (objects.ts). Served by
 * the web process over HTTPS (bin/web.ts: kubectl sends bearer tokens over TLS only).
 *
 * Authentication is Meridian's bearer tokens with their roles: a project token acts in its own
 * project, a user token with its user's role there, an operator token reads any project; viewers
 * get and list, editors write. Any project the token cannot act in answers the same 404 as a
 * project that does not exist.
 *
 * Every other path goes to the root handler when one is given: the paths an aggregator (Milo,
 * kube-apiserver) forwards, with front-proxy authentication and delegated authorization
 * (aggregated.ts). Modules switched off take their kinds out; discovery lists a group-version only
 * while the database answers (availability.ts).
 */

export const CONTROL_PLANE_PREFIX = '/apis/resourcemanager.miloapis.com/v1alpha1/projects/';
const CONTROL_PLANE = /^\/apis\/resourcemanager\.miloapis\.com\/v1alpha1\/projects\/([^/]+)\/control-plane(\/.*)?$/;

/**
 * The platform control plane: platform-wide kinds (declared `plane: 'platform'`: registrations,
 * creation policies, the increase-request queue, organizations and projects, machine capacities)
 * for operator tokens. Milo serves these from its core control plane (the API server's root); here
 * it has a root of its own beside the projects', so the listener's root stays free.
 */
export const PLATFORM_PLANE_PATH = '/apis/resourcemanager.miloapis.com/v1alpha1/platform/control-plane';
const PLATFORM_PLANE = /^\/apis\/resourcemanager\.miloapis\.com\/v1alpha1\/platform\/control-plane(\/.*)?$/;

/** The control plane root of a project: what a kubeconfig's `server:` carries after the host. */
export const controlPlanePath = (project: string) => `${CONTROL_PLANE_PREFIX}${encodeURIComponent(project)}/control-plane`;

const KUBE_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-meridian',
  platform: 'linux/amd64',
  goVersion: 'n/a',
  compiler: 'n/a',
  buildDate: '',
  gitCommit: '',
  gitTreeState: '',
};

const pathNotFound = () => new KubeError(404, 'NotFound', 'the server could not find the requested resource');

export interface Reply {
  status: number;
  body: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

const ok = (body: unknown, status = 200, contentType?: string): Reply => ({ status, body, contentType });

export interface Caller {
  /** The project of the control plane and its slug; empty on the platform plane. */
  projectId: string;
  projectSlug: string;
  role: ProjectRole;
  /** An operator token: reads any project, writes what operators write (grants, platform kinds). */
  operator: boolean;
  actor: Actor;
  /** How the caller is named in a Forbidden message. */
  user: string;
}

/** 429 when the token has spent its rate (the same limiter as REST v1). */
function rateLimited(tokenId: string): KubeError | undefined {
  const limited = limiter('token').take(tokenId);
  if (limited.ok) return undefined;
  return new KubeError(
    429,
    'TooManyRequests',
    `too many requests for this token; retry in ${limited.retryAfterSeconds} s`,
    { retryAfterSeconds: limited.retryAfterSeconds },
    { 'retry-after': String(limited.retryAfterSeconds) },
  );
}

/** Who calls and with which role in the project of the path: undefined when the token cannot act there (answered as a path that does not exist). */
export async function callerIn(db: Db, secret: string, project: string): Promise<Caller | KubeError | undefined> {
  const principal = await verifyApiToken(db, secret);
  if (!principal) return new KubeError(401, 'Unauthorized', 'Unauthorized', {}, { 'www-authenticate': 'Bearer' });
  const limited = rateLimited(principal.tokenId);
  if (limited) return limited;
  const actor = tokenActor(principal);
  try {
    if (principal.kind === 'project') {
      if (principal.projectSlug !== project) return undefined;
      return { projectId: principal.projectId, projectSlug: project, role: principal.role, operator: false, actor, user: `token:${principal.tokenName}` };
    }
    if (principal.kind === 'user') {
      const access = await resolveProjectAccess(db, principalUser(principal), project);
      return { projectId: access.project.id, projectSlug: project, role: access.role, operator: false, actor, user: principal.userEmail };
    }
    if (principal.kind !== 'operator') return undefined;
    return { projectId: await projectIdBySlug(db, project), projectSlug: project, role: 'viewer', operator: true, actor, user: principal.userEmail };
  } catch (e) {
    if (isDomainError(e) && (e.code === 'NotFound' || e.code === 'Forbidden')) return undefined;
    throw e;
  }
}

function forbidden(caller: Caller, verb: string, resource: string, group: string, namespace?: string, role: ProjectRole | 'operator' = 'editor') {
  const need = role === 'operator' ? 'an operator token is needed' : `the ${role} role is needed (this token acts as ${caller.role})`;
  return new KubeError(
    403,
    'Forbidden',
    `${group ? `${resource}.${group}` : resource} is forbidden: User "${caller.user}" cannot ${verb} resource "${resource}" in API group "${group}"${namespace ? ` in the namespace "${namespace}"` : ''}: ${need}`,
    { group, kind: resource },
  );
}

/** Whether the caller holds `need`: a project role, or an operator token. */
const holds = (caller: Caller, need: ProjectRole | 'operator') => (need === 'operator' ? caller.operator : roleAtLeast(caller.role, need));

const VERBS: Record<string, string> = { GET: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

function requestOptions(url: URL, req: IncomingMessage, warnings: string[]) {
  const dryRun = url.searchParams.getAll('dryRun');
  if (dryRun.some((d) => d !== 'All')) throw badRequest(`dryRun: unsupported value ${JSON.stringify(dryRun.find((d) => d !== 'All'))}: only "All"`);
  const validation = url.searchParams.get('fieldValidation') ?? 'Warn';
  if (!['Strict', 'Warn', 'Ignore'].includes(validation)) throw badRequest(`fieldValidation: unsupported value "${validation}": Strict, Warn or Ignore`);
  const agent = (req.headers['user-agent'] ?? 'unknown').split('/')[0];
  return {
    dryRun: dryRun.length > 0,
    fieldValidation: validation as FieldValidation,
    manager: url.searchParams.get('fieldManager') ?? agent,
    explicitManager: url.searchParams.has('fieldManager'),
    warnings,
  };
}

function readBody(req: IncomingMessage, body: Buffer): unknown {
  const type = (req.headers['content-type'] ?? 'application/json').split(';')[0].trim();
  const text = body.toString('utf8');
  try {
    if (type === 'application/yaml') return yaml.load(text);
    if (type === 'application/json') return JSON.parse(text);
    if (type === 'application/vnd.kubernetes.protobuf') return decodeProtobufObject(body);
  } catch (e) {
    throw badRequest(
      `the body is not valid ${type === 'application/yaml' ? 'YAML' : type === 'application/json' ? 'JSON' : 'protobuf'}: ${e instanceof Error ? e.message.split('\n')[0] : ''}`,
    );
  }
  throw new KubeError(415, 'UnsupportedMediaType', `the body's content type "${type}" is not supported: application/json or application/yaml`);
}

// ---- Namespaces ---------------------------------------------------------------------------------

function namespaceObject(n: NamespaceView) {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: n.name,
      uid: n.uid,
      resourceVersion: n.resourceVersion,
      creationTimestamp: n.createdAt ? n.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z') : null,
      labels: { 'kubernetes.io/metadata.name': n.name, ...n.labels },
      ...(Object.keys(n.annotations).length ? { annotations: n.annotations } : {}),
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

const namespaceSubject = (name?: string): Subject => ({ name, group: '', kind: 'Namespace', resource: 'namespaces' });

async function serveNamespaces(req: IncomingMessage, url: URL, db: Db, caller: Caller, name: string | undefined, body: Buffer): Promise<Reply> {
  const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
  const verb = VERBS[method] ?? 'get';
  const need: ProjectRole = method === 'GET' ? 'viewer' : 'editor';
  if (!roleAtLeast(caller.role, need)) throw forbidden(caller, name || method !== 'GET' ? verb : 'list', 'namespaces', '', undefined, need);
  const dryRun = url.searchParams.getAll('dryRun').includes('All');
  try {
    if (method === 'GET' && !name) {
      const items = (await listNamespaces(db, caller.projectId)).map(namespaceObject);
      const resourceVersion = await currentResourceVersion(db);
      if (wantsTable(req.headers.accept ?? null)) {
        return ok(
          table(items, {
            columns: namespaceColumns,
            cells: (o: ReturnType<typeof namespaceObject>) => [o.metadata.name, o.status.phase, '<unknown>'],
            includeObject: url.searchParams.get('includeObject') ?? 'PartialObjectMetadata',
            resourceVersion,
          }),
        );
      }
      return ok({ apiVersion: 'v1', kind: 'NamespaceList', metadata: { resourceVersion }, items });
    }
    if (method === 'GET' && name) {
      const n = await getNamespace(db, caller.projectId, name);
      if (!n) throw new KubeError(404, 'NotFound', `namespaces "${name}" not found`, { name, kind: 'namespaces' });
      return ok(namespaceObject(n));
    }
    if (method === 'POST' && !name) {
      const input = readBody(req, body) as { metadata?: { name?: unknown; labels?: unknown; annotations?: unknown } };
      const nsName = input?.metadata?.name;
      if (typeof nsName !== 'string' || !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(nsName)) {
        throw new KubeError(
          422,
          'Invalid',
          `Namespace "${String(nsName ?? '')}" is invalid: metadata.name: Invalid value: a lowercase RFC 1123 label is required`,
          {
            kind: 'Namespace',
            causes: [{ reason: 'FieldValueInvalid', field: 'metadata.name', message: 'a lowercase RFC 1123 label is required' }],
          },
        );
      }
      const map = (v: unknown) =>
        typeof v === 'object' && v !== null ? (Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)])) as Record<string, string>) : {};
      if (dryRun) {
        if (await getNamespace(db, caller.projectId, nsName))
          throw new KubeError(409, 'AlreadyExists', `namespaces "${nsName}" already exists`, { name: nsName, kind: 'namespaces' });
        return ok(
          namespaceObject({
            name: nsName,
            uid: null,
            labels: map(input.metadata?.labels),
            annotations: map(input.metadata?.annotations),
            resourceVersion: '',
            createdAt: null,
          }),
          201,
        );
      }
      try {
        const created = await createNamespace(db, caller.projectId, {
          name: nsName,
          labels: map(input.metadata?.labels),
          annotations: map(input.metadata?.annotations),
        });
        return ok(namespaceObject(created), 201);
      } catch (e) {
        if (isDomainError(e) && e.code === 'Conflict')
          throw new KubeError(409, 'AlreadyExists', `namespaces "${nsName}" already exists`, { name: nsName, kind: 'namespaces' });
        throw e;
      }
    }
    if (method === 'DELETE' && name) {
      const n = await getNamespace(db, caller.projectId, name);
      if (!n) throw new KubeError(404, 'NotFound', `namespaces "${name}" not found`, { name, kind: 'namespaces' });
      if (!dryRun) await deleteNamespace(db, caller.projectId, name);
      return ok(namespaceObject(n));
    }
  } catch (e) {
    throw toKubeError(e, namespaceSubject(name), (f) => (f === 'name' ? 'metadata.name' : f));
  }
  throw new KubeError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
}

// ---- Objects of a kind --------------------------------------------------------------------------

const defaultFieldPath = (field: string) => (field === 'name' ? 'metadata.name' : `spec.${field}`);

async function serveKind(
  req: IncomingMessage,
  url: URL,
  db: Db,
  caller: Caller,
  k: KindDeclaration,
  namespace: string | undefined,
  name: string | undefined,
  subresource: string | undefined,
  body: Buffer,
): Promise<Reply> {
  const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
  const verb = method === 'GET' && !name ? (url.searchParams.get('watch') ? 'watch' : 'list') : (VERBS[method] ?? method.toLowerCase());
  const need =
    method === 'GET' ? (k.readRole ?? 'viewer') : subresource === 'status' ? (k.statusWriteRole ?? k.writeRole ?? 'editor') : (k.writeRole ?? 'editor');
  if (!holds(caller, need)) throw forbidden(caller, verb, k.plural, k.group, namespace, need);
  const warnings: string[] = [];
  const subject = subjectOf(k, name);
  if (k.readOnly && method !== 'GET') {
    throw new KubeError(405, 'MethodNotAllowed', `${subject.resource} are written by the system only; they can be read (get, list)`, {
      kind: k.plural,
      group: k.group,
    });
  }
  try {
    const options =
      method === 'GET'
        ? { dryRun: false, fieldValidation: 'Warn' as const, manager: '', explicitManager: false, warnings }
        : requestOptions(url, req, warnings);
    const ctx: RequestContext = { db, projectId: caller.projectId, projectSlug: caller.projectSlug, actor: caller.actor, ...options };
    const reply = await (async (): Promise<Reply> => {
      if (subresource !== undefined) {
        if (subresource !== 'status' || !name) throw pathNotFound();
        if (method === 'GET') return ok(await getObject(k, ctx, namespace, name));
        if (!k.storage.updateStatus || (method !== 'PUT' && method !== 'PATCH'))
          throw new KubeError(
            405,
            'MethodNotAllowed',
            `${subject.resource} "${name}" status is written by the system; it cannot be ${VERBS[method] ?? method}d`,
          );
        const type = method === 'PUT' ? 'PUT' : ((req.headers['content-type'] ?? '').split(';')[0].trim() as PatchType);
        if (type !== 'PUT' && !PATCH_TYPES.includes(type)) {
          throw new KubeError(
            415,
            'UnsupportedMediaType',
            `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`,
          );
        }
        return ok(await updateStatusObject(k, ctx, namespace, name, type, body));
      }
      if (!name) {
        if (method === 'GET') {
          if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
            throw new KubeError(405, 'MethodNotAllowed', 'watch is not served by this API yet');
          }
          const limit = Number(url.searchParams.get('limit') ?? 0);
          const resourceVersion = await currentResourceVersion(db);
          const page = await listObjects(k, ctx, namespace, {
            labelSelector: url.searchParams.get('labelSelector') ?? undefined,
            fieldSelector: url.searchParams.get('fieldSelector') ?? undefined,
            limit: Number.isFinite(limit) ? limit : 0,
            continue: url.searchParams.get('continue') ?? undefined,
            resourceVersion,
          });
          if (wantsTable(req.headers.accept ?? null)) {
            return ok(
              table(page.items, {
                columns: kindColumns(k),
                cells: kindCells(k),
                includeObject: url.searchParams.get('includeObject') ?? 'PartialObjectMetadata',
                resourceVersion,
                continue: page.continue,
                remainingItemCount: page.remainingItemCount,
              }),
            );
          }
          return ok({
            apiVersion: apiVersionOf(k),
            kind: `${k.kind}List`,
            metadata: { resourceVersion, ...(page.continue ? { continue: page.continue, remainingItemCount: page.remainingItemCount } : {}) },
            items: page.items,
          });
        }
        if (method === 'POST') {
          if (!k.namespaced && namespace) throw pathNotFound();
          return ok(await createObject(k, ctx, namespace, decodeObject(k, readBody(req, body), ctx)), 201);
        }
        throw new KubeError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
      }
      if (k.namespaced && namespace === undefined) throw pathNotFound();
      switch (method) {
        case 'GET': {
          const object = await getObject(k, ctx, namespace, name);
          if (wantsTable(req.headers.accept ?? null)) {
            return ok(
              table([object], {
                columns: kindColumns(k),
                cells: kindCells(k),
                includeObject: url.searchParams.get('includeObject') ?? 'PartialObjectMetadata',
                resourceVersion: object.metadata.resourceVersion,
              }),
            );
          }
          return ok(object);
        }
        case 'PUT':
          return ok(await updateObject(k, ctx, namespace, name, readBody(req, body)));
        case 'PATCH': {
          const type = (req.headers['content-type'] ?? '').split(';')[0].trim() as PatchType;
          if (!PATCH_TYPES.includes(type)) {
            throw new KubeError(
              415,
              'UnsupportedMediaType',
              `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`,
            );
          }
          if (type === 'application/apply-patch+yaml' && !options.explicitManager) {
            throw new KubeError(422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch', {
              group: 'meta.k8s.io',
              kind: 'PatchOptions',
              causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }],
            });
          }
          const force = url.searchParams.get('force') === 'true';
          if (force && type !== 'application/apply-patch+yaml') throw badRequest('force: may only be given for an apply patch');
          const result = await patchObject(k, ctx, namespace, name, type, body, { force });
          return ok(result.object, result.created ? 201 : 200);
        }
        case 'DELETE': {
          const options_ = readDeleteOptions(body);
          if (options_.dryRun?.includes('All')) ctx.dryRun = true;
          const deleted = await deleteObject(k, ctx, namespace, name, options_.preconditions ?? {});
          // 202 while the deletion is under way (finalizers, a domain's cleanup), as REST v1 answers a machine's release.
          return ok(deleted.object, deleted.gone ? 200 : 202);
        }
      }
      throw new KubeError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    })();
    return warnings.length ? { ...reply, headers: { warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(', ') } } : reply;
  } catch (e) {
    throw toKubeError(e, subject, k.fieldPath ?? defaultFieldPath);
  }
}

// ---- Routing ------------------------------------------------------------------------------------

/** What the HTTPS root (aggregated.ts) adds to routing: which kinds a caller may reach, and discovery's database probe. */
export interface RouteOptions {
  /** Why the caller cannot reach the kind (or the namespaces): answered instead of serving it. */
  reach?: (k: KindDeclaration | 'namespaces') => KubeError | undefined;
  probe?: DatabaseProbe;
}

export async function route(
  req: IncomingMessage,
  url: URL,
  rest: string,
  root: string,
  kinds: readonly KindDeclaration[],
  db: Db,
  caller: Caller,
  body: Buffer,
  options: RouteOptions = {},
): Promise<Reply> {
  const parts = rest.split('/').filter(Boolean).map(decodeURIComponent);
  const accept = req.headers.accept ?? '';
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  const aggregated =
    /as=APIGroupDiscoveryList/.test(accept) && /v=v2(?![a-z0-9])/.test(accept.split(',').find((a) => a.includes('as=APIGroupDiscoveryList')) ?? '');
  const get = (reply: () => Reply | undefined): Reply => {
    if (method !== 'GET') throw new KubeError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    const answer = reply();
    if (!answer) throw pathNotFound();
    return answer;
  };
  const [a, b, c, d, e, f, g, h] = parts;
  // Discovery lists a group-version only while it can be served (availability.ts).
  const down = a === 'apis' && parts.length <= 3 && options.probe ? await options.probe.unavailable() : undefined;
  if (down) {
    if (parts.length > 1 && kinds.some((k) => k.group === b && (c === undefined || k.version === c))) {
      throw new KubeError(503, 'ServiceUnavailable', `${b}${c ? `/${c}` : ''} cannot be served: ${down}`, { retryAfterSeconds: 1 }, { 'retry-after': '1' });
    }
    kinds = [];
  }
  const reached = (k: KindDeclaration | 'namespaces') => {
    const refused = options.reach?.(k);
    if (refused) throw refused;
  };
  if (parts.length === 0)
    return get(() =>
      ok({ paths: ['/api', '/api/v1', '/apis', ...kinds.map((k) => `/apis/${k.group}/${k.version}`), '/openapi/v2', '/openapi/v3', '/version'] }),
    );
  if (a === 'version' && parts.length === 1) return get(() => ok(KUBE_VERSION));
  if (a === 'openapi') {
    if (b === 'v2' && parts.length === 2) {
      return get(() => {
        if (!/application\/json|\*\/\*/.test(accept) && accept !== '') {
          throw new KubeError(406, 'NotAcceptable', 'only application/json is served for the OpenAPI v2 document');
        }
        return ok(openApiV2(kinds));
      });
    }
    if (b === 'v3' && parts.length === 2) return get(() => ok(openApiV3Index(kinds, root)));
    if (b === 'v3' && c === 'api' && d === 'v1' && parts.length === 4) return get(() => ok(openApiV3Core()));
    if (b === 'v3' && c === 'apis' && parts.length === 5) return get(() => (openApiV3(kinds, d, e) ? ok(openApiV3(kinds, d, e)) : undefined));
    throw pathNotFound();
  }
  if (a === 'api') {
    if (parts.length === 1) return get(() => (aggregated ? ok(aggregatedDiscovery(kinds, 'api'), 200, AGGREGATED_DISCOVERY_TYPE) : ok(apiVersions())));
    if (b !== 'v1') throw pathNotFound();
    if (parts.length === 2) return get(() => ok(coreResourceList()));
    // The platform plane has no namespaces: its kinds are cluster-scoped.
    if (c === 'namespaces' && parts.length <= 4 && caller.projectId) {
      reached('namespaces');
      return serveNamespaces(req, url, db, caller, d, body);
    }
    throw pathNotFound();
  }
  if (a !== 'apis') throw pathNotFound();
  if (parts.length === 1) return get(() => (aggregated ? ok(aggregatedDiscovery(kinds, 'apis'), 200, AGGREGATED_DISCOVERY_TYPE) : ok(apiGroupList(kinds))));
  if (parts.length === 2) return get(() => (apiGroupOf(kinds, b) ? ok(apiGroupOf(kinds, b)) : undefined));
  if (parts.length === 3) return get(() => (resourceList(kinds, b, c) ? ok(resourceList(kinds, b, c)) : undefined));
  const kindOf = (plural: string) => kinds.find((k) => k.group === b && k.version === c && k.plural === plural);
  // /apis/{g}/{v}/namespaces/{ns}/{plural}[/{name}[/{sub}]]
  if (d === 'namespaces' && parts.length >= 6) {
    const k = kindOf(f);
    if (!k || !k.namespaced || parts.length > 8) throw pathNotFound();
    reached(k);
    return serveKind(req, url, db, caller, k, e, g, h, body);
  }
  // /apis/{g}/{v}/{plural}[/{name}[/{sub}]]: every namespace's objects, or a cluster-scoped kind.
  const k = kindOf(d);
  if (!k || parts.length > 6) throw pathNotFound();
  if (k.namespaced && parts.length > 4) throw pathNotFound();
  reached(k);
  return serveKind(req, url, db, caller, k, undefined, e, f, body);
}

function send(res: ServerResponse, reply: Reply, head: boolean) {
  const text = typeof reply.body === 'string' && reply.contentType?.startsWith('text/');
  const payload = Buffer.from(text ? (reply.body as string) : JSON.stringify(reply.body));
  res.writeHead(reply.status, {
    'content-type': reply.contentType ?? 'application/json',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...reply.headers,
    'content-length': String(payload.length),
  });
  res.end(head ? undefined : payload);
}

export function errorReply(e: KubeError): Reply {
  return { status: e.code, body: statusBody(e), headers: e.headers };
}

export interface KubeServerOptions {
  /** The database (the process-wide pool unless given). */
  db?: () => Db;
  /** Modules whose kinds are not served (MERIDIAN_DISABLED_MODULES unless given). */
  disabledModules?: readonly ModuleName[];
  /** Discovery's probe of the database (availability.ts). */
  probe?: DatabaseProbe;
  /**
   * Serves every path outside a project's control plane — the HTTPS root, where an aggregator
   * forwards the original paths (aggregated.ts) — with the request's body read, under the request
   * deadline. Unset: those paths are 404.
   */
  root?: (req: IncomingMessage, url: URL, body: Buffer, kinds: readonly KindDeclaration[], db: Db) => Promise<Reply>;
}

export interface KubeServer {
  /** Whether the path is served: under a project's control plane, or anywhere with a root handler. */
  serves(pathname: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** An operator on the platform plane; any other valid token is refused there (403), an unknown one 401. */
async function callerOnPlatform(db: Db, secret: string): Promise<Caller | KubeError> {
  const principal = await verifyApiToken(db, secret);
  if (!principal) return new KubeError(401, 'Unauthorized', 'Unauthorized', {}, { 'www-authenticate': 'Bearer' });
  const limited = rateLimited(principal.tokenId);
  if (limited) return limited;
  if (principal.kind !== 'operator') {
    return new KubeError(403, 'Forbidden', 'the platform control plane is for operator tokens', {});
  }
  return { projectId: '', projectSlug: '', role: 'viewer', operator: true, actor: tokenActor(principal), user: principal.userEmail };
}

/** The Kubernetes API over `kinds` (server/api/kinds.ts): each project's control plane, the platform's, and (aggregated mode) the root. */
export function createKubeServer(allKinds: readonly KindDeclaration[], options: KubeServerOptions = {}): KubeServer {
  const kinds = enabledKinds(allKinds, options.disabledModules ?? env().MERIDIAN_DISABLED_MODULES);
  const projectKinds = kindsOfPlane(kinds, 'project');
  const platformKinds = kindsOfPlane(kinds, 'platform');
  const database = options.db ?? getDb;
  async function answer(req: IncomingMessage): Promise<Reply> {
    const url = new URL(req.url ?? '/', 'https://localhost');
    const platform = PLATFORM_PLANE.exec(url.pathname);
    const match = platform ? undefined : CONTROL_PLANE.exec(url.pathname);
    if (!match && !platform && !options.root) return errorReply(pathNotFound());
    let project = '';
    try {
      if (match) project = decodeURIComponent(match[1]);
    } catch {
      return errorReply(pathNotFound());
    }
    const rest = (platform ? platform[1] : match?.[2]) ?? '';
    let body: Buffer = Buffer.alloc(0);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const read = await readNodeBody(req, MAX_BODY_BYTES);
      if (read === 'tooLarge')
        return errorReply(new KubeError(413, 'RequestEntityTooLarge', `the request body exceeds ${MAX_BODY_BYTES} bytes`, {}, { connection: 'close' }));
      body = read;
    }
    if (!match && !platform && options.root) {
      const serveRoot = options.root;
      return guarded(() => serveRoot(req, url, body, kinds, database()));
    }
    const secret = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!secret) return errorReply(new KubeError(401, 'Unauthorized', 'Unauthorized', {}, { 'www-authenticate': 'Bearer' }));
    return guarded(async () => {
      const db = database();
      const caller = platform ? await callerOnPlatform(db, secret) : await callerIn(db, secret, project);
      if (caller instanceof KubeError) return errorReply(caller);
      if (!caller) return errorReply(pathNotFound());
      return platform
        ? await route(req, url, rest, PLATFORM_PLANE_PATH, platformKinds, db, caller, body, { probe: options.probe })
        : await route(req, url, rest, controlPlanePath(project), projectKinds, db, caller, body, { probe: options.probe });
    });
  }

  /** Runs `serve` under the request deadline, answering what it throws as a Status. */
  async function guarded(serve: () => Promise<Reply>): Promise<Reply> {
    try {
      return await withDeadline(env().DB_REQUEST_TIMEOUT_MS, serve);
    } catch (e) {
      const error = toKubeError(e, { group: '', kind: '', resource: '' }, (f) => f);
      return errorReply(error.reason ? error : new KubeError(error.code, reasonOf(error.code), error.message));
    }
  }

  return {
    serves: (pathname) => Boolean(options.root) || CONTROL_PLANE.test(pathname) || PLATFORM_PLANE.test(pathname),
    async handle(req, res) {
      send(res, await answer(req), req.method === 'HEAD');
    },
  };
}
