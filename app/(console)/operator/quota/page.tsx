import type { Metadata } from 'next';
import { EmptyState, PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Quota admin' };

export default async function Page() {
  await requirePlatformRole('operator');
  return (
    <>
      <PageHeader title="Quota admin" description="Resource registrations, grants, policies and increase requests." />
      <EmptyState title="No quota configuration yet">Registrations, grants, grant and claim creation policies with their Ready state, and tenants' increase requests appear here.</EmptyState>
    </>
  );
}
