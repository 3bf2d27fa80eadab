/**
 * HTTP implementation of the provider port, talking to the provider simulator (or any provider that
 * serves the same wire format). Every call has a deadline; every answer is classified as a result, a
 * definite rejection or an unknown outcome (see the contract in ./client.ts).
 *
 * The runtime client presents this process's workload certificate (mutual TLS; its URI SAN is the
 * SPIFFE ID the provider authorizes) and checks the provider's serving certificate against a trust
 * bundle. Certificate, key and bundle are files, re-read when they change (a renewal by `npm start`,
 * cert-manager or SPIRE) without a restart. Connections are kept alive and reused, so a TLS
 * handshake is paid per connection, not per call ({@link HttpTransportStats}).
 */
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { watchFiles } from '@/lib/workload-pki';
import type { z } from 'zod';
import type { CallOptions, CallOutcome, ListOptions, TransportStats, ProviderAdminClient, ProviderClient, SubmitResult, UnknownReason } from './client';
import {
  AssetListSchema,
  AssetStateSchema,
  ErrorBodySchema,
  FaultsViewSchema,
  HealthSchema,
  LogEntrySchema,
  LogPageSchema,
  OperationListSchema,
  OperationRecordSchema,
  StoreStatsSchema,
  type LogEntry,
  type OperationRequest,
} from '@/lib/provider-wire';

export const DEFAULT_PROVIDER_TIMEOUT_MS = 5_000;

/** TLS files of a client: the trust bundle for the provider's certificate and, for the runtime API, this workload's pair. */
export interface ClientTlsFiles {
  caFile: string;
  certFile?: string;
  keyFile?: string;
}

/** Connections made so far (each is one TLS handshake on an https:// URL) and TLS file reloads. */
export type HttpTransportStats = TransportStats;

export interface HttpProviderClientOptions {
  /** e.g. `https://127.0.0.1:4100` */
  baseUrl: string;
  /** The admin client's bearer token (the runtime API takes no token: its credential is the client certificate). */
  token?: string;
  /** For an https:// URL: the files (watched for changes). */
  tls?: ClientTlsFiles;
  /** Default deadline per call (ms); each call may override it. */
  timeoutMs?: number;
  /** Keep-alive connections per client (default 64). */
  maxSockets?: number;
}

interface Transport {
  request<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body: unknown,
    schema: z.ZodType<T>,
    options: CallOptions | undefined,
  ): Promise<CallOutcome<{ value: T; status: number }>>;
  /** Opens a long-lived GET (no deadline), for server-sent events. */
  open(path: string, signal: AbortSignal | undefined): Promise<IncomingMessage>;
  stats(): HttpTransportStats;
  close(): void;
}

function unknownOutcome(reason: UnknownReason, message: string, status?: number): CallOutcome<never> {
  return status === undefined ? { type: 'unknown', reason, message } : { type: 'unknown', reason, message, status };
}

/** Finds a Node/undici error code (ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET, …) in an error's cause chain. */
function errorCode(error: unknown): { code?: string; message: string } {
  let current: unknown = error;
  let message = error instanceof Error ? error.message : String(error);
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const candidate = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof candidate.message === 'string' && candidate.message) message = candidate.message;
    if (typeof candidate.code === 'string') return { code: candidate.code, message };
    current = candidate.cause;
  }
  return { message };
}

function classifyTransportError(error: unknown): CallOutcome<never> {
  const { code, message } = errorCode(error);
  if (code === 'ECONNREFUSED') return unknownOutcome('connection-refused', `connection refused: ${message}`);
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') {
    return unknownOutcome('connection-lost', `connection lost before a complete response: ${message}`);
  }
  return unknownOutcome('transport', `transport failure${code ? ` (${code})` : ''}: ${message}`);
}

interface RawResponse {
  status: number;
  text: string;
}

function createTransport(options: HttpProviderClientOptions): Transport {
  const baseUrl = new URL(options.baseUrl.replace(/\/+$/, ''));
  const base = baseUrl.href.replace(/\/+$/, '');
  const defaultTimeoutMs = options.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
  // node:http(s) with a keep-alive agent: far less CPU per call than fetch, and one TLS handshake per connection.
  const secure = baseUrl.protocol === 'https:';
  const stats: HttpTransportStats = { connections: 0, reloads: 0 };
  const maxSockets = options.maxSockets ?? 64;
  const makeAgent = (): http.Agent => {
    if (!secure) return new CountingHttpAgent({ keepAlive: true, maxSockets }, stats);
    const files = options.tls;
    if (!files)
      throw new Error(`${options.baseUrl}: an https:// provider URL needs the TLS files (trust bundle, and the client certificate for the runtime API)`);
    const pair = files.certFile && files.keyFile ? { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) } : {};
    // Checks that key and certificate fit (throws on a half-rotated pair) before the agent is used.
    if (pair.cert) tls.createSecureContext(pair);
    return new CountingHttpsAgent({ keepAlive: true, maxSockets, ca: readFileSync(files.caFile), ...pair }, stats);
  };
  let agent = makeAgent();
  const retired = new Set<http.Agent>();
  const tlsFiles = options.tls;
  const stopWatching =
    secure && tlsFiles
      ? watchFiles(
          [tlsFiles.caFile, tlsFiles.certFile, tlsFiles.keyFile].filter((f): f is string => Boolean(f)),
          () => {
            const next = makeAgent(); // throws on a half-rotated pair (a key that does not fit): retried at the next change
            const previous = agent;
            agent = next;
            stats.reloads++;
            // Calls in flight finish on their connections; the old agent's idle ones close after the longest deadline.
            retired.add(previous);
            setTimeout(
              () => {
                previous.destroy();
                retired.delete(previous);
              },
              2 * defaultTimeoutMs + 1_000,
            ).unref();
          },
        )
      : () => undefined;
  const send = secure ? https.request : http.request;
  const authorization = options.token === undefined ? undefined : `Bearer ${options.token}`;

  function exchange(method: string, path: string, body: string | undefined, signal: AbortSignal): Promise<RawResponse> {
    return new Promise<RawResponse>((resolve, reject) => {
      const headers: Record<string, string | number> = { accept: 'application/json' };
      if (authorization) headers.authorization = authorization;
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(body);
      }
      const request = send(`${base}${path}`, { method, headers, agent, signal }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          if (!response.complete) reject(Object.assign(new Error('response ended before it was complete'), { code: 'ECONNRESET' }));
          else resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        });
        response.on('error', reject);
        response.on('aborted', () => reject(Object.assign(new Error('response aborted'), { code: 'ECONNRESET' })));
      });
      request.on('error', reject);
      request.end(body);
    });
  }

  return {
    async request(method, path, body, schema, callOptions) {
      const timeoutMs = callOptions?.timeoutMs ?? defaultTimeoutMs;
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new Error(`deadline of ${timeoutMs} ms exceeded`));
      }, timeoutMs);
      const callerSignal = callOptions?.signal;
      const onCallerAbort = () => controller.abort(callerSignal?.reason);
      if (callerSignal?.aborted) onCallerAbort();
      else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });

      let status: number;
      let text: string;
      try {
        ({ status, text } = await exchange(method, path, body === undefined ? undefined : JSON.stringify(body), controller.signal));
      } catch (error) {
        if (timedOut) return unknownOutcome('timeout', `no complete answer within ${timeoutMs} ms`);
        if (callerSignal?.aborted) return unknownOutcome('aborted', 'the caller aborted the call');
        return classifyTransportError(error);
      } finally {
        clearTimeout(timer);
        callerSignal?.removeEventListener('abort', onCallerAbort);
      }

      let json: unknown;
      let parsedJson = true;
      try {
        json = JSON.parse(text);
      } catch {
        parsedJson = false;
      }

      if (status >= 200 && status < 300) {
        const parsed = parsedJson ? schema.safeParse(json) : undefined;
        if (!parsed?.success) {
          return unknownOutcome('malformed-response', `HTTP ${status} with a body that does not match the expected schema`, status);
        }
        return { type: 'result', value: { value: parsed.data, status } };
      }
      if (status === 503) return unknownOutcome('unavailable', 'provider unavailable (HTTP 503)', status);
      if (status >= 500) return unknownOutcome('server-error', `provider server error (HTTP ${status})`, status);
      if (status >= 400) {
        const parsed = parsedJson ? ErrorBodySchema.safeParse(json) : undefined;
        // A 4xx without the provider's coded error body (e.g. from a proxy) is not a definite answer from the provider.
        if (!parsed?.success) return unknownOutcome('malformed-response', `HTTP ${status} without a coded error body`, status);
        const { code, message, field } = parsed.data.error;
        return { type: 'rejected', error: field === undefined ? { status, code, message } : { status, code, message, field } };
      }
      return unknownOutcome('malformed-response', `unexpected HTTP status ${status}`, status);
    },

    open(path, signal) {
      return new Promise<IncomingMessage>((resolve, reject) => {
        const headers: Record<string, string> = { accept: 'text/event-stream' };
        if (authorization) headers.authorization = authorization;
        const request = send(`${base}${path}`, { method: 'GET', headers, agent, signal }, resolve);
        request.on('error', reject);
        request.end();
      });
    },

    stats: () => ({ ...stats }),

    close() {
      stopWatching();
      agent.destroy();
      for (const old of retired) old.destroy();
      retired.clear();
    },
  };
}

/** A keep-alive agent that counts the connections it opens (each a TLS handshake). */
class CountingHttpsAgent extends https.Agent {
  constructor(
    options: https.AgentOptions,
    private readonly stats: HttpTransportStats,
  ) {
    super(options);
  }

  override createConnection(options: https.RequestOptions, callback?: (err: Error | null, stream: Duplex) => void) {
    this.stats.connections++;
    return super.createConnection(options, callback);
  }
}

class CountingHttpAgent extends http.Agent {
  constructor(
    options: http.AgentOptions,
    private readonly stats: HttpTransportStats,
  ) {
    super(options);
  }

  override createConnection(options: http.ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void) {
    this.stats.connections++;
    return super.createConnection(options, callback);
  }
}

function valueOf<T>(outcome: CallOutcome<{ value: T; status: number }>): CallOutcome<T> {
  return outcome.type === 'result' ? { type: 'result', value: outcome.value.value } : outcome;
}

/** A record for a different id than the one asked for is a malformed answer, not a result. */
function checkOperationId<T extends { id: string }>(outcome: CallOutcome<T>, id: string): CallOutcome<T> {
  if (outcome.type === 'result' && outcome.value.id !== id) {
    return unknownOutcome('malformed-response', `the provider answered with operation ${outcome.value.id} instead of ${id}`);
  }
  return outcome;
}

function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** The runtime provider client (runtime token). */
export function createHttpProviderClient(options: HttpProviderClientOptions): ProviderClient {
  const transport = createTransport(options);

  const submit = async (request: OperationRequest, callOptions?: CallOptions): Promise<CallOutcome<SubmitResult>> => {
    const outcome = await transport.request('POST', '/v1/operations', request, OperationRecordSchema, callOptions);
    if (outcome.type !== 'result') return outcome;
    const { value: operation, status } = outcome.value;
    if (operation.id !== request.id) {
      return unknownOutcome('malformed-response', `the provider answered with operation ${operation.id} instead of ${request.id}`);
    }
    return { type: 'result', value: { operation, replayed: status === 200 } };
  };

  return {
    transportStats: () => transport.stats(),
    close: () => transport.close(),
    submit,
    install: (request, callOptions) => submit({ ...request, kind: 'install' }, callOptions),
    power: (request, callOptions) => submit({ ...request, kind: 'power' }, callOptions),
    cleanup: (request, callOptions) => submit({ ...request, kind: 'cleanup' }, callOptions),
    async getOperation(id, callOptions) {
      const outcome = await transport.request('GET', `/v1/operations/${encodeURIComponent(id)}`, undefined, OperationRecordSchema, callOptions);
      return checkOperationId(valueOf(outcome), id);
    },
    async getAsset(id, callOptions) {
      return valueOf(await transport.request('GET', `/v1/assets/${encodeURIComponent(id)}`, undefined, AssetStateSchema, callOptions));
    },
    async health(callOptions) {
      return valueOf(await transport.request('GET', '/v1/healthz', undefined, HealthSchema, callOptions));
    },
  };
}

/** Parses a server-sent-events body into log entries; stops at the end of the stream. */
async function* readLogEvents(body: AsyncIterable<Buffer | string>): AsyncGenerator<LogEntry> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let boundary: number;
    while ((boundary = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (!data) continue;
      const parsed = LogEntrySchema.safeParse(JSON.parse(data));
      if (parsed.success) yield parsed.data;
    }
  }
}

/** The admin client (admin token) for faults and inspection. */
export function createHttpProviderAdminClient(options: HttpProviderClientOptions): ProviderAdminClient {
  const transport = createTransport(options);
  const get = async <T>(path: string, schema: z.ZodType<T>, callOptions?: CallOptions) =>
    valueOf(await transport.request('GET', path, undefined, schema, callOptions));

  return {
    listAssets: (callOptions?: ListOptions) => get(`/admin/assets${query({ limit: callOptions?.limit })}`, AssetListSchema, callOptions),
    async createAsset(id, callOptions) {
      return valueOf(await transport.request('POST', '/admin/assets', { id }, AssetStateSchema, callOptions));
    },
    getAsset: (id, callOptions) => get(`/admin/assets/${encodeURIComponent(id)}`, AssetStateSchema, callOptions),
    listOperations: (callOptions) =>
      get(
        `/admin/operations${query({ limit: callOptions?.limit, assetId: callOptions?.assetId, state: callOptions?.state, kind: callOptions?.kind })}`,
        OperationListSchema,
        callOptions,
      ),
    async getOperation(id, callOptions) {
      return checkOperationId(await get(`/admin/operations/${encodeURIComponent(id)}`, OperationRecordSchema, callOptions), id);
    },
    getFaults: (callOptions) => get('/admin/faults', FaultsViewSchema, callOptions),
    async setFaults(patch, callOptions) {
      return valueOf(await transport.request('POST', '/admin/faults', patch, FaultsViewSchema, callOptions));
    },
    async clearFaults(callOptions) {
      return valueOf(await transport.request('DELETE', '/admin/faults', undefined, FaultsViewSchema, callOptions));
    },
    getStats: (callOptions) => get('/admin/stats', StoreStatsSchema, callOptions),
    getLog: (callOptions) => get(`/admin/log${query({ limit: callOptions?.limit, afterSeq: callOptions?.afterSeq })}`, LogPageSchema, callOptions),
    async *streamLog({ afterSeq, signal }) {
      let response: IncomingMessage;
      try {
        response = await transport.open(`/admin/log/stream${query({ afterSeq })}`, signal);
      } catch (error) {
        if (signal?.aborted) return;
        throw error;
      }
      if (response.statusCode !== 200) {
        response.resume();
        throw new Error(`log stream refused: HTTP ${response.statusCode}`);
      }
      try {
        yield* readLogEvents(response);
      } catch {
        // The connection dropped or was aborted: the stream simply ends; resume with `afterSeq` = last seen seq.
      } finally {
        response.destroy();
      }
    },
  };
}
