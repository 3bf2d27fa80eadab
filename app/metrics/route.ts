import { getDb } from '@/db/client';
import { env } from '@/server/env';
import { metricsResponse } from '@/server/observability/metrics';

export const dynamic = 'force-dynamic';

/** Prometheus exposition (server/observability/metrics.ts); behind `METRICS_TOKEN` when it is set. */
export function GET(req: Request) {
  return metricsResponse(req, getDb(), env().METRICS_TOKEN);
}
