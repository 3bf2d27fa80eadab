import type { IncomingMessage, ServerResponse } from 'node:http';
import { internalErrorBody } from '@/server/observability/log';
import { MAX_BODY_BYTES, readNodeBody } from './body-limit';
import { BufferedRequest, jsonReply, type JsonReply } from './buffered';
import type { RestRoute, RouteMethod } from './declare';
import { discoveryDocument, openApiDocument } from './openapi';
import { errorReply, serveRoute } from './rest';
import { allowedMethods, matchPath, pathEntries, type PathEntry, type RouteTable } from './route-table';
import { contentSecurityPolicy, securityHeaders } from './security-headers';
import { serverTiming } from './server-timing';

/**
 * REST v1, served straight from the web process's Node HTTP server (bin/web.ts hands it every
 * request under /api/v1 before Next sees it). Its clients are machines (the CNI plugin on every
 * node, automation) that call it at pod-churn rates, and Next's request pipeline costs many times a
 * handler's own CPU per request, even for `GET /whoami` (bench/cni-add, bench/ipam-claims).
 *
 * It serves the route table (server/api/routes.ts: every domain's declared routes, given by the web process) and, from the same
 * table, discovery (`GET /api/v1`) and the OpenAPI document (`GET /api/v1/openapi.json`). A request
 * is read whole (bodies above MAX_BODY_BYTES are refused with 413 before they are buffered) and
 * answered with a `JsonReply` written as it is, with the console's security headers and
 * `cache-control: no-store`.
 */

const fixedHeaders: Record<string, string> = Object.fromEntries([
  ...securityHeaders.map(({ key, value }) => [key.toLowerCase(), value]),
  ['content-security-policy', contentSecurityPolicy()],
  ['cache-control', 'no-store'],
]);

const EMPTY = Buffer.alloc(0);

/** What answers one method of one path: the request (read whole) and the path's parameters in, a reply out. */
export type Endpoint = (req: BufferedRequest, params: Record<string, string>) => Promise<JsonReply>;

/**
 * Every path REST v1 answers: the table's routes, discovery and the OpenAPI document; most specific
 * first. With `checkOutputs` (the test suites' in-process caller, test/rest.ts), every successful
 * answer is checked against its route's declared output, and one that does not match throws,
 * naming the route and the fields.
 */
export function apiEndpoints(table: RouteTable, options: { checkOutputs?: boolean } = {}): PathEntry<Endpoint>[] {
  return pathEntries<Endpoint>([
    { method: 'GET', path: '/api/v1', endpoint: async () => jsonReply(discoveryDocument(table)) },
    { method: 'GET', path: '/api/v1/openapi.json', endpoint: async () => jsonReply(openApiDocument(table)) },
    ...table.routes.map((route) => ({
      method: route.method,
      path: route.path,
      endpoint: options.checkOutputs
        ? async (req: BufferedRequest, params: Record<string, string>) => checkedOutput(route, await serveRoute(route, req, params))
        : (req: BufferedRequest, params: Record<string, string>) => serveRoute(route, req, params),
    })),
  ]);
}

function checkedOutput(route: RestRoute, reply: JsonReply): JsonReply {
  if (reply.status < 200 || reply.status > 299 || reply.json === '') return reply;
  const checked = route.output.safeParse(JSON.parse(reply.json));
  if (!checked.success) {
    const problems = checked.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
    throw new Error(
      `${route.method} ${route.path} answered ${reply.status} with a body its declared output refuses: ${problems}\n${reply.json.slice(0, 2000)}`,
    );
  }
  return reply;
}

function sendReply(res: ServerResponse, reply: JsonReply, head = false) {
  const payload = Buffer.from(reply.json);
  const timing = serverTiming(res.req);
  res.writeHead(reply.status, {
    ...fixedHeaders,
    'content-type': 'application/json',
    ...reply.headers,
    'content-length': String(payload.length),
    ...(timing ? { 'server-timing': timing } : {}),
  });
  res.end(head ? undefined : payload);
}

export interface ApiServer {
  /** Whether this server answers the path (`/api/v1` and everything below it). */
  serves(pathname: string): boolean;
  /** The pattern of the route the path addresses (`/api/v1/projects/{project}/ipclaims`), or undefined when none does. */
  routeOf(pathname: string): string | undefined;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** The REST v1 dispatcher over `table` (the web process gives it every declared route: server/api/routes.ts). */
export function createApiServer(table: RouteTable): ApiServer {
  const entries = apiEndpoints(table);

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const pathname = query === -1 ? url : url.slice(0, query);
    // As Next does (trailingSlash: false): one canonical form of every path.
    if (pathname.length > 1 && pathname.endsWith('/')) {
      res.writeHead(308, { ...fixedHeaders, location: pathname.replace(/\/+$/, '') + (query === -1 ? '' : url.slice(query)) });
      res.end();
      return;
    }
    const match = matchPath(entries, pathname);
    if (!match) return sendReply(res, errorReply(404, 'NotFound', `no API route ${pathname}`, 'path'));
    const method = (req.method ?? 'GET').toUpperCase();
    if (method === 'OPTIONS') {
      res.writeHead(204, { ...fixedHeaders, allow: allowedMethods(match.entry) });
      res.end();
      return;
    }
    const asMethod = method === 'HEAD' ? 'GET' : method;
    const endpoint = match.entry.methods[asMethod as RouteMethod];
    if (!endpoint)
      return sendReply(
        res,
        errorReply(405, 'MethodNotAllowed', `${method} is not served on ${pathname}`, null, undefined, { allow: allowedMethods(match.entry) }),
      );
    let body: Buffer = EMPTY;
    if (method !== 'GET' && method !== 'HEAD') {
      const read = await readNodeBody(req);
      if (read === 'tooLarge')
        return sendReply(res, errorReply(413, 'PayloadTooLarge', `body exceeds ${MAX_BODY_BYTES} bytes`, 'body', undefined, { connection: 'close' }));
      body = read;
    }
    const reply = await endpoint(new BufferedRequest(asMethod, `http://${req.headers.host ?? 'localhost'}${url}`, req.headers, body), match.params);
    sendReply(res, reply, method === 'HEAD');
  }

  return {
    serves: (pathname) => pathname === '/api/v1' || pathname.startsWith('/api/v1/'),
    routeOf: (pathname) => matchPath(entries, pathname)?.entry.pattern,
    async handle(req, res) {
      try {
        await handle(req, res);
      } catch (e) {
        const body = internalErrorBody('rest', e);
        if (!res.headersSent) sendReply(res, jsonReply(body, { status: 500 }));
        else res.end();
      }
    },
  };
}
