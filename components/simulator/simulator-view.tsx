'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { Alert } from '@/components/ui/primitives';
import { AssetsTable } from './assets-table';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { FaultSwitches } from './fault-switches';
import { useInvalidateSimulator, useLiveLog, useSimulatorStatus } from './hooks';
import { OperationLog } from './operation-log';
import { OperationsTable } from './operations-table';
import { StatusHeader, type RestartProgress } from './status-header';

/** Give up waiting for a restarted simulator after this long (it may refuse to start, e.g. a corrupt state file). */
const RESTART_DEADLINE_MS = 60_000;

/**
 * The QA console's simulator page: status and restart, fault switches, the live operation log, asset
 * states and operation records. The log is pushed by the SSE relay; everything else refetches when the
 * log reports activity, and the status is polled so a crash shows without a reload.
 */
export function SimulatorView() {
  const trpc = useTRPC();
  const [restart, setRestart] = useState<RestartProgress | null>(null);
  const [confirmRestart, setConfirmRestart] = useState(false);
  const status = useSimulatorStatus(restart?.phase === 'waiting');
  const reachable = status.data?.configured === true && status.data.reachable;
  const invalidate = useInvalidateSimulator();
  const log = useLiveLog(invalidate);
  const assets = useQuery({ ...trpc.simulator.assets.queryOptions({}), enabled: reachable });
  const requestRestart = useMutation(
    trpc.simulator.restart.mutationOptions({
      onSuccess: () => {
        setConfirmRestart(false);
        setRestart({ requestedAt: Date.now(), phase: 'waiting' });
      },
    }),
  );

  // Follow a restart until the simulator answers again (or the deadline passes).
  useEffect(() => {
    if (restart?.phase !== 'waiting') return;
    if (reachable) {
      setRestart({ requestedAt: restart.requestedAt, phase: 'back', backAt: Date.now() });
      void invalidate();
      return;
    }
    const timer = setTimeout(() => setRestart({ requestedAt: restart.requestedAt, phase: 'timeout' }), restart.requestedAt + RESTART_DEADLINE_MS - Date.now());
    return () => clearTimeout(timer);
  }, [restart, reachable, invalidate]);

  if (status.data && !status.data.configured) {
    // The page says so before rendering this view; this covers a server whose configuration differs from the page's.
    return (
      <Alert tone="amber" testId="simulator-not-configured">
        This web server has no admin access to the simulator (SIMULATOR_ADMIN_URL and SIMULATOR_ADMIN_TOKEN are not set).
      </Alert>
    );
  }

  const faults = status.data?.configured && status.data.reachable ? status.data : null;
  return (
    <div className="space-y-6">
      <StatusHeader
        status={status.data}
        loadError={status.error ? errorMessage(status.error) : null}
        restart={restart}
        onRestart={() => {
          requestRestart.reset();
          setConfirmRestart(true);
        }}
      />
      <FaultSwitches
        faults={faults?.faults ?? null}
        stats={faults?.faultStats ?? null}
        assetIds={assets.data?.items.map((a) => a.id) ?? []}
        onChanged={() => void invalidate()}
      />
      <OperationLog entries={log.entries} mode={log.mode} problem={log.problem} />
      <AssetsTable
        assets={reachable ? assets.data : undefined}
        loading={assets.isLoading}
        error={assets.error && reachable ? errorMessage(assets.error) : null}
      />
      <OperationsTable enabled={reachable} />
      {confirmRestart && (
        <ConfirmDialog
          title="Restart the simulator?"
          confirmLabel="Restart"
          tone="primary"
          pending={requestRestart.isPending}
          error={requestRestart.error ? errorMessage(requestRestart.error) : null}
          onCancel={() => setConfirmRestart(false)}
          onConfirm={() => requestRestart.mutate()}
        >
          The supervisor starts the simulator process now (skipping its restart backoff). Its durable state — assets, operations and fault switches — is kept.
          The request is recorded in the audit log.
        </ConfirmDialog>
      )}
    </div>
  );
}
