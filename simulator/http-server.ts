/**
 * HTTP routing of the simulator, on two listeners: the runtime API (`/v1`, HTTPS with a required client
 * certificate whose URI SAN is a SPIFFE ID of the configured trust domain — no bearer token is accepted)
 * and the admin API (`/admin`, its own port and bearer token, HTTPS with the same serving certificate;
 * not started unless configured). The request-path faults (unavailable, hang, latency, lost responses,
 * crash) act on the runtime API only, so QA can always switch them off.
 *
 * The serving pair and the client trust bundle are re-read when their files change (no restart).
 * A client certificate is checked once per connection; every refused runtime request is written to the
 * simulator's durable log (`access refused`, with the reason and the identity when there is one).
 *
 * Errors are `{ error: { code, message, field? } }`: 400 InvalidRequest/InvalidJson (with the field),
 * 401 Unauthorized (admin token) / ClientCertificateRequired / ClientCertificateRejected (expired, not
 * issued by a trusted CA, not a workload certificate), 403 UntrustedIdentity (another trust domain) /
 * TargetNotAuthorized, 404 NotFound, 405 MethodNotAllowed, 409 IdempotencyConflict/StaleEpoch/
 * StaleFencingToken, 413 PayloadTooLarge, 503 Unavailable, 500 Internal.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import {
  CreateAssetRequestSchema,
  FaultPatchSchema,
  OperationKindSchema,
  OperationRequestSchema,
  OperationStateSchema,
  type ApiErrorCode,
  type OperationKind,
  type OperationRequest,
} from '../lib/provider-wire';
import { parseSpiffeId, spiffeIdsOf, watchFiles } from '../lib/workload-pki';
import type { SimulatorConfig } from './config';
import { Authorizer, loadPolicy } from './policy';
import { describeError, type Logger } from './logger';
import type { SimulatorService } from './service';
import { toOperationRecord } from './state';

const MAX_BODY_BYTES = 64 * 1024;
const SSE_HEARTBEAT_MS = 15_000;

export interface SimulatorHttpOptions {
  service: SimulatorService;
  config: SimulatorConfig;
  logger: Logger;
  /** The crash fault fired: exit the process (non-zero) now; the answer has been handed to the OS. */
  onCrash: () => void;
}

export interface SimulatorHttpServer {
  /** The runtime API (mutual TLS). */
  server: https.Server;
  /** The admin API's listener; null when no admin token is configured. */
  adminServer: https.Server | null;
  /** Stops listening, resets held requests and live streams, closes idle connections. */
  close(): Promise<void>;
}

/** Who is calling the runtime API: the SPIFFE ID of a verified client certificate, or why not. */
type Caller = { spiffeId: string } | { refusal: HttpError; identity?: string };

/** The TLS material as files say now (read synchronously: start-up and reloads only). */
function readTlsMaterial(tls: SimulatorConfig['tls']) {
  return { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile), ca: readFileSync(tls.clientCaFile) };
}

const REJECTIONS: Record<string, string> = {
  CERT_HAS_EXPIRED: 'the client certificate has expired',
  CERT_NOT_YET_VALID: 'the client certificate is not valid yet',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the client certificate is not issued by a CA this provider trusts',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the client certificate is not issued by a CA this provider trusts',
  UNABLE_TO_GET_ISSUER_CERT: 'the client certificate is not issued by a CA this provider trusts',
  SELF_SIGNED_CERT_IN_CHAIN: 'the client certificate is not issued by a CA this provider trusts',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the client certificate is self-signed, not issued by a CA this provider trusts',
  CERT_SIGNATURE_FAILURE: 'the client certificate signature does not verify',
  CERT_REVOKED: 'the client certificate is revoked',
};

/** Checks the peer certificate of a connection once: verified by the trust bundle, one SPIFFE ID, of our trust domain. */
function identify(socket: TLSSocket, trustDomain: string): Caller {
  const peer = socket.getPeerCertificate();
  if (!peer || Object.keys(peer).length === 0) {
    return { refusal: new HttpError(401, 'ClientCertificateRequired', 'a client certificate is required (mutual TLS); bearer tokens are not accepted') };
  }
  const ids = spiffeIdsOf(peer.subjectaltname);
  const identity = ids.length === 1 ? ids[0] : undefined;
  if (!socket.authorized) {
    const code = String(socket.authorizationError ?? 'unknown');
    const reason = REJECTIONS[code] ?? `the client certificate does not verify (${code})`;
    return { refusal: new HttpError(401, 'ClientCertificateRejected', `${reason} (${code})`), identity };
  }
  if (ids.length !== 1) {
    return {
      refusal: new HttpError(401, 'ClientCertificateRejected', `the client certificate must carry exactly one SPIFFE ID as URI SAN (it has ${ids.length})`),
    };
  }
  const parsed = parseSpiffeId(ids[0]);
  if (!parsed) return { refusal: new HttpError(401, 'ClientCertificateRejected', `the client certificate's SPIFFE ID ${ids[0]} is malformed`), identity };
  if (parsed.trustDomain !== trustDomain) {
    return {
      refusal: new HttpError(
        403,
        'UntrustedIdentity',
        `identity ${parsed.id} is of trust domain ${parsed.trustDomain}; this provider accepts ${trustDomain} only`,
      ),
      identity,
    };
  }
  return { spiffeId: parsed.id };
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: ApiErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Constant-time bearer check (compares digests, so token length leaks nothing either). */
function bearerMatches(request: IncomingMessage, expected: Buffer): boolean {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return false;
  return timingSafeEqual(digest(match[1]), expected);
}

function sendJson(response: ServerResponse, status: number, body: unknown, onFinish?: () => void): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-store',
  });
  if (onFinish) response.once('finish', onFinish);
  response.end(payload);
}

function sendError(response: ServerResponse, error: HttpError): void {
  if (error.status === 401 && error.code === 'Unauthorized') response.setHeader('www-authenticate', 'Bearer');
  if (error.status === 413) response.setHeader('connection', 'close');
  sendJson(response, error.status, { error: { code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}) } });
}

async function readJsonBody(request: IncomingMessage): Promise<unknown> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
    throw new HttpError(413, 'PayloadTooLarge', `request body exceeds ${MAX_BODY_BYTES} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'PayloadTooLarge', `request body exceeds ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new HttpError(400, 'InvalidJson', 'request body must be a JSON object');
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'InvalidJson', 'request body is not valid JSON');
  }
}

/** Validates with zod; the first issue becomes a 400 naming its field. */
function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  let field = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys' && issue.keys.length) field = [field, issue.keys[0]].filter(Boolean).join('.');
  throw new HttpError(400, 'InvalidRequest', `invalid ${what}: ${field ? `${field}: ` : ''}${issue.message}`, field || undefined);
}

const limitParam = z.coerce.number().pipe(z.int().min(1).max(1000)).default(100);
const ListAssetsQuery = z.object({ limit: limitParam });
const ListOperationsQuery = z.object({
  limit: limitParam,
  assetId: z.string().optional(),
  state: OperationStateSchema.optional(),
  kind: OperationKindSchema.optional(),
});
const LogQuery = z.object({ limit: limitParam, afterSeq: z.coerce.number().pipe(z.int().min(0)).optional() });

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, 'InvalidRequest', 'malformed percent-encoding in the path', 'id');
  }
}

function methodNotAllowed(method: string, pathname: string): HttpError {
  return new HttpError(405, 'MethodNotAllowed', `${method} is not allowed on ${pathname}`);
}

export function createSimulatorHttpServer(options: SimulatorHttpOptions): SimulatorHttpServer {
  const { service, config, logger, onCrash } = options;
  const adminDigest = config.adminToken === null ? null : digest(config.adminToken);
  const held = new Set<ServerResponse>();
  const streams = new Set<ServerResponse>();

  const releaseHeld = () => {
    for (const response of held) response.socket?.destroy();
    held.clear();
    service.stats.heldRequests = 0;
  };
  service.onFaultsChanged(() => {
    if (!service.runtimeFaults(Date.now()).hang) releaseHeld();
  });

  async function handleRuntime(request: IncomingMessage, response: ServerResponse, pathname: string, method: string): Promise<void> {
    const gate = service.runtimeFaults(Date.now());
    if (gate.unavailable === 'reset') {
      service.stats.refusedRequests++;
      request.socket.destroy();
      return;
    }
    if (gate.unavailable === 'reject') {
      service.stats.refusedRequests++;
      response.setHeader('retry-after', '1');
      throw new HttpError(503, 'Unavailable', 'the provider is unavailable (unavailable fault)');
    }
    if (gate.hang) {
      // Held without an answer until hang is cleared, then reset unprocessed.
      held.add(response);
      service.stats.heldRequests = held.size;
      response.once('close', () => {
        held.delete(response);
        service.stats.heldRequests = held.size;
      });
      return;
    }
    const isHealth = pathname === '/v1/healthz';
    const caller = callerOf(request.socket as TLSSocket);
    if (!isHealth && 'refusal' in caller) {
      await service.recordRefusal({ code: caller.refusal.code, message: caller.refusal.message, identity: caller.identity, path: `${method} ${pathname}` });
      throw caller.refusal;
    }
    // The body is read before the added latency: a request the client gives up on during the delay is still
    // processed, as a slow provider would (the client sees an unknown outcome and resolves it by lookup).
    const body = method === 'POST' && !isHealth ? await readJsonBody(request) : undefined;
    const identity = 'spiffeId' in caller ? caller.spiffeId : '';
    /** Target-level authorization: refused (403, audited) unless the policy lets this identity act on the asset. */
    const authorize = async (assetId: string, kind: OperationKind | null, operation?: OperationRequest) => {
      const decision = authorizer.decide(identity, assetId, kind);
      if (decision.allowed) return;
      const refusal = new HttpError(403, 'TargetNotAuthorized', decision.reason ?? 'not authorized');
      await service.recordRefusal({ code: refusal.code, message: refusal.message, identity, path: `${method} ${pathname}`, operation });
      throw refusal;
    };
    if (gate.latencyMs > 0) {
      service.stats.delayedRequests++;
      await sleep(gate.latencyMs);
    }

    if (isHealth) {
      if (method !== 'GET') throw methodNotAllowed(method, pathname);
      sendJson(response, 200, service.health());
      return;
    }

    if (pathname === '/v1/operations') {
      if (method !== 'POST') throw methodNotAllowed(method, pathname);
      const operation = parseOrThrow(OperationRequestSchema, body, 'operation');
      await authorize(operation.assetId, operation.kind, operation);
      const outcome = await service.submit(operation, 'spiffeId' in caller ? caller.spiffeId : undefined);
      if (outcome.type === 'rejected') throw new HttpError(409, outcome.code, outcome.message);
      if (outcome.loseResponse) {
        logger.warn('response dropped (loseResponses fault)', { operationId: operation.id });
        response.socket?.destroy();
        if (outcome.crash) onCrash();
        return;
      }
      sendJson(response, outcome.replayed ? 200 : 201, toOperationRecord(outcome.operation), outcome.crash ? onCrash : undefined);
      return;
    }
    const operationMatch = /^\/v1\/operations\/([^/]+)$/.exec(pathname);
    if (operationMatch) {
      if (method !== 'GET') throw methodNotAllowed(method, pathname);
      const id = decodeSegment(operationMatch[1]);
      const record = await service.getOperation(id);
      if (!record) throw new HttpError(404, 'NotFound', `no operation ${id}`);
      await authorize(record.assetId, null);
      sendJson(response, 200, record);
      return;
    }
    const assetMatch = /^\/v1\/assets\/([^/]+)$/.exec(pathname);
    if (assetMatch) {
      if (method !== 'GET') throw methodNotAllowed(method, pathname);
      const id = decodeSegment(assetMatch[1]);
      await authorize(id, null);
      const asset = await service.getAsset(id);
      if (!asset) throw new HttpError(404, 'NotFound', `no asset ${id}`);
      sendJson(response, 200, asset);
      return;
    }
    throw new HttpError(404, 'NotFound', `no route ${method} ${pathname}`);
  }

  function openLogStream(request: IncomingMessage, response: ServerResponse, afterSeq: number | undefined): void {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
    response.on('error', () => undefined); // a subscriber that went away is cleaned up on 'close'
    const write = (text: string) => {
      if (!response.destroyed && !response.writableEnded) response.write(text);
    };
    write('retry: 1000\n\n');
    const send = (entry: { seq: number }) => write(`id: ${entry.seq}\ndata: ${JSON.stringify(entry)}\n\n`);
    const { backlog, unsubscribe } = service.subscribeLog(send, afterSeq);
    for (const entry of backlog) send(entry);
    const heartbeat = setInterval(() => write(': ping\n\n'), SSE_HEARTBEAT_MS);
    heartbeat.unref();
    streams.add(response);
    request.once('close', () => {
      clearInterval(heartbeat);
      unsubscribe();
      streams.delete(response);
    });
  }

  async function handleAdmin(request: IncomingMessage, response: ServerResponse, url: URL, method: string): Promise<void> {
    const pathname = url.pathname;
    if (adminDigest === null) throw new HttpError(404, 'NotFound', `no route ${method} ${pathname}`);
    if (!bearerMatches(request, adminDigest)) throw new HttpError(401, 'Unauthorized', 'missing or invalid admin bearer token');
    const params = Object.fromEntries(url.searchParams);

    if (pathname === '/admin/assets') {
      if (method === 'GET') {
        const query = parseOrThrow(ListAssetsQuery, params, 'query');
        sendJson(response, 200, await service.listAssets(query.limit));
        return;
      }
      if (method === 'POST') {
        const body = parseOrThrow(CreateAssetRequestSchema, await readJsonBody(request), 'asset');
        const { asset, created } = await service.createAsset(body.id);
        sendJson(response, created ? 201 : 200, asset);
        return;
      }
      throw methodNotAllowed(method, pathname);
    }
    const assetMatch = /^\/admin\/assets\/([^/]+)$/.exec(pathname);
    if (assetMatch) {
      if (method !== 'GET') throw methodNotAllowed(method, pathname);
      const id = decodeSegment(assetMatch[1]);
      const asset = await service.getAsset(id);
      if (!asset) throw new HttpError(404, 'NotFound', `no asset ${id}`);
      sendJson(response, 200, asset);
      return;
    }
    if (pathname === '/admin/operations') {
      if (method !== 'GET') throw methodNotAllowed(method, pathname);
      sendJson(response, 200, await service.listOperations(parseOrThrow(ListOperationsQuery, params, 'query')));
      return;
    }
    const operationMatch = /^\/admin\/operations\/([^/]+)$/.exec(pathname);
    if (operationMatch) {
      if (method !== 'GET') throw methodNotAllowed(method, pathname);
      const id = decodeSegment(operationMatch[1]);
      const record = await service.getOperation(id);
      if (!record) throw new HttpError(404, 'NotFound', `no operation ${id}`);
      sendJson(response, 200, record);
      return;
    }
    if (pathname === '/admin/faults') {
      if (method === 'GET') {
        sendJson(response, 200, await service.readFaults());
        return;
      }
      if (method === 'POST') {
        const patch = parseOrThrow(FaultPatchSchema, await readJsonBody(request), 'fault patch');
        const { view, crashNow } = await service.patchFaults(patch);
        sendJson(response, 200, view, crashNow ? onCrash : undefined);
        return;
      }
      if (method === 'DELETE') {
        sendJson(response, 200, await service.clearFaults());
        return;
      }
      throw methodNotAllowed(method, pathname);
    }
    if (pathname === '/admin/stats') {
      if (method !== 'GET') throw methodNotAllowed(method, pathname);
      sendJson(response, 200, service.storeStats());
      return;
    }
    if (pathname === '/admin/log') {
      if (method !== 'GET') throw methodNotAllowed(method, pathname);
      sendJson(response, 200, await service.getLog(parseOrThrow(LogQuery, params, 'query')));
      return;
    }
    if (pathname === '/admin/log/stream') {
      if (method !== 'GET') throw methodNotAllowed(method, pathname);
      openLogStream(request, response, parseOrThrow(LogQuery, params, 'query').afterSeq);
      return;
    }
    throw new HttpError(404, 'NotFound', `no route ${method} ${pathname}`);
  }

  async function handle(request: IncomingMessage, response: ServerResponse, admin: boolean): Promise<void> {
    const started = performance.now();
    const method = request.method ?? 'GET';
    const url = new URL(request.url ?? '/', 'https://simulator.invalid');
    try {
      if (admin && (url.pathname === '/admin' || url.pathname.startsWith('/admin/'))) await handleAdmin(request, response, url, method);
      else if (!admin && url.pathname.startsWith('/v1/')) await handleRuntime(request, response, url.pathname, method);
      else throw new HttpError(404, 'NotFound', `no route ${method} ${url.pathname}`);
    } catch (error) {
      if (response.headersSent || response.destroyed) return;
      if (error instanceof HttpError) sendError(response, error);
      else {
        logger.error('request failed', { method, path: url.pathname, error: describeError(error) });
        sendError(response, new HttpError(500, 'Internal', 'internal error'));
      }
    } finally {
      logger.debug('request', { method, path: url.pathname, status: response.statusCode, ms: Math.round(performance.now() - started) });
    }
  }

  const callers = new WeakMap<Socket, Caller>();
  const callerOf = (socket: TLSSocket): Caller => {
    let caller = callers.get(socket);
    if (!caller) {
      caller = identify(socket, config.tls.trustDomain);
      callers.set(socket, caller);
    }
    return caller;
  };

  const listener = (admin: boolean) => (request: IncomingMessage, response: ServerResponse) => {
    handle(request, response, admin).catch((error: unknown) => {
      logger.error('request handler crashed', { error: describeError(error) });
      response.destroy();
    });
  };

  // Throws PolicyError at start-up (the caller refuses to start); on a later change a bad file keeps the policy in force.
  const policyFile = config.policyFile;
  let authorizer = new Authorizer(policyFile ? loadPolicy(policyFile) : null);
  const stopWatchingPolicy = policyFile
    ? watchFiles([policyFile], () => {
        try {
          authorizer = new Authorizer(loadPolicy(policyFile));
          logger.info('authorization policy reloaded', { policyFile, grants: authorizer.policy?.grants.length ?? 0 });
        } catch (error) {
          logger.error('authorization policy not reloaded: the previous one stays in force', { error: describeError(error) });
        }
      })
    : () => undefined;

  const material = readTlsMaterial(config.tls);
  // The client certificate is requested but checked by us (rejectUnauthorized: false), so a refusal is a
  // clear, coded, audited answer instead of a TLS alert the caller cannot tell apart from a network failure.
  const server = https.createServer(
    { cert: material.cert, key: material.key, ca: material.ca, requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2' },
    listener(false),
  );
  server.keepAliveTimeout = 65_000;
  const adminServer = adminDigest === null ? null : https.createServer({ cert: material.cert, key: material.key, minVersion: 'TLSv1.2' }, listener(true));
  if (adminServer) adminServer.keepAliveTimeout = 65_000;

  const stopWatching = watchFiles([config.tls.certFile, config.tls.keyFile, config.tls.clientCaFile], () => {
    const next = readTlsMaterial(config.tls);
    server.setSecureContext({ cert: next.cert, key: next.key, ca: next.ca });
    adminServer?.setSecureContext({ cert: next.cert, key: next.key });
    logger.info('TLS material reloaded', { certFile: config.tls.certFile, clientCaFile: config.tls.clientCaFile });
  });

  return {
    server,
    adminServer,
    async close() {
      stopWatching();
      stopWatchingPolicy();
      const closing = Promise.all(
        [server, adminServer].filter((s): s is https.Server => s !== null).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
      );
      releaseHeld();
      for (const response of streams) response.end();
      streams.clear();
      server.closeIdleConnections();
      adminServer?.closeIdleConnections();
      await closing;
    },
  };
}
