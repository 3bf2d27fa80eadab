import { z } from 'zod';
import { pruneClaimLog } from '@/server/quota/buckets';
import type { TaskContext } from '../types';

const payload = z.object({}).passthrough();

/** Daily (crontab): forgets denied and released quota claims past the claim log's retention. */
export async function quotaPruneClaimLog(raw: unknown, { db }: TaskContext) {
  payload.parse(raw ?? {});
  await pruneClaimLog(db);
}
