'use client';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useTRPC } from '@/app/_trpc/client';
import { useDebounced } from '@/components/ipam/hooks';
import { useNow } from '@/components/simulator/controls';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Badge, Button, Card, EmptyState, Input, Select, cx, formatTime } from '@/components/ui/primitives';
import {
  ago,
  capacityFill,
  capacityStates,
  operationTone,
  toDate,
  type AllocationRow,
  type CapacityRow,
  type CapacityState,
  type CatalogueLocation,
  type InventoryRow,
  type OperationRow,
} from './format';
import { useInvalidateFleet } from './hooks';
import { SAFETY_REFETCH_MS, useFleetLive } from './live';
import { CapacityStateBadge, LiveIndicator, Pager, PhaseBadge, ReasonDialog } from './parts';
import { ALLOCATIONS_PAGE_SIZE, CAPACITY_PAGE_SIZE, allocationsInput, capacityInput, initialCapacityFilters, operationsInput, type CapacityFilters } from './queries';

/**
 * The operator's fleet page: inventory by location and class (state and health), the capacity
 * list with its actions (quarantine, return to pool, retire), live allocations (release, force
 * release) and provider operations that need attention. Everything updates live: each change in
 * the fleet refetches the tables it touches (see live.ts).
 */
export function FleetView() {
  const trpc = useTRPC();
  const [filters, setFilters] = useState<CapacityFilters>(initialCapacityFilters);
  const [searchText, setSearchText] = useState('');
  const search = useDebounced(searchText);
  useEffect(() => setFilters((f) => (f.search === search ? f : { ...f, search, offset: 0 })), [search]);
  const [allocOffset, setAllocOffset] = useState(0);
  const live = useFleetLive('operator');
  const refetchInterval = SAFETY_REFETCH_MS;

  const inventory = useQuery({ ...trpc.fleet.inventory.queryOptions(), refetchInterval });
  const catalogue = useQuery({ ...trpc.fleet.catalogue.queryOptions(), refetchInterval });
  const capacity = useQuery({ ...trpc.fleet.capacity.list.queryOptions(capacityInput(filters)), placeholderData: keepPreviousData, refetchInterval });
  const allocations = useQuery({ ...trpc.fleet.allocations.list.queryOptions(allocationsInput(allocOffset)), placeholderData: keepPreviousData, refetchInterval });
  const operations = useQuery({ ...trpc.fleet.operations.list.queryOptions(operationsInput), refetchInterval });

  const allocationRows = (allocations.data ?? []) as AllocationRow[];
  const operationRows = (operations.data ?? []) as OperationRow[];
  const inventoryRows = inventory.data ?? [];
  const fetching = inventory.isFetching || capacity.isFetching || allocations.isFetching || operations.isFetching;

  const showState = (state: CapacityState | '', location = '') => {
    setFilters((f) => ({ ...f, state, location: location || f.location, offset: 0 }));
    document.getElementById('capacity')?.scrollIntoView({ behavior: 'smooth', block: 'start' });
  };

  return (
    <div className="space-y-6">
      <Card title="Inventory by location and class" actions={<LiveIndicator state={live} fetching={fetching} />}>
        {inventory.error ? (
          <Alert testId="inventory-error">{errorMessage(inventory.error)}</Alert>
        ) : !inventory.data ? (
          <p className="text-sm text-slate-500">Loading inventory…</p>
        ) : inventoryRows.length === 0 ? (
          <EmptyState title="No capacity registered">Provider capacity records appear here grouped by location and class, with their state and health.</EmptyState>
        ) : (
          <Inventory rows={inventoryRows} locations={catalogue.data?.locations ?? []} onShow={showState} />
        )}
      </Card>

      <section id="capacity" className="scroll-mt-4">
        <CapacitySection
          data={capacity.data}
          error={capacity.error}
          placeholder={capacity.isPlaceholderData}
          filters={filters}
          searchText={searchText}
          onSearch={setSearchText}
          onFilters={(patch) => setFilters((f) => ({ ...f, ...patch, offset: patch.offset ?? 0 }))}
          locations={[...new Set(inventoryRows.map((r) => r.location))]}
        />
      </section>

      <AllocationsSection rows={allocationRows} error={allocations.error} offset={allocOffset} onOffset={setAllocOffset} />

      <OperationsSection rows={operationRows} error={operations.error} />
    </div>
  );
}

// ---- Inventory --------------------------------------------------------------------------------

function Inventory({ rows, locations, onShow }: { rows: InventoryRow[]; locations: CatalogueLocation[]; onShow: (state: CapacityState | '', location?: string) => void }) {
  const locs = [...new Set(rows.map((r) => r.location))];
  const classes = [...new Set(rows.map((r) => r.class))];
  const totals = Object.fromEntries(capacityStates.map((s) => [s, rows.filter((r) => r.state === s).reduce((n, r) => n + r.count, 0)])) as Record<CapacityState, number>;
  const unhealthy = rows.filter((r) => r.health !== 'Healthy').reduce((n, r) => n + r.count, 0);
  const all = rows.reduce((n, r) => n + r.count, 0);
  return (
    <div className="space-y-4">
      <div role="group" className="flex flex-wrap items-center gap-2 text-sm" aria-label="Capacity by state">
        <span className="mr-1 text-slate-600">
          <strong className="tabular-nums text-slate-900">{all}</strong> machines:
        </span>
        {capacityStates.map((s) => (
          <button
            key={s}
            type="button"
            onClick={() => onShow(s)}
            data-testid={`state-total-${s}`}
            className={cx('inline-flex items-center gap-1.5 rounded-full px-2.5 py-0.5 ring-1 ring-inset ring-slate-200 hover:bg-slate-50', s === 'Quarantined' && totals[s] > 0 && 'bg-red-50 ring-red-200')}
            title={`Show ${s.toLowerCase()} capacity`}
          >
            <span aria-hidden className={cx('inline-block h-2.5 w-2.5 rounded-sm', capacityFill[s])} />
            {s} <strong className="tabular-nums">{totals[s]}</strong>
          </button>
        ))}
        {unhealthy > 0 && <Badge tone="red">{unhealthy} not healthy</Badge>}
      </div>
      <div className="overflow-x-auto">
        <table className="w-full border-separate border-spacing-1 text-sm" aria-label="Inventory">
          <thead>
            <tr>
              <th scope="col" className="px-1 text-left text-xs font-semibold uppercase tracking-wide text-slate-500">
                Location
              </th>
              {classes.map((c) => (
                <th key={c} scope="col" className="px-1 text-left text-xs font-semibold text-slate-600">
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {locs.map((l) => {
              const usability = locations.find((x) => x.location === l);
              return (
                <tr key={l} data-testid={`inventory-${l}`}>
                  <th scope="row" className="w-40 px-1 py-1 text-left align-top font-medium text-slate-800">
                    {l}
                    {usability && !usability.usable && (
                      <span className="mt-0.5 block text-xs font-normal text-red-700" title={usability.reason ?? undefined}>
                        Unavailable: {usability.reason}
                      </span>
                    )}
                  </th>
                  {classes.map((c) => {
                    const cell = rows.filter((r) => r.location === l && r.class === c);
                    const total = cell.reduce((n, r) => n + r.count, 0);
                    const byState = capacityStates.map((s) => ({ s, n: cell.filter((r) => r.state === s).reduce((n, r) => n + r.count, 0) })).filter((x) => x.n > 0);
                    const sick = cell.filter((r) => r.health !== 'Healthy').reduce((n, r) => n + r.count, 0);
                    return (
                      <td key={c} className="min-w-40 rounded-md bg-white p-2 align-top ring-1 ring-inset ring-slate-200">
                        {total === 0 ? (
                          <span className="text-xs text-slate-300">none</span>
                        ) : (
                          <button type="button" className="block w-full text-left" onClick={() => onShow('', l)} title={`Show capacity in ${l}`}>
                            <span className="flex items-baseline justify-between text-xs text-slate-600">
                              <span>
                                <strong className="text-sm tabular-nums text-slate-900">{byState.find((x) => x.s === 'Available')?.n ?? 0}</strong> of {total} available
                              </span>
                              {sick > 0 && <Badge tone="red">{sick} unhealthy</Badge>}
                            </span>
                            <span className="mt-1 flex h-2 w-full overflow-hidden rounded-full bg-slate-100" role="img" aria-label={byState.map((x) => `${x.n} ${x.s}`).join(', ')}>
                              {byState.map((x) => (
                                <span key={x.s} className={cx('h-full', capacityFill[x.s])} style={{ width: `${(x.n / total) * 100}%` }} />
                              ))}
                            </span>
                            <span className="mt-1 block text-[11px] text-slate-500">{byState.map((x) => `${x.n} ${x.s.toLowerCase()}`).join(' · ')}</span>
                          </button>
                        )}
                      </td>
                    );
                  })}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </div>
  );
}

// ---- Capacity ---------------------------------------------------------------------------------

type CapacityAction = 'quarantine' | 'returnToPool' | 'retire';
const actionLabels: Record<CapacityAction, string> = { quarantine: 'Quarantine', returnToPool: 'Return to pool', retire: 'Retire' };
const actionHelp: Record<CapacityAction, string> = {
  quarantine: 'No new machine is bound to it until an operator returns it to the pool.',
  returnToPool:
    'The provider wipes it again and the wipe is verified before it is Available (the oldest request waiting for this class and location is then woken); if the wipe fails it stays quarantined with the reason.',
  retire: 'It leaves the fleet for good; it is no longer offered or counted as capacity.',
};

const forceHelp = 'It becomes Available at once, without a wipe by the provider: only when the device is known to be clean. Recorded in the audit log as forced, with your reason.';

function CapacitySection({
  data,
  error,
  placeholder,
  filters,
  searchText,
  onSearch,
  onFilters,
  locations,
}: {
  data: { items: CapacityRow[]; total: number } | undefined;
  error: unknown;
  placeholder: boolean;
  filters: CapacityFilters;
  searchText: string;
  onSearch: (text: string) => void;
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
          <div className="w-44">
            <Input type="search" aria-label="Search devices" placeholder="Device ref" value={searchText} onChange={(e) => onSearch(e.target.value)} />
          </div>
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
                const actions: CapacityAction[] = c.state === 'Available' ? ['quarantine', 'retire'] : c.state === 'Quarantined' ? ['returnToPool', 'retire'] : [];
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
                    <td className="px-3 py-2">{c.health === 'Healthy' ? <span className="text-slate-700">Healthy</span> : <Badge tone="red">{c.health}</Badge>}</td>
                    <td className="whitespace-nowrap px-3 py-2 text-xs text-slate-600" title={`observed ${toDate(c.observedAt)?.toISOString() ?? '—'}`} suppressHydrationWarning>
                      {c.available ? 'available' : <span className="text-red-700">not available</span>} · {ago(c.observedAt, now)}
                    </td>
                    <td className="px-3 py-2 font-mono text-xs tabular-nums text-slate-700">{String(c.assetEpoch)}</td>
                    <td className="px-3 py-2 text-xs text-slate-700">{c.machine ? `${c.project}/${c.machine}` : <span className="text-slate-400">—</span>}</td>
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
      <Pager label="Capacity pages" offset={filters.offset} count={items.length} pageSize={CAPACITY_PAGE_SIZE} total={total} hasNext={filters.offset + items.length < total} onChange={(offset) => onFilters({ offset })} />
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
          onConfirm={(reason) => act.mutate({ id: acting.row.id, action: acting.action, reason, force: acting.action === 'returnToPool' && force }, { onSuccess: () => setForce(false) })}
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

// ---- Allocations ------------------------------------------------------------------------------

function AllocationsSection({ rows, error, offset, onOffset }: { rows: AllocationRow[]; error: unknown; offset: number; onOffset: (offset: number) => void }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateFleet();
  const now = useNow(5_000);
  const [acting, setActing] = useState<{ row: AllocationRow; force: boolean } | null>(null);
  const onSuccess = () => {
    setActing(null);
    void invalidate();
  };
  const release = useMutation(trpc.fleet.allocations.release.mutationOptions({ onSuccess }));
  const forceRelease = useMutation(trpc.fleet.allocations.forceRelease.mutationOptions({ onSuccess }));
  const mutation = acting?.force ? forceRelease : release;
  const items = rows.slice(0, ALLOCATIONS_PAGE_SIZE);
  return (
    <Card title="Live allocations">
      {error != null && <Alert testId="allocations-error">{errorMessage(error)}</Alert>}
      {items.length === 0 && offset === 0 ? (
        <EmptyState title="No live allocations">Machines bound to a device appear here with their binding epoch; release them, or force a release when the provider cannot clean up.</EmptyState>
      ) : (
        <div className="overflow-x-auto rounded-md border border-slate-200">
          <table className="min-w-full divide-y divide-slate-200 text-sm" aria-label="Live allocations">
            <thead className="bg-slate-50">
              <tr>
                {['Machine', 'Device', 'Epoch', 'Binding', 'Phase', 'Since', ''].map((h, i) => (
                  <th key={i} scope="col" className="px-3 py-2 text-left text-xs font-semibold uppercase tracking-wide text-slate-500">
                    {h || <span className="sr-only">Actions</span>}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100 bg-white">
              {items.map((a) => {
                const releasing = a.status === 'Releasing' || a.phase === 'Releasing';
                return (
                  <tr key={a.id} data-testid="allocation-row">
                    <td className="px-3 py-2">
                      <span className="font-medium text-slate-900">{a.machine}</span>
                      <span className="block text-xs text-slate-500">{a.project}</span>
                    </td>
                    <td className="px-3 py-2">
                      <code className="font-mono text-xs">{a.deviceRef}</code>
                    </td>
                    <td className="px-3 py-2 font-mono text-xs tabular-nums">{String(a.epoch)}</td>
                    <td className="px-3 py-2 text-xs text-slate-700">
                      {a.status}
                      <span className="block font-mono text-slate-400" title={a.id}>
                        {a.id.slice(0, 8)}…
                      </span>
                    </td>
                    <td className="px-3 py-2">
                      <PhaseBadge phase={a.phase} />
                    </td>
                    <td className="whitespace-nowrap px-3 py-2 text-xs text-slate-600" title={toDate(a.createdAt)?.toISOString()} suppressHydrationWarning>
                      {ago(a.createdAt, now)}
                    </td>
                    <td className="whitespace-nowrap px-3 py-1.5 text-right">
                      <div className="flex justify-end gap-1.5">
                        <Button variant="secondary" className="px-2 py-1 text-xs" disabled={releasing} aria-label={`Release ${a.machine}`} onClick={() => setActing({ row: a, force: false })}>
                          Release
                        </Button>
                        <Button variant="secondary" className="px-2 py-1 text-xs text-red-700!" aria-label={`Force release ${a.machine}`} onClick={() => setActing({ row: a, force: true })}>
                          Force release
                        </Button>
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager label="Allocation pages" offset={offset} count={items.length} pageSize={ALLOCATIONS_PAGE_SIZE} hasNext={rows.length > ALLOCATIONS_PAGE_SIZE} onChange={onOffset} />
      {acting && (
        <ReasonDialog
          title={`${acting.force ? 'Force release' : 'Release'} ${acting.row.project}/${acting.row.machine}?`}
          confirmLabel={acting.force ? 'Force release' : 'Release'}
          required={acting.force}
          placeholder={acting.force ? 'e.g. the provider lost the device; cleanup cannot run' : 'e.g. tenant asked by ticket'}
          pending={mutation.isPending}
          error={mutation.error ? errorMessage(mutation.error) : null}
          onCancel={() => {
            setActing(null);
            release.reset();
            forceRelease.reset();
          }}
          onConfirm={(reason) => (acting.force ? forceRelease : release).mutate({ machineId: acting.row.machineId, reason })}
        >
          {acting.force ? (
            <p>
              The binding to <code className="font-mono">{acting.row.deviceRef}</code> ends now, without waiting for the provider. The device cannot be verified clean, so it is <strong>quarantined</strong>; the
              machine ends Failed (or Released if it never bound).
            </p>
          ) : (
            <p>
              The machine is released as if the tenant had asked: <code className="font-mono">{acting.row.deviceRef}</code> is cleaned by the provider and verified before it returns to the pool.
            </p>
          )}
        </ReasonDialog>
      )}
    </Card>
  );
}

// ---- Operations -------------------------------------------------------------------------------

function OperationsSection({ rows, error }: { rows: OperationRow[]; error: unknown }) {
  const now = useNow(5_000);
  const trpc = useTRPC();
  const invalidate = useInvalidateFleet();
  const [acknowledging, setAcknowledging] = useState<OperationRow | null>(null);
  const acknowledge = useMutation(
    trpc.fleet.operations.acknowledge.mutationOptions({
      onSuccess: () => {
        setAcknowledging(null);
        void invalidate();
      },
    }),
  );
  const unknown = rows.filter((o) => o.state === 'Unknown').length;
  const failed = rows.filter((o) => o.state === 'Failed').length;
  return (
    <Card
      title="Provider operations needing attention"
      actions={
        rows.length > 0 && (
          <span className="flex gap-1.5">
            {unknown > 0 && <Badge tone="amber">{unknown} unknown</Badge>}
            {failed > 0 && <Badge tone="red">{failed} failed</Badge>}
          </span>
        )
      }
    >
      {error != null && <Alert testId="operations-error">{errorMessage(error)}</Alert>}
      {rows.length === 0 ? (
        <EmptyState title="Nothing needs attention">
          Provider operations whose outcome is Unknown (a lost response or timeout, being resolved by lookup), that failed, or that are still running appear here. They leave once resolved (a retry succeeded, or
          the device was verified clean since) or acknowledged by an operator with a note.
        </EmptyState>
      ) : (
        <div className="overflow-x-auto rounded-md border border-slate-200">
          <table className="min-w-full divide-y divide-slate-200 text-sm" aria-label="Provider operations">
            <thead className="bg-slate-50">
              <tr>
                {['Operation', 'State', 'Retries', 'Last error', 'Device', 'Machine', 'Epoch / fence', 'Updated', ''].map((h, i) => (
                  <th key={i} scope="col" className="px-3 py-2 text-left text-xs font-semibold uppercase tracking-wide text-slate-500">
                    {h || <span className="sr-only">Actions</span>}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100 bg-white">
              {rows.map((o) => (
                <tr key={o.id} data-testid="operation-row">
                  <td className="px-3 py-2">
                    <span className="font-medium text-slate-900">{o.kind}</span>
                    <span className="block max-w-56 truncate font-mono text-xs text-slate-500" title={o.id}>
                      {o.id}
                    </span>
                  </td>
                  <td className="px-3 py-2">
                    <Badge tone={operationTone(o.state)}>{o.state}</Badge>
                  </td>
                  <td className="px-3 py-2 tabular-nums text-slate-700" title="Outcomes that came back Unknown and were looked up again">
                    {o.attempts}
                  </td>
                  <td className="max-w-72 px-3 py-2 text-xs text-red-800">{o.lastError ?? <span className="text-slate-400">—</span>}</td>
                  <td className="px-3 py-2">
                    <code className="font-mono text-xs">{o.deviceRef}</code>
                  </td>
                  <td className="px-3 py-2 text-xs text-slate-700">{o.machine ? `${o.project}/${o.machine}` : '—'}</td>
                  <td className="px-3 py-2 font-mono text-xs tabular-nums text-slate-600">
                    {String(o.epoch)} / {String(o.fencingToken)}
                  </td>
                  <td className="whitespace-nowrap px-3 py-2 text-xs text-slate-600" title={formatTime(toDate(o.updatedAt))} suppressHydrationWarning>
                    {ago(o.updatedAt, now)}
                  </td>
                  <td className="whitespace-nowrap px-3 py-1.5 text-right">
                    <Button variant="secondary" className="px-2 py-1 text-xs" aria-label={`Acknowledge ${o.id}`} onClick={() => setAcknowledging(o)}>
                      Acknowledge
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {acknowledging && (
        <ReasonDialog
          title={`Acknowledge ${acknowledging.kind} on ${acknowledging.deviceRef}?`}
          confirmLabel="Acknowledge"
          fieldLabel="Note"
          tone="primary"
          placeholder="e.g. known provider incident, device replaced (ticket OPS-1234)"
          pending={acknowledge.isPending}
          error={acknowledge.error ? errorMessage(acknowledge.error) : null}
          onCancel={() => {
            setAcknowledging(null);
            acknowledge.reset();
          }}
          onConfirm={(note) => acknowledge.mutate({ id: acknowledging.id, note })}
        >
          <p>
            <code className="font-mono">{acknowledging.id}</code> is {acknowledging.state}
            {acknowledging.lastError ? `: ${acknowledging.lastError}` : ''}. Acknowledged, it leaves this list; your note is recorded in the audit log.
          </p>
        </ReasonDialog>
      )}
    </Card>
  );
}
