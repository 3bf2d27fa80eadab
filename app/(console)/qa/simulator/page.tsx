import type { Metadata } from 'next';
import { EmptyState, PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Simulator' };

export default async function Page() {
  await requirePlatformRole('qa');
  return (
    <>
      <PageHeader title="Simulator" description="Fault injection for the provider simulator: switches, the live operation log and asset states." />
      <EmptyState title="The simulator console is not connected yet">Fault switches (lost responses, failures, latency, outages, cleanup failures, crashes), the operation log and asset states appear here.</EmptyState>
    </>
  );
}
