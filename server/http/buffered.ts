import type { IncomingHttpHeaders } from 'node:http';

/**
 * What REST v1 handlers read of a request and give back, without Web `Request` / `Response`
 * objects: the REST server (api-server.ts) reads a request whole and writes the reply's JSON text
 * as it is. That path is the one the CNI plugin takes on every pod start; building a Web Request
 * (Headers, AbortSignal) and a Web Response (a body stream) for each call, only to take them apart
 * again, would cost as much CPU as the handler's own work (bench/cni-add).
 */

/** A request the REST server has already read whole: its headers as Node parsed them and its body in memory. */
export class BufferedRequest {
  readonly headers: { get(name: string): string | null };

  constructor(
    readonly method: string,
    readonly url: string,
    raw: IncomingHttpHeaders,
    /** The body; empty for GET and HEAD. */
    readonly body: Buffer,
  ) {
    // Node lower-cases header names; of a repeated header it keeps the first (authorization,
    // content-type, content-length, host), joins cookies with '; ' and others with ', '.
    this.headers = {
      get: (name) => {
        const value = raw[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      },
    };
  }
}

/** A JSON answer: what REST v1 handlers return. The REST server writes `json` as it is. */
export class JsonReply {
  constructor(
    readonly status: number,
    /** The body, already JSON text. */
    readonly json: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}

  /** As a Web `Response` (tests that call a route in-process read it so). */
  toResponse(): Response {
    return new Response(this.json, { status: this.status, headers: { 'content-type': 'application/json', ...this.headers } });
  }
}

/** `body` as a JSON reply (status 200 unless given). */
export function jsonReply(body: unknown, init: { status?: number; headers?: Record<string, string> } = {}): JsonReply {
  // `undefined` (a handler that returns nothing) is JSON `null`.
  return new JsonReply(init.status ?? 200, JSON.stringify(body) ?? 'null', init.headers);
}
