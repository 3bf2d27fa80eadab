import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { asDomainError, DATABASE_RETRY_AFTER_SECONDS } from '@/server/errors';
import { errorIdOf, logError } from '@/server/observability/log';
import type { Context } from './init';
import { appRouter } from './root';

/**
 * Serves one tRPC request over HTTP (the console's transport, app/api/trpc): failures nobody coded
 * are logged here, once each, and answered by the error formatter (init.ts) without internals.
 */
export function serveTrpc(req: Request, createContext: () => Promise<Context>): Promise<Response> {
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    createContext,
    responseMeta({ errors }) {
      // A client told the database is unavailable is told when to try again.
      const unavailable = errors.some((e) => asDomainError(e.cause)?.code === 'DatabaseUnavailable');
      return unavailable ? { headers: new Headers({ 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) }) } : {};
    },
    onError({ error, path }) {
      // Under the id the error formatter shows the client (the same error object, so the same id).
      if (error.code === 'INTERNAL_SERVER_ERROR') logError(`trpc ${path ?? '?'}`, error.cause ?? error, errorIdOf(error));
    },
  });
}
