import { z } from 'zod';
import { auditQuotaBooks } from '@/server/quota/audit';
import { log } from '@/server/observability/log';
import type { TaskContext } from '../types';

const payload = z.object({}).passthrough();

/**
 * Every 5 minutes (crontab) and on demand: recomputes every allowance bucket from grants and live
 * claims and reports drift (events + metric). Repairs nothing.
 */
export async function quotaAudit(raw: unknown, { db }: TaskContext) {
  payload.parse(raw ?? {});
  const result = await auditQuotaBooks(db);
  if (result.drifted.length) {
    log('warn', `quota audit: ${result.drifted.length} bucket(s) drifted`, {
      drifted: result.drifted.map((d) => `${d.project}/${d.resourceType}`).slice(0, 20),
    });
  }
}
