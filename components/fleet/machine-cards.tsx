import Link from 'next/link';
import type { ReactNode } from 'react';
import { Card, formatTime } from '@/components/ui/primitives';
import { toDate, type LastOperation, type MachineDetail, type TimelineEntry } from './format';
import { useExactStatusText } from './hooks';
import { CapacityStateBadge, OperationSummary } from './parts';
import { plainReason } from './plain-words';

/** A machine as its page shows it: the detail procedure's row with the columns it joins in. */
export type Machine = MachineDetail['machine'] & {
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

const mono = (value: unknown) =>
  value == null || value === '' ? <span className="text-slate-500">—</span> : <code className="font-mono text-xs">{String(value)}</code>;

/** The device and epoch of the last binding, from the Bound transition's reason (after a release the live allocation is gone). */
function lastBinding(timeline: TimelineEntry[]): { device: string; epoch: string } | null {
  for (const e of [...timeline].reverse()) {
    const m = e.action === 'machine.phase.Bound' && e.reason ? /bound to (\S+) \(epoch (\d+)\)/.exec(e.reason) : null;
    if (m) return { device: m[1], epoch: m[2] };
  }
  return null;
}

/** The live allocation (device, epoch, binding id), or why there is none and where it was last bound. */
export function AllocationCard({ machine: m, timeline }: { machine: Machine; timeline: TimelineEntry[] }) {
  const previous = m.deviceRef ? null : lastBinding(timeline);
  return (
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
          <p>
            {m.phase === 'Released'
              ? 'No live allocation: the machine is released.'
              : m.phase === 'Failed'
                ? 'No live allocation.'
                : 'Not bound yet: a device is allocated after approval, when capacity is free.'}
          </p>
          {previous && (
            <p className="text-xs">
              Last bound to <code className="font-mono">{previous.device}</code> (epoch {previous.epoch}).
            </p>
          )}
        </div>
      )}
    </Card>
  );
}

/** What was requested: class, profile (with its image digest), location, power, who asked and the approval. */
export function SpecificationCard({ machine: m }: { machine: Machine }) {
  return (
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
          {m.imageDigest && (
            <span className="block truncate font-mono text-xs text-slate-500" title={m.imageDigest}>
              {m.imageDigest}
            </span>
          )}
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
  );
}

/** The newest provider operation, with its error (in plain words for tenants). */
export function LastOperationCard({ machine: m }: { machine: Machine }) {
  const exact = useExactStatusText();
  const lastError = (m.lastOperation as LastOperation | null)?.lastError ?? null;
  return (
    <Card title="Last operation">
      <div className="space-y-2 text-sm">
        <OperationSummary op={m.lastOperation as LastOperation | null} />
        {lastError && <p className="text-xs text-red-700">{exact ? lastError : plainReason(lastError)}</p>}
        {m.lastOperation && <p className="break-all font-mono text-xs text-slate-500">{(m.lastOperation as LastOperation).id}</p>}
        {!m.lastOperation && <p className="text-xs text-slate-500">Provider operations (install, power, cleanup) appear once the machine is bound.</p>}
      </div>
    </Card>
  );
}

/** The machine's interfaces: network, families, address classes, the addresses and IP claims they hold. */
export function AddressesCard({ project, machine: m }: { project: string; machine: Machine }) {
  const interfaces = m.interfaces ?? [];
  return (
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
                      <span className="text-slate-500">—</span>
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
  );
}
