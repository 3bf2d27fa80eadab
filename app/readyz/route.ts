import { getDb } from '@/db/client';
import { checkReadiness } from '@/server/observability/readiness';

export const dynamic = 'force-dynamic';

/** Readiness, per dependency by name; 503 when any required dependency is not ok. */
export async function GET() {
  const report = await checkReadiness(getDb());
  return Response.json(report, { status: report.status === 'ok' ? 200 : 503 });
}
