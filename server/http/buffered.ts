/**
 * Bodies the REST server (api-server.ts) already holds in memory, kept beside the Web `Request`
 * and `Response` objects the route handlers take and give. `readJson` reads a request's buffered
 * body instead of its stream, and the server writes a response's recorded JSON instead of reading
 * its stream back: two ReadableStreams fewer per call on the path the CNI plugin takes on every pod
 * start (bench/cni-add). Under Next nothing is recorded, and the streams are used as usual.
 */
const requestBodies = new WeakMap<Request, Buffer>();
const responseBodies = new WeakMap<Response, string>();

/** `request` whose body is `body` (the request itself carries none: see `bufferedBody`). */
export function withBufferedBody(request: Request, body: Buffer): Request {
  requestBodies.set(request, body);
  return request;
}

/** The body the server buffered for `request`, if it did. */
export function bufferedBody(request: Request): Buffer | undefined {
  return requestBodies.get(request);
}

/** A JSON response (as `Response.json`) whose text the server can write without reading the body back. */
export function jsonResponse(body: unknown, init: ResponseInit = {}): Response {
  const payload = JSON.stringify(body);
  const headers = new Headers(init.headers);
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  const response = new Response(payload, { ...init, headers });
  responseBodies.set(response, payload);
  return response;
}

/** The JSON text of a response made by `jsonResponse`. */
export function recordedBody(response: Response): string | undefined {
  return responseBodies.get(response);
}
