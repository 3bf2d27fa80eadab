import { getDb } from '@/db/client';
import { env } from '@/server/env';
import { metricsAccess, metricsResponse } from '@/server/observability/metrics';

export const dynamic = 'force-dynamic';

/** Prometheus exposition (server/observability/metrics.ts): METRICS_TOKEN's holder, or anyone's aggregate view with METRICS_PUBLIC=1. */
export function GET(req: Request) {
  return metricsResponse(req, getDb(), metricsAccess(env()));
}
