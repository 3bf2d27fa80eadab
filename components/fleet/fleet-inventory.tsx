'use client';
import { Badge, cx } from '@/components/ui/primitives';
import { capacityFill, capacityStates, type CapacityState, type CatalogueLocation, type InventoryRow } from './format';

/**
 * Capacity by location and class: totals per state (each opens the capacity list filtered to it),
 * and per cell how much is available, in which states and how much is unhealthy.
 */
export function Inventory({
  rows,
  locations,
  onShow,
}: {
  rows: InventoryRow[];
  locations: CatalogueLocation[];
  onShow: (state: CapacityState | '', location?: string) => void;
}) {
  const locs = [...new Set(rows.map((r) => r.location))];
  const classes = [...new Set(rows.map((r) => r.class))];
  const closedLocations = new Set(locations.filter((l) => !l.usable).map((l) => l.location));
  const totals = Object.fromEntries(capacityStates.map((s) => [s, rows.filter((r) => r.state === s).reduce((n, r) => n + r.count, 0)])) as Record<
    CapacityState,
    number
  >;
  // Devices in a location that takes no machines are not available, whatever their own state.
  const closedAvailable = rows.filter((r) => r.state === 'Available' && closedLocations.has(r.location)).reduce((n, r) => n + r.count, 0);
  totals.Available -= closedAvailable;
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
            className={cx(
              'inline-flex items-center gap-1.5 rounded-full px-2.5 py-0.5 ring-1 ring-inset ring-slate-200 hover:bg-slate-50',
              s === 'Quarantined' && totals[s] > 0 && 'bg-red-50 ring-red-200',
            )}
            title={`Show ${s.toLowerCase()} capacity`}
          >
            <span aria-hidden className={cx('inline-block h-2.5 w-2.5 rounded-sm', capacityFill[s])} />
            {s} <strong className="tabular-nums">{totals[s]}</strong>
          </button>
        ))}
        {closedAvailable > 0 && (
          <span className="text-slate-600" data-testid="closed-available">
            ({closedAvailable} idle in unavailable locations)
          </span>
        )}
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
                    const byState = capacityStates
                      .map((s) => ({ s, n: cell.filter((r) => r.state === s).reduce((n, r) => n + r.count, 0) }))
                      .filter((x) => x.n > 0);
                    const sick = cell.filter((r) => r.health !== 'Healthy').reduce((n, r) => n + r.count, 0);
                    // Machines in a location that takes no requests are not available, whatever their own state.
                    const closed = usability !== undefined && !usability.usable;
                    const available = closed ? 0 : (byState.find((x) => x.s === 'Available')?.n ?? 0);
                    return (
                      <td key={c} className="min-w-40 rounded-md bg-white p-2 align-top ring-1 ring-inset ring-slate-200">
                        {total === 0 ? (
                          <span className="text-xs text-slate-500">none</span>
                        ) : (
                          <button type="button" className="block w-full text-left" onClick={() => onShow('', l)} title={`Show capacity in ${l}`}>
                            <span className="flex items-baseline justify-between text-xs text-slate-600">
                              <span>
                                <strong className={cx('text-sm tabular-nums', closed || available === 0 ? 'text-red-700' : 'text-slate-900')}>
                                  {available}
                                </strong>{' '}
                                of {total} available{closed && <span className="text-red-700"> (location unavailable)</span>}
                              </span>
                              {sick > 0 && <Badge tone="red">{sick} unhealthy</Badge>}
                            </span>
                            <span
                              className={cx('mt-1 flex h-2 w-full overflow-hidden rounded-full bg-slate-100', closed && 'opacity-40 grayscale')}
                              role="img"
                              aria-label={byState.map((x) => `${x.n} ${x.s}`).join(', ')}
                            >
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
