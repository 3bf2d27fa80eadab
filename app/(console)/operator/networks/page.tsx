import type { Metadata } from 'next';
import { EmptyState, PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Networks' };

export default async function Page() {
  await requirePlatformRole('operator');
  return (
    <>
      <PageHeader title="Networks" description="All networks and pools across projects, with utilization and retained allocations." />
      <EmptyState title="No networks yet">Every project's networks and pools appear here with their utilization; retained allocations can be released from here.</EmptyState>
    </>
  );
}
