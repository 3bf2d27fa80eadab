'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import type { ReactNode } from 'react';
import { useState } from 'react';
import { useTRPC } from '@/app/_trpc/client';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { useCanEdit } from '@/components/ipam/hooks';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Button, Card, cx, formatTime } from '@/components/ui/primitives';
import type { MachinePhase } from '@/server/fleet/phases';
import { phaseLabel, toDate, type LastOperation, type MachineDetail, type TimelineEntry } from './format';
import { useInvalidateFleet } from './hooks';
import { SAFETY_REFETCH_MS, useFleetLive } from './live';
import { CapacityStateBadge, LiveIndicator, OperationSummary, PhaseBadge } from './parts';
import { machineInput } from './queries';
import { MachineTimeline } from './timeline';

type Machine = MachineDetail['machine'] & {
  cores?: number;
  memoryGib?: number;
  arch?: string;
  imageDigest?: string;
  allocationStatus?: string | null;
  capacityState?: string | null;
  requiresApproval?: boolean;
  approvedAt?: string | Date | null;
  deletionRequestedAt?: string | Date | null;
  createdBy?: string;
  phaseChangedAt?: string | Date;
};

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="grid grid-cols-[8rem_minmax(0,1fr)] gap-2 py-1.5 text-sm">
      <dt className="text-slate-500">{label}</dt>
      <dd className="min-w-0 break-words text-slate-900">{children}</dd>
    </div>
  );
}

const mono = (value: unknown) => (value == null || value === '' ? <span className="text-slate-400">—</span> : <code className="font-mono text-xs">{String(value)}</code>);

/** The steps a machine goes through, for the progress strip (approval only when it needed one). */
function steps(m: Machine, timeline: TimelineEntry[]): { phase: MachinePhase; state: 'done' | 'current' | 'failed' | 'todo' }[] {
  const reached = new Set<string>(['Pending']);
  for (const e of timeline) if (e.action.startsWith('machine.phase.')) reached.add(e.action.slice('machine.phase.'.length));
  const releasing = m.deletionRequestedAt != null || m.phase === 'Releasing' || m.phase === 'Released';
  const path: MachinePhase[] = ['Pending', ...(m.requiresApproval || reached.has('AwaitingApproval') ? (['AwaitingApproval'] as const) : []), 'Allocating', 'Bound', 'Installing', 'Ready'];
  if (releasing) path.push('Releasing', 'Released');
  // A failure is shown on the step that was running when it happened.
  const failedAt = m.phase === 'Failed' ? ([...timeline].reverse().find((e) => e.action === 'machine.phase.Failed')?.before as { phase?: MachinePhase } | null)?.phase : undefined;
  return path.map((phase) => {
    if (failedAt === phase) return { phase, state: 'failed' };
    if (phase === m.phase) return { phase, state: 'current' };
    return { phase, state: reached.has(phase) || (m.phase === 'Released' && phase !== 'Released') ? 'done' : 'todo' };
  });
}

function ProgressStrip({ machine, timeline }: { machine: Machine; timeline: TimelineEntry[] }) {
  return (
    <ol aria-label="Lifecycle" className="flex flex-wrap items-center gap-y-2 text-xs">
      {steps(machine, timeline).map((s, i) => (
        <li key={s.phase} className="flex items-center" aria-current={s.state === 'current' ? 'step' : undefined}>
          {i > 0 && <span aria-hidden className={cx('mx-1.5 h-px w-5', s.state === 'todo' ? 'bg-slate-200' : 'bg-slate-400')} />}
          <span
            className={cx(
              'rounded-full px-2 py-0.5 font-medium ring-1 ring-inset',
              s.state === 'done' && 'bg-emerald-50 text-emerald-800 ring-emerald-200',
              s.state === 'current' && 'bg-brand-600 text-white ring-brand-600',
              s.state === 'failed' && 'bg-red-600 text-white ring-red-600',
              s.state === 'todo' && 'bg-white text-slate-400 ring-slate-200',
            )}
          >
            {s.state === 'done' && '✓ '}
            {phaseLabel(s.phase)}
            {s.state === 'failed' && ' — failed'}
          </span>
        </li>
      ))}
    </ol>
  );
}

/** The device and epoch of the last binding, from the Bound transition's reason (after a release the live allocation is gone). */
function lastBinding(timeline: TimelineEntry[]): { device: string; epoch: string } | null {
  for (const e of [...timeline].reverse()) {
    const m = e.action === 'machine.phase.Bound' && e.reason ? /bound to (\S+) \(epoch (\d+)\)/.exec(e.reason) : null;
    if (m) return { device: m[1], epoch: m[2] };
  }
  return null;
}

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
  const canRelease = canEdit && m.phase !== 'Released' && !releaseRequested;
  const previous = m.deviceRef ? null : lastBinding(timeline);
  const interfaces = m.interfaces ?? [];

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
            {m.phaseReason ?? <span className="text-slate-400">No reason recorded</span>}
            {m.phaseChangedAt && <span className="text-xs text-slate-400"> · since {formatTime(toDate(m.phaseChangedAt))}</span>}
          </p>
        </div>
        {canRelease && (
          <Button variant="secondary" className="text-red-700!" onClick={() => setConfirmRelease(true)}>
            {m.phase === 'Pending' || m.phase === 'AwaitingApproval' ? 'Withdraw request' : 'Release'}
          </Button>
        )}
        {releaseRequested && m.phase !== 'Released' && (
          <p className="rounded-md bg-violet-50 px-3 py-1.5 text-sm text-violet-900 ring-1 ring-violet-200">Release requested {formatTime(toDate(m.deletionRequestedAt))}</p>
        )}
      </div>

      <Card>
        <ProgressStrip machine={m} timeline={timeline} />
        {m.phase === 'Failed' && (
          <div className="mt-3">
            <Alert testId="machine-failed">
              <strong>Failed:</strong> {m.phaseReason ?? 'no reason recorded'}. {canEdit && !releaseRequested && 'Release it to return its capacity, addresses and quota.'}
            </Alert>
          </div>
        )}
      </Card>

      <div className="grid gap-4 lg:grid-cols-3">
        <Card title="Allocation">
          {m.allocationId ? (
            <dl className="divide-y divide-slate-100" data-testid="allocation">
              <Row label="Device">
                <code className="font-mono text-sm font-semibold" data-testid="device-ref">
                  {m.deviceRef}
                </code>
              </Row>
              <Row label="Epoch">{mono(m.epoch)}</Row>
              <Row label="Binding id">{mono(m.allocationId)}</Row>
              <Row label="Status">{m.allocationStatus ?? '—'}</Row>
              <Row label="Capacity">{m.capacityState ? <CapacityStateBadge state={m.capacityState} /> : '—'}</Row>
            </dl>
          ) : (
            <div className="space-y-2 text-sm text-slate-600">
              <p>{m.phase === 'Released' ? 'No live allocation: the machine is released.' : m.phase === 'Failed' ? 'No live allocation.' : 'Not bound yet: a device is allocated after approval, when capacity is free.'}</p>
              {previous && (
                <p className="text-xs">
                  Last bound to <code className="font-mono">{previous.device}</code> (epoch {previous.epoch}).
                </p>
              )}
            </div>
          )}
        </Card>
        <Card title="Specification">
          <dl className="divide-y divide-slate-100">
            <Row label="Class">
              {m.class}
              {m.cores != null && (
                <span className="block text-xs text-slate-500">
                  {m.cores} cores · {m.memoryGib} GiB · {m.arch}
                </span>
              )}
            </Row>
            <Row label="Profile">
              {m.profile}
              {m.imageDigest && <span className="block truncate font-mono text-xs text-slate-500" title={m.imageDigest}>{m.imageDigest}</span>}
            </Row>
            <Row label="Location">{m.location}</Row>
            <Row label="Desired power">{m.desiredPower}</Row>
            <Row label="Requested">
              {formatTime(toDate(m.createdAt))}
              {m.createdBy && <span className="block text-xs text-slate-500">by {m.createdBy}</span>}
            </Row>
            {m.requiresApproval && <Row label="Approval">{m.approvedAt ? `approved ${formatTime(toDate(m.approvedAt))}` : 'required, not yet given'}</Row>}
          </dl>
        </Card>
        <Card title="Last operation">
          <div className="space-y-2 text-sm">
            <OperationSummary op={m.lastOperation as LastOperation | null} />
            {(m.lastOperation as LastOperation | null)?.lastError && <p className="text-xs text-red-700">{(m.lastOperation as LastOperation).lastError}</p>}
            {m.lastOperation && <p className="break-all font-mono text-xs text-slate-500">{(m.lastOperation as LastOperation).id}</p>}
            {!m.lastOperation && <p className="text-xs text-slate-500">Provider operations (install, power, cleanup) appear once the machine is bound.</p>}
          </div>
        </Card>
      </div>

      <Card title="Addresses">
        {interfaces.length === 0 ? (
          <p className="text-sm text-slate-500">No network interfaces were requested for this machine.</p>
        ) : (
          <div className="overflow-x-auto">
            <table className="min-w-full divide-y divide-slate-200 text-sm" aria-label="Addresses">
              <thead>
                <tr>
                  {['Interface', 'Network', 'Families', 'Address classes', 'Addresses', 'IP claims'].map((h) => (
                    <th key={h} scope="col" className="px-3 py-2 text-left text-xs font-semibold uppercase tracking-wide text-slate-500">
                      {h}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {interfaces.map((nic, i) => (
                  <tr key={i}>
                    <td className="px-3 py-2 text-slate-700">eth{i}</td>
                    <td className="px-3 py-2">
                      <Link href={`/projects/${project}/networks/${nic.network}`} className="font-medium text-brand-600 hover:underline">
                        {nic.network}
                      </Link>
                    </td>
                    <td className="px-3 py-2 text-slate-700">{nic.families.join(', ')}</td>
                    <td className="px-3 py-2 tabular-nums text-slate-700">{nic.addressClasses}</td>
                    <td className="px-3 py-2">
                      {nic.addresses.length ? (
                        <ul className="space-y-0.5">
                          {nic.addresses.map((a) => (
                            <li key={a}>
                              <code className="font-mono text-xs text-slate-800">{a}</code>
                            </li>
                          ))}
                        </ul>
                      ) : (
                        <span className="text-slate-400">—</span>
                      )}
                    </td>
                    <td className="px-3 py-2 font-mono text-xs text-slate-500">{nic.claims.join(', ') || '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {m.phase === 'Released' && <p className="mt-2 text-xs text-slate-500">Released: these claims were returned to their pools with the machine.</p>}
          </div>
        )}
      </Card>

      <Card title="Timeline">
        <MachineTimeline entries={timeline} />
      </Card>

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
              <code className="font-mono">{m.deviceRef}</code> is wiped by the provider; the wipe is verified before the device returns to the pool. Its addresses and the machine&apos;s quota are returned.
              Anything still running on it is lost.
            </p>
          ) : (
            <p>The request is withdrawn; its addresses and quota are returned.</p>
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}
