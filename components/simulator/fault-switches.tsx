'use client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Badge, Button, Card } from '@/components/ui/primitives';
import type { FaultPatch, FaultState, FaultStats } from '@/lib/provider-wire';
import { useFaultParams } from './fault-params';
import { CleanupFailFault, CrashFault, FailOperationsFault, HangFault, LatencyFault, LoseResponsesFault, UnavailableFault } from './fault-rows';

/** How many switches are on. */
export function faultsOn(faults: FaultState): number {
  return [
    faults.loseResponses > 0,
    faults.failOperations !== null,
    faults.latencyMs > 0,
    faults.hang,
    faults.unavailable !== null,
    faults.cleanupFailAssets.length > 0,
    faults.crashOnNextOperation,
  ].filter(Boolean).length;
}

/**
 * The fault switches with their on/off state and counters. Every change goes through `simulator.setFaults`
 * (audited); counted faults count down live as operations consume them (the page refetches on log activity).
 */
export function FaultSwitches({
  faults,
  stats,
  assetIds,
  onChanged,
}: {
  faults: FaultState | null;
  stats: FaultStats | null;
  assetIds: string[];
  onChanged: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const statusKey = trpc.simulator.status.queryKey();
  const applyFaults = (next: FaultState) =>
    queryClient.setQueryData(statusKey, (old) => (old && old.configured && old.reachable ? { ...old, faults: next } : old));
  const set = useMutation(
    trpc.simulator.setFaults.mutationOptions({
      onSuccess: (next) => {
        applyFaults(next);
        onChanged();
      },
    }),
  );
  const clear = useMutation(
    trpc.simulator.clearFaults.mutationOptions({
      onSuccess: (next) => {
        applyFaults(next);
        onChanged();
      },
    }),
  );
  const [confirmCrash, setConfirmCrash] = useState(false);

  const params = useFaultParams(faults);
  const busy = set.isPending || clear.isPending;
  const patch = (p: FaultPatch) => set.mutate(p);
  const datalistId = useId();

  if (!faults) {
    return (
      <Card title="Fault switches">
        <p className="text-sm text-slate-600">The switches appear when the simulator answers. Faults are durable: they are still set after a restart.</p>
      </Card>
    );
  }

  const count = faultsOn(faults);
  const row = { faults, stats, params, busy, patch, assetList: datalistId, assetIds };

  return (
    <Card
      title={<span className="flex items-center gap-2">Fault switches {count > 0 ? <Badge tone="amber">{count} on</Badge> : <Badge>all off</Badge>}</span>}
      actions={
        <Button variant="secondary" disabled={busy || count === 0} onClick={() => clear.mutate()}>
          Clear all faults
        </Button>
      }
      className="[&>div]:p-0"
    >
      {(set.error || clear.error) && (
        <div className="border-b border-slate-100 p-3">
          <Alert testId="fault-error">{errorMessage(set.error ?? clear.error)}</Alert>
        </div>
      )}
      <datalist id={datalistId}>
        {assetIds.map((id) => (
          <option key={id} value={id} />
        ))}
      </datalist>
      <ul className="grid lg:grid-cols-2">
        <LoseResponsesFault {...row} />
        <FailOperationsFault {...row} />
        <LatencyFault {...row} />
        <HangFault {...row} />
        <UnavailableFault {...row} />
        <CleanupFailFault {...row} />
        <CrashFault {...row} onCrashNow={() => setConfirmCrash(true)} />
      </ul>

      {confirmCrash && (
        <ConfirmDialog
          title="Crash the simulator now?"
          confirmLabel="Crash now"
          pending={set.isPending}
          error={set.error ? errorMessage(set.error) : null}
          onCancel={() => setConfirmCrash(false)}
          onConfirm={() => set.mutate({ crash: 'now' }, { onSuccess: () => setConfirmCrash(false) })}
        >
          The process exits right after answering. Acknowledged operations are durable; in-flight requests are cut off. The supervisor restarts it after a short
          backoff.
        </ConfirmDialog>
      )}
    </Card>
  );
}
