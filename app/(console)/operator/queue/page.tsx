import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { ApprovalQueueView } from '@/components/fleet/approval-queue-view';
import { queueInput } from '@/components/fleet/queries';
import { PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Allocation queue' };

export default async function Page() {
  await requirePlatformRole('operator');
  await getQueryClient().prefetchQuery(trpc.fleet.queue.list.queryOptions(queueInput()));
  return (
    <>
      <PageHeader title="Allocation queue" description="Machine requests awaiting operator approval, oldest first, with the free capacity that matches each." />
      <HydrateClient>
        <ApprovalQueueView />
      </HydrateClient>
    </>
  );
}
