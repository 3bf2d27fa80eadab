import { getDb } from '@/db/client';
import { env } from '@/server/env';
import { checkReadiness, readinessCheckBudgetMs } from '@/server/observability/readiness';

export const dynamic = 'force-dynamic';

/**
 * Readiness, per dependency by name; 503 when any required dependency is not ok. Each check has a
 * fraction of the request deadline (readinessCheckBudgetMs): a stalled database is a 503 naming the
 * database check within about a second, never a hang.
 */
export async function GET() {
  const report = await checkReadiness(getDb(), { checkBudgetMs: readinessCheckBudgetMs(env().DB_REQUEST_TIMEOUT_MS) });
  return Response.json(report, { status: report.status === 'ok' ? 200 : 503, headers: { 'cache-control': 'no-store' } });
}
