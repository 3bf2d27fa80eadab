import type { Metadata } from 'next';
import { EmptyState, PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Fleet' };

export default async function Page() {
  await requirePlatformRole('operator');
  return (
    <>
      <PageHeader title="Fleet" description="Bare-metal capacity by location and class, with health, state and live allocations." />
      <EmptyState title="No capacity registered">Provider capacity records appear here grouped by location and class, with quarantined machines and operations that need attention.</EmptyState>
    </>
  );
}
