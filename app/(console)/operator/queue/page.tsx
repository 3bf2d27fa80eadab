import type { Metadata } from 'next';
import { EmptyState, PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Allocation queue' };

export default async function Page() {
  await requirePlatformRole('operator');
  return (
    <>
      <PageHeader title="Allocation queue" description="Machine requests awaiting operator approval, with the free capacity that matches each." />
      <EmptyState title="No requests are waiting">Machine requests that need approval appear here with matching free capacity; approve or reject them with a reason.</EmptyState>
    </>
  );
}
