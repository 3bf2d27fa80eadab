import { getTRPCErrorShape, transformTRPCResponse, TRPCError } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { asDomainError, DATABASE_RETRY_AFTER_SECONDS, DomainError } from '@/server/errors';
import { MAX_BODY_BYTES, readWebBody } from '@/server/http/body-limit';
import { checkCsrf } from '@/server/http/csrf';
import { errorIdOf, logError } from '@/server/observability/log';
import { errorTable } from '@/server/error-table';
import type { Context } from './init';
import { appRouter } from './root';

/** The most calls one tRPC request may batch (the console's batch link sends at most this many). */
export const MAX_BATCH_CALLS = 16;

const ENDPOINT = '/api/trpc';

/**
 * Serves one tRPC request over HTTP (the console's transport, app/api/trpc), bounded before tRPC
 * reads any of it:
 * - the CSRF check (server/http/csrf.ts) for state-changing calls;
 * - at most MAX_BATCH_CALLS calls in one batch (400 `ValidationFailed`, field `batch`);
 * - a body of at most MAX_BODY_BYTES, like REST's (413 `PayloadTooLarge`, field `body`), read
 *   only up to the limit.
 * These refusals are tRPC error answers shaped by the router's error formatter, so the console's
 * client shows their message. Failures nobody coded are logged here, once each, and answered by
 * the error formatter (init.ts) without internals.
 */
export async function serveTrpc(req: Request, createContext: () => Promise<Context>): Promise<Response> {
  const csrf = checkCsrf(req);
  if (csrf) return csrf;
  const url = new URL(req.url);
  const calls = url.searchParams.get('batch') === '1' ? url.pathname.slice(ENDPOINT.length + 1).split(',').length : 1;
  if (calls > MAX_BATCH_CALLS) {
    return refusal(
      new DomainError('ValidationFailed', `a batch may carry at most ${MAX_BATCH_CALLS} calls; this one has ${calls}`, 'batch', {
        limit: MAX_BATCH_CALLS,
        calls,
      }),
    );
  }
  let bounded = req;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    const body = await readWebBody(req);
    if (body === 'tooLarge') {
      return refusal(new DomainError('PayloadTooLarge', `body exceeds ${MAX_BODY_BYTES} bytes`, 'body', { limit: MAX_BODY_BYTES }));
    }
    bounded = new Request(req.url, { method: req.method, headers: req.headers, body: new Uint8Array(body), signal: req.signal });
  }
  return fetchRequestHandler({
    endpoint: ENDPOINT,
    req: bounded,
    router: appRouter,
    createContext,
    maxBatchSize: MAX_BATCH_CALLS,
    responseMeta({ errors, paths }) {
      // A client told the database is unavailable is told when to try again.
      const unavailable = errors.some((e) => asDomainError(e.cause)?.code === 'DatabaseUnavailable');
      const headers = unavailable ? new Headers({ 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) }) : undefined;
      // Every call failed with the same status tRPC has no code for (410 Gone): answer it as REST does.
      const statuses = new Set(errors.map((e) => trpcHttpStatus(e.cause)));
      const [only] = statuses;
      const status = errors.length > 0 && errors.length === (paths?.length ?? 1) && statuses.size === 1 && only !== undefined ? only : undefined;
      return { ...(headers ? { headers } : {}), ...(status ? { status } : {}) };
    },
    onError({ error, path }) {
      // Under the id the error formatter shows the client (the same error object, so the same id).
      if (error.code === 'INTERNAL_SERVER_ERROR') logError(`trpc ${path ?? '?'}`, error.cause ?? error, errorIdOf(error));
    },
  });
}

/** The status the error table gives a domain error over tRPC when it is not its tRPC code's own. */
function trpcHttpStatus(cause: unknown): number | undefined {
  const domain = asDomainError(cause);
  return domain ? errorTable[domain.code].trpcHttp : undefined;
}

/** A whole request refused before tRPC reads it: one tRPC error (the batch link hands it to every call), status from the error table. */
function refusal(cause: DomainError): Response {
  const { trpc, http } = errorTable[cause.code];
  const config = appRouter._def._config;
  const shape = getTRPCErrorShape({
    config,
    error: new TRPCError({ code: trpc, message: cause.message, cause }),
    type: 'unknown',
    path: undefined,
    input: undefined,
    ctx: undefined,
  });
  return Response.json(transformTRPCResponse(config, { error: shape }), { status: http });
}
