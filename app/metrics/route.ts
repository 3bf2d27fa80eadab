import { getDb } from '@/db/client';
import { databaseMetricsText, metrics } from '@/server/observability/metrics';

export const dynamic = 'force-dynamic';

/** Prometheus exposition: this process's metrics plus the cluster-wide counters from the database. */
export async function GET() {
  const { registry } = metrics();
  let dbText = '';
  try {
    dbText = await databaseMetricsText(getDb());
  } catch (e) {
    dbText = `# database metrics unavailable: ${(e as Error).message.replace(/\n/g, ' ')}\n`;
  }
  return new Response((await registry.metrics()) + dbText, { headers: { 'content-type': registry.contentType } });
}
