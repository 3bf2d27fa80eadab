import { apiTable } from '@/server/api/routes';
import { apiEndpoints, type Endpoint } from '@/server/http/api-server';
import { MAX_BODY_BYTES } from '@/server/http/body-limit';
import { BufferedRequest } from '@/server/http/buffered';
import { ROUTE_METHODS, type RouteMethod } from '@/server/http/declare';
import { errorReply } from '@/server/http/rest';

/** A route called as a Web handler: a `Request` and the path's parameters in, a `Response` out. */
export type WebHandler = (req?: Request, context?: { params: Promise<Record<string, string>> }) => Promise<Response>;

/** Every successful answer is checked against its route's declared output (a mismatch throws). */
const endpoints = apiEndpoints(apiTable, { checkOutputs: true });

/**
 * The methods REST v1 answers on `path` (a pattern of the route table, e.g.
 * `/api/v1/projects/{project}/ipclaims`), called in-process the way the REST server calls them
 * (server/http/api-server.ts): the body read whole (413 above the limit), the declared route
 * served with the parameters given. The request's URL supplies only its query string.
 */
export function routeHandlers(path: string): Record<RouteMethod, WebHandler> {
  const entry = endpoints.find((e) => e.pattern === path);
  if (!entry) throw new Error(`no REST v1 route is declared at ${path}`);
  const handlers = Object.fromEntries(ROUTE_METHODS.map((method) => [method, () => Promise.reject(new Error(`${method} ${path} is not declared`))])) as Record<
    RouteMethod,
    WebHandler
  >;
  for (const [method, endpoint] of Object.entries(entry.methods) as [RouteMethod, Endpoint][]) {
    handlers[method] = async (req = new Request(`http://localhost${path}`, { method }), context) => {
      const body = method === 'GET' ? Buffer.alloc(0) : Buffer.from(await req.arrayBuffer());
      const reply =
        body.length > MAX_BODY_BYTES
          ? errorReply(413, 'PayloadTooLarge', `body exceeds ${MAX_BODY_BYTES} bytes`, 'body')
          : await endpoint(new BufferedRequest(method, req.url, Object.fromEntries(req.headers), body), (await context?.params) ?? {});
      return reply.toResponse();
    };
  }
  return handlers;
}
