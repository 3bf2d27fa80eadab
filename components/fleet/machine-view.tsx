'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { useCanEdit } from '@/components/projects/hooks';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Button, Card, formatTime } from '@/components/ui/primitives';
import { toDate } from './format';
import { useExactStatusText, useInvalidateFleet } from './hooks';
import { SAFETY_REFETCH_MS, useFleetLive } from './live';
import { AddressesCard, AllocationCard, LastOperationCard, SpecificationCard, type Machine } from './machine-cards';
import { ProgressStrip } from './machine-progress';
import { LiveIndicator, PhaseBadge } from './parts';
import { machineInput } from './queries';
import { plainReason } from './plain-words';
import { MachineTimeline } from './timeline';

/**
 * One machine: its phase and why, the allocation it holds (device, epoch, binding id), its
 * addresses and its timeline. Refreshes every second while it is on its way somewhere. Editors
 * release it here, after a confirmation.
 */
export function MachineView({ project, name, id }: { project: string; name: string; id?: string }) {
  const trpc = useTRPC();
  const canEdit = useCanEdit(project);
  const invalidate = useInvalidateFleet();
  const [confirmRelease, setConfirmRelease] = useState(false);
  const [confirmCancel, setConfirmCancel] = useState(false);
  const exact = useExactStatusText();
  const live = useFleetLive({ project });
  const query = useQuery({ ...trpc.fleet.machines.get.queryOptions(machineInput(project, name, id)), refetchInterval: SAFETY_REFETCH_MS });
  const release = useMutation(
    trpc.fleet.machines.delete.mutationOptions({
      onSuccess: () => {
        setConfirmRelease(false);
        void invalidate();
      },
    }),
  );

  const cancel = useMutation(
    trpc.fleet.machines.cancel.mutationOptions({
      onSuccess: () => {
        setConfirmCancel(false);
        void invalidate();
      },
    }),
  );

  if (query.error) {
    return (
      <div className="space-y-3">
        <Alert testId="machine-error">{errorMessage(query.error)}</Alert>
        <Link href={`/projects/${project}/machines`} className="text-sm font-medium text-brand-600 hover:underline">
          ← All machines
        </Link>
      </div>
    );
  }
  if (!query.data) return <p className="text-sm text-slate-500">Loading machine…</p>;
  const m = query.data.machine as Machine;
  const timeline = query.data.timeline;
  const releaseRequested = m.deletionRequestedAt != null;
  // Tenants read the reason in plain words; the exact text stays in the timeline's details.
  const reason = exact ? m.phaseReason : plainReason(m.phaseReason);
  const canRelease = canEdit && m.phase !== 'Released' && !releaseRequested;
  // A request on its way to Ready can be cancelled: exactly before the provider is asked to install, by a verified cleanup after.
  const cancelExact = m.phase === 'Pending' || m.phase === 'AwaitingApproval' || m.phase === 'Allocating' || m.phase === 'Bound';
  const canCancel = canEdit && !releaseRequested && (cancelExact || m.phase === 'Installing');

  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0 space-y-1">
          <Link href={`/projects/${project}/machines`} className="text-xs font-medium text-brand-600 hover:underline">
            ← Machines
          </Link>
          <div className="flex flex-wrap items-center gap-3">
            <h1 className="text-xl font-semibold text-slate-900">{m.name}</h1>
            <PhaseBadge phase={m.phase} />
            <LiveIndicator state={live} fetching={query.isFetching} />
          </div>
          <p className="text-sm text-slate-600" data-testid="phase-reason">
            {reason ?? <span className="text-slate-500">No reason recorded</span>}
            {m.phaseChangedAt && <span className="text-xs text-slate-500"> · since {formatTime(toDate(m.phaseChangedAt))}</span>}
          </p>
        </div>
        {canCancel && (
          <Button variant="secondary" onClick={() => setConfirmCancel(true)}>
            Cancel request
          </Button>
        )}
        {canRelease && (
          <Button variant="secondary" className="text-red-700!" onClick={() => setConfirmRelease(true)}>
            {m.phase === 'Pending' || m.phase === 'AwaitingApproval' ? 'Withdraw request' : 'Release'}
          </Button>
        )}
        {releaseRequested && m.phase !== 'Released' && (
          <p className="rounded-md bg-violet-50 px-3 py-1.5 text-sm text-violet-900 ring-1 ring-violet-200">
            Release requested {formatTime(toDate(m.deletionRequestedAt))}
          </p>
        )}
      </div>

      <Card>
        <ProgressStrip machine={m} timeline={timeline} />
        {m.phase === 'Failed' && (
          <div className="mt-3">
            <Alert testId="machine-failed">
              <strong>Failed:</strong> {reason ? reason.replace(/\.$/, '') : 'no reason recorded'}.{' '}
              {canEdit && !releaseRequested && 'Release it to return its capacity, addresses and quota.'}
            </Alert>
          </div>
        )}
      </Card>

      <div className="grid gap-4 lg:grid-cols-3">
        <AllocationCard machine={m} timeline={timeline} />
        <SpecificationCard machine={m} />
        <LastOperationCard machine={m} />
      </div>

      <AddressesCard project={project} machine={m} />

      <Card title="Timeline">
        <MachineTimeline entries={timeline} />
      </Card>

      {confirmCancel && (
        <ConfirmDialog
          title={`Cancel machine ${m.name}?`}
          confirmLabel="Cancel request"
          pending={cancel.isPending}
          error={cancel.error ? errorMessage(cancel.error) : null}
          onCancel={() => {
            setConfirmCancel(false);
            cancel.reset();
          }}
          onConfirm={() => cancel.mutate({ project, name: m.name })}
        >
          {cancelExact ? (
            <p>Nothing has been asked of the provider yet: the request ends at once and its addresses and quota are returned.</p>
          ) : (
            <p>
              The install is under way: it is undone by a cleanup the provider must verify, then the device, addresses and quota are returned. If the install
              completes first, the machine stays Ready and the cancel is refused.
            </p>
          )}
        </ConfirmDialog>
      )}

      {confirmRelease && (
        <ConfirmDialog
          title={`Release machine ${m.name}?`}
          confirmLabel={m.phase === 'Pending' || m.phase === 'AwaitingApproval' ? 'Withdraw request' : 'Release'}
          pending={release.isPending}
          error={release.error ? errorMessage(release.error) : null}
          onCancel={() => {
            setConfirmRelease(false);
            release.reset();
          }}
          onConfirm={() => release.mutate({ project, name: m.name })}
        >
          {m.deviceRef ? (
            <p>
              <code className="font-mono">{m.deviceRef}</code> is wiped by the provider; the wipe is verified before the device returns to the pool. Its
              addresses and the machine&apos;s quota are returned. Anything still running on it is lost.
            </p>
          ) : (
            <p>The request is withdrawn; its addresses and quota are returned.</p>
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}
