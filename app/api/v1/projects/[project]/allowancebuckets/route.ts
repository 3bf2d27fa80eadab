import { tokenRoute } from '@/server/http/rest';
import { listBuckets } from '@/server/quota/buckets';
import { bucketResource } from '@/server/quota/resources';

export const dynamic = 'force-dynamic';

export const GET = tokenRoute<{ project: string }>({ minRole: 'viewer', module: 'quota' }, async ({ db, principal }) => {
  const items = await listBuckets(db, principal.projectId);
  return { apiVersion: 'v1', kind: 'AllowanceBucketList', items: items.map(bucketResource), metadata: { continue: null } };
});
