import type { IncomingHttpHeaders } from 'node:http';

/**
 * What REST v1 handlers read of a request and give back, without Web `Request` / `Response`
 * objects on the REST server's own path (api-server.ts). That path is the one the CNI plugin takes
 * on every pod start; building a Web Request (Headers, AbortSignal) and a Web Response (a body
 * stream) for each call, only to take them apart again, cost as much CPU as the handler's own work
 * (bench/cni-add). Under Next the handlers get the Web `Request`, which satisfies `ApiRequest`, and
 * their replies become a Web `Response`.
 */

/** A request as REST v1 handlers read it: a Web `Request` (under Next) or a `BufferedRequest`. */
export interface ApiRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: { get(name: string): string | null };
}

/** A request the REST server has already read whole: its headers as Node parsed them and its body in memory. */
export class BufferedRequest implements ApiRequest {
  readonly headers: { get(name: string): string | null };

  constructor(
    readonly method: string,
    readonly url: string,
    raw: IncomingHttpHeaders,
    /** The body; empty for GET and HEAD. */
    readonly body: Buffer,
  ) {
    // Node lower-cases header names; of a repeated header it keeps the first (authorization,
    // content-type, content-length, host), joins cookies with '; ' and others with ', ', as the
    // request Next builds from the same message.
    this.headers = {
      get: (name) => {
        const value = raw[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      },
    };
  }
}

/** The body a REST server request carries in memory, if `req` is one (a Web `Request` has a stream instead). */
export function bufferedBody(req: ApiRequest): Buffer | undefined {
  return req instanceof BufferedRequest ? req.body : undefined;
}

/** A JSON answer: what REST v1 handlers return. The REST server writes `json` as it is; Next gets `toResponse()`. */
export class JsonReply {
  constructor(
    readonly status: number,
    /** The body, already JSON text. */
    readonly json: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}

  toResponse(): Response {
    return new Response(this.json, { status: this.status, headers: { 'content-type': 'application/json', ...this.headers } });
  }
}

/** `body` as a JSON reply (status 200 unless given). */
export function jsonReply(body: unknown, init: { status?: number; headers?: Record<string, string> } = {}): JsonReply {
  // `undefined` (a handler that returns nothing) is JSON `null` on both paths.
  return new JsonReply(init.status ?? 200, JSON.stringify(body) ?? 'null', init.headers);
}
