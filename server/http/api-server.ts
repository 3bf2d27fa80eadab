import type { IncomingMessage, ServerResponse } from 'node:http';
import { internalErrorBody } from '@/server/observability/log';
import { BufferedRequest, jsonReply, JsonReply } from './buffered';
import { MAX_BODY_BYTES, readNodeBody } from './body-limit';
import { errorReply } from './rest';
import { loadRoutes, matchRoute, ROUTE_METHODS, type LoadedRoute, type RouteMethod } from './route-table';
import { contentSecurityPolicy, securityHeaders } from './security-headers';

/**
 * REST v1 served straight from the web process's Node HTTP server, beside Next. Its clients are
 * machines (the CNI plugin on every node, automation) that call it at pod-churn rates, and Next's
 * request pipeline costs 8–10 ms of CPU per request on this hardware even for `GET /whoami`
 * (bench/cni-add, bench/ipam-claims); this path costs a fraction of a millisecond.
 *
 * The handlers are the route files under app/api/v1 (the same ones Next builds, so their contract
 * has one definition), found at start-up. Those made by server/http/rest.ts (all but two) are
 * called through their `direct` entry with the request as read here and answer a `JsonReply`,
 * written as it is; the others get the Web `Request` and `{ params }` Next would give them.
 * Answers carry the console's security headers and `cache-control: no-store`; bodies above
 * MAX_BODY_BYTES are refused with 413 before they are buffered.
 */

const fixedHeaders: Record<string, string> = Object.fromEntries([
  ...securityHeaders.map(({ key, value }) => [key.toLowerCase(), value]),
  ['content-security-policy', contentSecurityPolicy()],
  ['cache-control', 'no-store'],
]);

const EMPTY = Buffer.alloc(0);

function toRequest(req: IncomingMessage, url: string, method: string, body: Buffer | undefined): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  return new Request(url, { method, headers, body: body && body.length > 0 ? new Uint8Array(body) : undefined });
}

function sendReply(res: ServerResponse, reply: JsonReply, head = false) {
  const payload = Buffer.from(reply.json);
  res.writeHead(reply.status, { ...fixedHeaders, 'content-type': 'application/json', ...reply.headers, 'content-length': String(payload.length) });
  res.end(head ? undefined : payload);
}

async function send(res: ServerResponse, response: Response, head: boolean) {
  const headers: Record<string, string | string[]> = { ...fixedHeaders };
  response.headers.forEach((value, key) => {
    if (key !== 'set-cookie') headers[key] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  const body = response.body ? Buffer.from(await response.arrayBuffer()) : undefined;
  headers['content-length'] = String(body?.length ?? 0);
  res.writeHead(response.status, headers);
  res.end(head ? undefined : body);
}

export interface ApiServer {
  /** Whether this server answers the path (`/api/v1` and everything below it). */
  serves(pathname: string): boolean;
  /** The pattern of the route the path addresses (`/api/v1/projects/{project}/ipclaims`), or undefined when none does. */
  routeOf(pathname: string): string | undefined;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** Loads the route files under `root`/app/api/v1 and returns the dispatcher. */
export async function createApiServer(root: string): Promise<ApiServer> {
  const routes: LoadedRoute[] = await loadRoutes(root);
  const allowed = (route: LoadedRoute) => [...ROUTE_METHODS.filter((m) => route.handlers[m]), ...(route.handlers.GET ? ['HEAD'] : []), 'OPTIONS'].join(', ');

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
    const match = matchRoute(routes, pathname);
    if (!match) return sendReply(res, errorReply(404, 'NotFound', `no API route ${pathname}`, 'path'));
    const method = (req.method ?? 'GET').toUpperCase();
    if (method === 'OPTIONS') {
      res.writeHead(204, { ...fixedHeaders, allow: allowed(match.route) });
      res.end();
      return;
    }
    const handler = match.route.handlers[(method === 'HEAD' ? 'GET' : method) as RouteMethod];
    if (!handler) return sendReply(res, errorReply(405, 'MethodNotAllowed', `${method} is not served on ${pathname}`, null, undefined, { allow: allowed(match.route) }));
    let body: Buffer | undefined;
    if (method !== 'GET' && method !== 'HEAD') {
      const read = await readNodeBody(req);
      if (read === 'tooLarge') return sendReply(res, errorReply(413, 'PayloadTooLarge', `body exceeds ${MAX_BODY_BYTES} bytes`, 'body', undefined, { connection: 'close' }));
      body = read;
    }
    const asMethod = method === 'HEAD' ? 'GET' : method;
    const fullUrl = `http://${req.headers.host ?? 'localhost'}${url}`;
    const answer = handler.direct
      ? await handler.direct(new BufferedRequest(asMethod, fullUrl, req.headers, body ?? EMPTY), match.params)
      : await handler(toRequest(req, fullUrl, asMethod, body), { params: Promise.resolve(match.params) });
    if (answer instanceof JsonReply) sendReply(res, answer, method === 'HEAD');
    else await send(res, answer, method === 'HEAD');
  }

  return {
    serves: (pathname) => pathname === '/api/v1' || pathname.startsWith('/api/v1/'),
    routeOf: (pathname) => matchRoute(routes, pathname)?.route.openApiPath,
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
