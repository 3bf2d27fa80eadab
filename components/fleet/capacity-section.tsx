'use client';
import { deviceHealth } from '@/components/ui/status';
import { StatusBadge } from '@/components/ui/status-badge';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { useNow } from '@/components/ui/hooks';
import { Pager } from '@/components/ui/pager';
import { Alert, Button, Card, EmptyState, Select, cx } from '@/components/ui/primitives';
import { ReasonDialog } from '@/components/ui/reason-dialog';
import { SearchBox, type SearchText } from '@/components/ui/search-box';
import { ago, capacityStates, toDate, type CapacityRow } from './format';
import { useInvalidateFleet } from './hooks';
import { CapacityStateBadge } from './parts';
import { CAPACITY_PAGE_SIZE, type CapacityFilters } from './queries';

type CapacityAction = 'quarantine' | 'returnToPool' | 'retire';
const actionLabels: Record<CapacityAction, string> = { quarantine: 'Quarantine', returnToPool: 'Return to pool', retire: 'Retire' };
const actionHelp: Record<CapacityAction, string> = {
  quarantine: 'No new machine is bound to it until an operator returns it to the pool.',
  returnToPool:
    'The provider wipes it again and the wipe is verified before it is Available (the oldest request waiting for this class and location is then woken); if the wipe fails it stays quarantined with the reason.',
  retire: 'It leaves the fleet for good; it is no longer offered or counted as capacity.',
};

const forceHelp =
  'It becomes Available at once, without a wipe by the provider: only when the device is known to be clean. Recorded in the audit log as forced, with your reason.';

/**
 * The capacity list, filtered by state, location and device search on the server, with the
 * operator's actions on each device: quarantine; return to pool (forced, without the provider's
 * wipe, when the device is known clean); retire.
 */
export function CapacitySection({
  data,
  error,
  placeholder,
  filters,
  search,
  onFilters,
  locations,
}: {
  data: { items: CapacityRow[]; total: number } | undefined;
  error: unknown;
  placeholder: boolean;
  filters: CapacityFilters;
  /** The device search; its settled text is in `filters.search`. */
  search: SearchText;
  onFilters: (patch: Partial<CapacityFilters>) => void;
  locations: string[];
}) {
  const trpc = useTRPC();
  const invalidate = useInvalidateFleet();
  const now = useNow(5_000);
  const [acting, setActing] = useState<{ row: CapacityRow; action: CapacityAction } | null>(null);
  const [force, setForce] = useState(false);
  const act = useMutation(
    trpc.fleet.capacity.act.mutationOptions({
      onSuccess: () => {
        setActing(null);
        void invalidate();
      },
    }),
  );
  const items = data?.items ?? [];
  const total = data?.total ?? 0;
  const filtered = filters.state !== '' || filters.location !== '' || filters.search !== '';

  return (
    <Card
      title="Capacity"
      actions={
        <div className="flex flex-wrap gap-2">
          <div className="w-36">
            <Select aria-label="Capacity state" value={filters.state} onChange={(e) => onFilters({ state: e.target.value as CapacityFilters['state'] })}>
              <option value="">All states</option>
              {capacityStates.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </Select>
          </div>
          <div className="w-36">
            <Select aria-label="Capacity location" value={filters.location} onChange={(e) => onFilters({ location: e.target.value })}>
              <option value="">All locations</option>
              {locations.map((l) => (
                <option key={l} value={l}>
                  {l}
                </option>
              ))}
            </Select>
          </div>
          <SearchBox label="Search devices" placeholder="Device ref" search={search} className="w-44" />
        </div>
      }
    >
      {error != null && <Alert testId="capacity-error">{errorMessage(error)}</Alert>}
      {data && items.length === 0 ? (
        <EmptyState title={filtered ? 'No capacity matches' : 'No capacity registered'}>
          {filtered ? 'No device matches the state, location or search.' : 'Provider capacity records appear here with their state, health and evidence.'}
        </EmptyState>
      ) : (
        <div className="overflow-x-auto rounded-md border border-slate-200">
          <table className="min-w-full divide-y divide-slate-200 text-sm" aria-label="Capacity">
            <thead className="bg-slate-50">
              <tr>
                {['Device', 'Location', 'Class', 'State', 'Health', 'Evidence', 'Epoch', 'Bound to', ''].map((h, i) => (
                  <th key={i} scope="col" className="px-3 py-2 text-left text-xs font-semibold uppercase tracking-wide text-slate-500">
                    {h || <span className="sr-only">Actions</span>}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody className={cx('divide-y divide-slate-100 bg-white', placeholder && 'opacity-60')}>
              {items.map((c) => {
                const actions: CapacityAction[] =
                  c.state === 'Available' ? ['quarantine', 'retire'] : c.state === 'Quarantined' ? ['returnToPool', 'retire'] : [];
                return (
                  <tr key={c.id} data-testid="capacity-row" className={c.state === 'Quarantined' ? 'bg-red-50/50' : undefined}>
                    <td className="whitespace-nowrap px-3 py-2">
                      <code className="font-mono text-xs font-semibold text-slate-900">{c.deviceRef}</code>
                    </td>
                    <td className="px-3 py-2 text-slate-700">{c.location}</td>
                    <td className="px-3 py-2 text-slate-700">{c.class}</td>
                    <td className="max-w-64 px-3 py-2">
                      <CapacityStateBadge state={c.state} />
                      {c.stateReason && (
                        <span className="mt-0.5 block text-xs text-slate-600" title={c.stateReason}>
                          {c.stateReason}
                        </span>
                      )}
                    </td>
                    <td className="px-3 py-2">
                      <HealthCell health={c.health} state={c.state} failedInstalls={c.failedInstalls} />
                    </td>
                    <td
                      className="px-3 py-2 text-xs text-slate-600"
                      data-testid="capacity-evidence"
                      title={`the provider last reported it ${c.available ? 'available' : 'not available'} ${toDate(c.observedAt)?.toISOString() ?? '—'}; its state changed ${toDate(c.updatedAt)?.toISOString() ?? '—'}`}
                      suppressHydrationWarning
                    >
                      <Evidence row={c} now={now} />
                    </td>
                    <td className="px-3 py-2 font-mono text-xs tabular-nums text-slate-700">{String(c.assetEpoch)}</td>
                    <td className="px-3 py-2 text-xs text-slate-700">{c.machine ? `${c.project}/${c.machine}` : <span className="text-slate-500">—</span>}</td>
                    <td className="whitespace-nowrap px-3 py-1.5 text-right">
                      <div className="flex justify-end gap-1.5">
                        {actions.map((a) => (
                          <Button
                            key={a}
                            variant="secondary"
                            className={cx('px-2 py-1 text-xs', a !== 'returnToPool' && 'text-red-700!')}
                            aria-label={`${actionLabels[a]} ${c.deviceRef}`}
                            onClick={() => setActing({ row: c, action: a })}
                          >
                            {actionLabels[a]}
                          </Button>
                        ))}
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        label="Capacity pages"
        offset={filters.offset}
        count={items.length}
        pageSize={CAPACITY_PAGE_SIZE}
        total={total}
        hasNext={filters.offset + items.length < total}
        onChange={(offset) => onFilters({ offset })}
      />
      {acting && (
        <ReasonDialog
          title={`${actionLabels[acting.action]} ${acting.row.deviceRef}?`}
          confirmLabel={acting.action === 'returnToPool' && force ? 'Force return to pool' : actionLabels[acting.action]}
          tone={acting.action === 'returnToPool' && !force ? 'primary' : 'danger'}
          required={acting.action !== 'returnToPool' || force}
          placeholder={acting.action === 'returnToPool' ? 'e.g. wiped and inspected by hand, ticket OPS-1234' : 'e.g. failing disk reported by the provider'}
          pending={act.isPending}
          error={act.error ? errorMessage(act.error) : null}
          onCancel={() => {
            setActing(null);
            setForce(false);
            act.reset();
          }}
          onConfirm={(reason) =>
            act.mutate(
              { id: acting.row.id, action: acting.action, reason, force: acting.action === 'returnToPool' && force },
              { onSuccess: () => setForce(false) },
            )
          }
        >
          <p>
            <code className="font-mono">{acting.row.deviceRef}</code> ({acting.row.class}, {acting.row.location}) is {acting.row.state}
            {acting.row.stateReason ? `: ${acting.row.stateReason}` : ''}. {force && acting.action === 'returnToPool' ? forceHelp : actionHelp[acting.action]}
          </p>
          {acting.action === 'returnToPool' && (
            <label className="mt-3 flex items-start gap-2">
              <input type="checkbox" className="mt-0.5" checked={force} onChange={(e) => setForce(e.target.checked)} />
              <span>Force: return it without the provider&apos;s wipe (a reason is required)</span>
            </label>
          )}
        </ReasonDialog>
      )}
    </Card>
  );
}

/**
 * A device's health as people should read it: the provider's last health report, except that a
 * quarantined device is not called healthy (it is quarantined because something about it — a
 * failed wipe, an operator's doubt — is not known to be right).
 */
/**
 * The device's health as the provider reports it, and beside it what installs on it showed: a
 * device whose installs keep failing is not shown as simply healthy.
 */
function HealthCell({ health, state, failedInstalls }: { health: string; state: string; failedInstalls: number }) {
  return (
    <span className="flex flex-col items-start gap-0.5">
      <StatusBadge status={deviceHealth(health, state)} />
      {failedInstalls > 0 && (
        <span className="text-xs text-red-700" data-testid="capacity-failed-installs">
          {failedInstalls === 1 ? 'an install failed on it' : `${failedInstalls} installs failed on it`} since its last good one
        </span>
      )}
    </span>
  );
}

/**
 * What is known of the device's availability, agreeing with its state: a device in a location that
 * takes no machines is not available whatever the provider said; a bound, cleaning, quarantined or
 * retired one is not free, and shows since when; only an Available device in an open location
 * shows the provider's availability evidence and its age.
 */
function Evidence({ row, now }: { row: CapacityRow; now: number }) {
  if (row.locationUnavailable) return <span className="text-red-700">location unavailable: {row.locationUnavailable}</span>;
  if (row.state !== 'Available') return <span>{`${row.state.toLowerCase()} since ${ago(row.updatedAt, now)}`}</span>;
  if (!row.available) return <span className="text-red-700">provider reports it not available · {ago(row.observedAt, now)}</span>;
  return <span>{`free · provider confirmed ${ago(row.observedAt, now)}`}</span>;
}
