import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { adminBucketsInput, adminGrantsInput, queueInput } from '@/components/quota/queries';
import { QuotaAdminView } from '@/components/quota/quota-admin-view';
import { PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Quota admin' };

export default async function Page() {
  await requirePlatformRole('operator');
  const queryClient = getQueryClient();
  await Promise.all([
    queryClient.prefetchQuery(trpc.quota.admin.increases.queue.queryOptions(queueInput())),
    queryClient.prefetchQuery(trpc.quota.admin.buckets.list.queryOptions(adminBucketsInput())),
    queryClient.prefetchQuery(trpc.quota.admin.grants.list.queryOptions(adminGrantsInput())),
    queryClient.prefetchQuery(trpc.quota.admin.policies.grant.list.queryOptions()),
    queryClient.prefetchQuery(trpc.quota.admin.policies.claim.list.queryOptions()),
    queryClient.prefetchQuery(trpc.quota.admin.registrations.list.queryOptions()),
    queryClient.prefetchQuery(trpc.quota.admin.audit.last.queryOptions()),
  ]);
  return (
    <>
      <PageHeader
        title="Quota admin"
        description="Tenants' increase requests, every project's buckets, grants, the grant and claim creation policies with their Ready state, resource registrations, and the audit of the books."
      />
      <HydrateClient>
        <QuotaAdminView />
      </HydrateClient>
    </>
  );
}
