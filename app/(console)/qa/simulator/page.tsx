import type { Metadata } from 'next';
import { getQueryClient, HydrateClient, trpc } from '@/app/_trpc/server';
import { SimulatorView } from '@/components/simulator/simulator-view';
import { Alert, PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';
import { providerAdminClient } from '@/server/provider/connection';
import { NOT_CONFIGURED_MESSAGE } from '@/server/provider/qa';

export const metadata: Metadata = { title: 'Simulator' };

export default async function SimulatorPage() {
  await requirePlatformRole('qa');
  const header = (
    <PageHeader
      title="Simulator"
      description="Fault injection for the provider simulator: switch faults on and off, follow the operation log live, and inspect asset states. Every fault change is in the audit log."
    />
  );
  if (!providerAdminClient()) {
    return (
      <>
        {header}
        <Alert tone="amber" testId="simulator-not-configured">
          <p className="font-medium">No admin access to the simulator: fault switches, the operation log and asset states are unavailable.</p>
          <p className="mt-1">{NOT_CONFIGURED_MESSAGE}</p>
        </Alert>
      </>
    );
  }
  // Status first (it never throws for simulator trouble); the live log connects from the browser.
  await getQueryClient().prefetchQuery(trpc.simulator.status.queryOptions());
  return (
    <HydrateClient>
      {header}
      <SimulatorView />
    </HydrateClient>
  );
}
