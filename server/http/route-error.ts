import { asDomainError, DATABASE_RETRY_AFTER_SECONDS } from '@/server/errors';
import { internalErrorBody } from '@/server/observability/log';
import { errorTable } from '@/server/error-table';

/**
 * How a route handler outside REST v1 and tRPC (live updates, the QA log relay) answers a failure:
 * a coded one with its status from the one error table (DatabaseUnavailable with Retry-After),
 * anything else 500 with nothing of it but the id under which it is logged.
 */
export function routeErrorResponse(context: string, e: unknown): Response {
  const domain = asDomainError(e);
  if (domain) {
    const headers: Record<string, string> = domain.code === 'DatabaseUnavailable' ? { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) } : {};
    return Response.json({ error: { code: domain.code, message: domain.message } }, { status: errorTable[domain.code].http, headers });
  }
  return Response.json(internalErrorBody(context, e), { status: 500 });
}
