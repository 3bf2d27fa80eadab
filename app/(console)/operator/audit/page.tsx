import type { Metadata } from 'next';
import { EventsView } from '@/components/audit/events-view';
import { PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Audit log' };

export default async function AuditPage() {
  await requirePlatformRole('operator', 'admin');
  return (
    <>
      <PageHeader title="Audit log" description="Every state-changing action across all projects: who, what, which object, and why. Append-only." />
      <EventsView />
    </>
  );
}
