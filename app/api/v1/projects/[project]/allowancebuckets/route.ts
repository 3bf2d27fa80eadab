import { projectReadRoute } from '@/server/http/rest';
import { listBuckets } from '@/server/quota/buckets';
import { bucketResource } from '@/server/quota/resources';

export const dynamic = 'force-dynamic';

/** The project's buckets: its own project for a project token, any project for an operator token. */
export const GET = projectReadRoute<{ project: string }>({ module: 'quota' }, async ({ db, project }) => {
  const items = await listBuckets(db, project.id);
  return { apiVersion: 'v1', kind: 'AllowanceBucketList', items: items.map(bucketResource), metadata: { continue: null } };
});
