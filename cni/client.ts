/**
 * The HTTP client for Meridian's CNI lease API, on `fetch`. The plugin ships as an executable
 * compiled with Bun (bin/build-cni.ts), whose `fetch` is native and answers a first request in a
 * fraction of the time its `node:http` emulation takes to load; Bun's `tls.ca` option carries
 * `ipam.caFile`. Under Node (the in-process test runs of `run()`), `fetch` is undici's and takes
 * no CA option: `ipam.caFile` applies in the executable only.
 *
 * Every call has ONE deadline covering connect, request and the whole response body. Failure is
 * bounded and classified here:
 * - timeout, connection errors (refused, reset, unreachable, DNS), 5xx, 429 → code 11 (try again);
 * - 401 / unreadable token → 101; 403 → 102; TLS certificate rejected → 105;
 * - 400 naming a config field → 7 (naming the field), naming a CNI_* parameter → 4;
 * - 404 naming the project/cluster → 7; 413 (a request made too large by the config) → 7;
 *   anything else unexpected → 100 with the server's message.
 * Command-specific statuses (CHECK 409/404, DEL 404, Exhausted) are interpreted by the caller via
 * `ServerError`, before falling back to `toCniError`. Redirects are not followed (a 3xx is 100).
 */
import { readFileSync } from 'node:fs';
import { CniError, ERR_AUTH, ERR_FORBIDDEN, ERR_INVALID_CONFIG, ERR_INVALID_ENV, ERR_SERVER_RESPONSE, ERR_TLS, ERR_TRY_AGAIN } from './errors';
import type { IpamConfig } from './config';
import { registerSecret } from './log';

const MAX_BODY_BYTES = 1 << 20;

export interface ServerErrorBody {
  code?: string;
  message?: string;
  field?: string;
}

/** A non-2xx answer from the server, with its `{ error: { code, message, field? } }` when present. */
export class ServerError extends Error {
  constructor(
    readonly status: number,
    readonly error: ServerErrorBody,
    readonly retryAfter: string | undefined,
    readonly url: string,
  ) {
    super(`HTTP ${status}${error.code ? ` ${error.code}` : ''}${error.message ? `: ${error.message}` : ''}`);
    this.name = 'ServerError';
  }
}

/** Reads the API token (trimmed). Never logged: registered for redaction as soon as it is read. */
export function readToken(tokenFile: string): string {
  let token: string;
  try {
    token = readFileSync(tokenFile, 'utf8').trim();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'is not readable (permission denied)' : `cannot be read (${code ?? (e as Error).message})`;
    throw new CniError(ERR_AUTH, `token file ${tokenFile} ${why}`, 'ipam.tokenFile must name a file holding the cluster API token');
  }
  if (!token) throw new CniError(ERR_AUTH, `token file ${tokenFile} is empty`, 'ipam.tokenFile must name a file holding the cluster API token');
  registerSecret(token);
  // A header value cannot carry control characters or spaces; say so instead of failing inside fetch.
  if (!/^[\x21-\x7e]+$/.test(token))
    throw new CniError(ERR_AUTH, `token file ${tokenFile} does not hold a single token`, 'expected one line of printable ASCII without spaces');
  return token;
}

/**
 * The token's own project in the path when `ipam.project` is not given: the server takes the
 * project from the token (a project slug is never "-"). A given `ipam.project` that is not the
 * token's is refused by the server (404 naming the project: code 7).
 */
const TOKEN_PROJECT = '-';

/** `${serverUrl}/api/v1/projects/${project or "-"}/clusters/${cluster}/cni` (serverUrl may carry a path prefix). */
export function baseUrl(ipam: IpamConfig): URL {
  const u = new URL(ipam.serverUrl.href);
  const prefix = u.pathname.replace(/\/+$/, '');
  u.pathname = `${prefix}/api/v1/projects/${encodeURIComponent(ipam.project ?? TOKEN_PROJECT)}/clusters/${encodeURIComponent(ipam.cluster)}/cni`;
  return u;
}

const TRANSIENT_NET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
  'UND_ERR_SOCKET',
]);

const TLS_CODES = /^(CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_TLS_CERT_ALTNAME_INVALID|ERR_SSL_)/;

export interface CallOptions {
  method: 'GET' | 'POST';
  /** Path below the base (`/add`, `/status?cniNetwork=…`). */
  path: string;
  body?: unknown;
  token: string;
  ipam: IpamConfig;
}

/** The CA bundle for an https call with `ipam.caFile`: the system's roots and the file's certificates. */
async function caBundle(caFile: string): Promise<string[]> {
  let pem: string;
  try {
    pem = readFileSync(caFile, 'utf8');
  } catch (e) {
    throw new CniError(ERR_INVALID_CONFIG, 'invalid network config: ipam.caFile cannot be read', `field: ipam.caFile (${(e as Error).message})`);
  }
  // A file without a certificate would only fail later as an unexplained connection error.
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new CniError(ERR_INVALID_CONFIG, 'invalid network config: ipam.caFile holds no PEM certificate', 'field: ipam.caFile');
  }
  const tls = await import('node:tls');
  return [...tls.rootCertificates, pem];
}

/** The body of `res`, at most MAX_BODY_BYTES (it is read under the call's deadline). */
async function readBody(res: Response, where: string): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new CniError(ERR_SERVER_RESPONSE, `response from ${where} is larger than ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * One request with one deadline. Resolves with the parsed JSON of a 2xx answer; rejects with a
 * `ServerError` for any other status and with a `CniError` for transport failures.
 */
export async function callServer(opts: CallOptions): Promise<unknown> {
  const base = baseUrl(opts.ipam);
  const url = new URL(base.href + opts.path);
  const where = `${url.origin}${url.pathname}`;
  const timeoutMs = opts.ipam.timeoutMs;
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string> = { authorization: `Bearer ${opts.token}`, accept: 'application/json', 'user-agent': 'meridian-ipam' };
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const init: RequestInit & { tls?: { ca: string[] } } = { method: opts.method, headers, body: payload, redirect: 'manual' };
  if (url.protocol === 'https:' && opts.ipam.caFile) init.tls = { ca: await caBundle(opts.ipam.caFile) };

  const deadline = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    deadline.abort();
  }, timeoutMs);
  init.signal = deadline.signal;
  let status: number;
  let text: string;
  let retryAfter: string | undefined;
  try {
    const res = await fetch(url, init);
    status = res.status;
    retryAfter = res.headers.get('retry-after') ?? undefined;
    text = await readBody(res, where);
  } catch (e) {
    if (timedOut)
      throw new CniError(
        ERR_TRY_AGAIN,
        `Meridian server did not answer within ${timeoutMs} ms`,
        `${opts.method} ${where} timed out (ipam.timeoutMs=${timeoutMs})`,
      );
    if (e instanceof CniError) throw e;
    throw transportError(e, where, timeoutMs);
  } finally {
    clearTimeout(timer);
  }

  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (status >= 200 && status < 300) {
    if (json === undefined) throw new CniError(ERR_SERVER_RESPONSE, `unexpected response from ${where}`, `HTTP ${status} with a body that is not JSON`);
    return json;
  }
  const err = (json as { error?: unknown } | undefined)?.error;
  const body: ServerErrorBody =
    typeof err === 'object' && err !== null
      ? {
          code: typeof (err as ServerErrorBody).code === 'string' ? (err as ServerErrorBody).code : undefined,
          message: typeof (err as ServerErrorBody).message === 'string' ? (err as ServerErrorBody).message : undefined,
          field: typeof (err as ServerErrorBody).field === 'string' ? (err as ServerErrorBody).field : undefined,
        }
      : { message: text.slice(0, 200) || undefined };
  throw new ServerError(status, body, retryAfter, where);
}

/**
 * A failed fetch as a CNI error. Bun's fetch puts the system's code on the error itself; Node's
 * (undici) wraps it: `TypeError('fetch failed')` with the code on its `cause`.
 */
function transportError(thrown: unknown, where: string, timeoutMs: number): CniError {
  const e = thrown instanceof Error ? thrown : new Error(String(thrown));
  const cause = e.cause instanceof Error ? e.cause : undefined;
  const own = (e as NodeJS.ErrnoException).code;
  const code = typeof own === 'string' && own ? own : String((cause as NodeJS.ErrnoException | undefined)?.code ?? '');
  const message = cause && cause.message && !e.message.includes(cause.message) ? `${e.message}: ${cause.message}` : e.message;
  if (TLS_CODES.test(code)) return new CniError(ERR_TLS, `TLS certificate of ${where} rejected`, `${code}: ${message} (set ipam.caFile to trust a private CA)`);
  const known = TRANSIENT_NET_CODES.has(code);
  return new CniError(
    ERR_TRY_AGAIN,
    `cannot reach Meridian server${code ? ` (${code})` : ''}`,
    `${where}: ${message}${known ? '' : ' (treated as transient)'}; deadline ${timeoutMs} ms`,
  );
}

/**
 * The generic mapping of a server error to a CNI error (after the command had its say). Server
 * input fields (`containerId`, `ifname`, …) are named by where they came from (CNI_* or config).
 */
export function toCniError(e: ServerError): CniError {
  const { status, error } = e;
  const said = error.message ? `: ${error.message}` : '';
  const what = `${error.code ?? `HTTP ${status}`}${said}`;
  if (status === 429) {
    return new CniError(
      ERR_TRY_AGAIN,
      'Meridian server is rate limiting; try again later',
      `${what}${e.retryAfter ? ` (Retry-After: ${e.retryAfter} s)` : ''}`,
    );
  }
  if (error.code === 'Exhausted') {
    // An exhausted pool clears when leases are released (DEL, GC) or capacity is added: the
    // runtime should retry the ADD later, so this is "try again later", not a config error.
    return new CniError(ERR_TRY_AGAIN, 'no pod address available: the network is exhausted', what);
  }
  if (status >= 500) return new CniError(ERR_TRY_AGAIN, `Meridian server error (HTTP ${status}); try again later`, what);
  if (status === 401) {
    return new CniError(
      ERR_AUTH,
      'Meridian server rejected the API token (HTTP 401)',
      `${what}; check the token in ipam.tokenFile (expired, revoked or for another project?)`,
    );
  }
  if (status === 403) {
    return new CniError(
      ERR_FORBIDDEN,
      'the API token is not allowed to act for this project/cluster (HTTP 403)',
      `${what}; check ipam.project, ipam.cluster and the token's scope`,
    );
  }
  if (status === 413) {
    // Only input makes a request this large (a huge prevResult or valid-attachment list): the config.
    return new CniError(ERR_INVALID_CONFIG, 'invalid network config: the request it makes is too large for the Meridian server (HTTP 413)', what);
  }
  const field = error.field;
  if (status === 404) {
    const f = field === 'project' || field === 'cluster' ? `ipam.${field}` : 'ipam.project/ipam.cluster';
    return new CniError(ERR_INVALID_CONFIG, `invalid network config: ${f} unknown to the Meridian server (HTTP 404)`, `field: ${f}; ${what}; ${e.url}`);
  }
  if (status === 400 || status === 422) {
    const env = field ? ENV_FIELDS[field.split('.')[0]] : undefined;
    if (env) return new CniError(ERR_INVALID_ENV, `invalid environment variable ${env}: rejected by the Meridian server`, `variable: ${env}; ${what}`);
    if (field) {
      const f = CONFIG_FIELDS[field.split('.')[0]] ?? field;
      return new CniError(ERR_INVALID_CONFIG, `invalid network config: ${f} rejected by the Meridian server`, `field: ${f}; ${what}`);
    }
  }
  return new CniError(ERR_SERVER_RESPONSE, `Meridian server refused the request (HTTP ${status})`, what);
}

/** Server input fields that come from CNI_* variables. */
const ENV_FIELDS: Record<string, string> = {
  containerId: 'CNI_CONTAINERID',
  ifname: 'CNI_IFNAME',
  podNamespace: 'CNI_ARGS',
  podName: 'CNI_ARGS',
};
/** Server input fields that come from the network configuration. */
const CONFIG_FIELDS: Record<string, string> = {
  cniNetwork: 'name',
  node: 'ipam.node',
  prevResult: 'prevResult',
  validAttachments: 'cni.dev/valid-attachments',
  project: 'ipam.project',
  cluster: 'ipam.cluster',
};
