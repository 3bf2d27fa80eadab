'use client';
import { StatusBadge } from '@/components/ui/status-badge';
import { cx } from '@/components/ui/primitives';
import type { CatalogueClass, CatalogueLocation } from './format';

/**
 * Free machines per location and class (healthy, available, fresh evidence), as the allocator
 * counts them. Each cell selects that location and class; a location that cannot take machines
 * is a disabled row that says why (the request would fail closed there).
 */
export function AvailabilityMatrix({
  locations,
  classes,
  selected,
  onSelect,
  disabled = false,
}: {
  locations: CatalogueLocation[];
  classes: CatalogueClass[];
  selected: { location: string; class: string };
  onSelect?: (choice: { location: string; class: string }) => void;
  disabled?: boolean;
}) {
  return (
    <div className="overflow-x-auto">
      <table className="w-full border-separate border-spacing-1 text-sm" aria-label="Availability matrix">
        <thead>
          <tr>
            <th scope="col" className="px-1 text-left text-xs font-semibold uppercase tracking-wide text-slate-500">
              Location
            </th>
            {classes.map((c) => (
              <th key={c.name} scope="col" className="px-1 text-center text-xs font-semibold text-slate-600">
                {c.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {locations.map((loc) => (
            <tr key={loc.location} data-testid={`availability-${loc.location}`} data-usable={loc.usable}>
              <th scope="row" className="whitespace-nowrap px-1 py-1 text-left align-middle font-medium text-slate-800">
                {loc.location}
                <span className="block text-xs font-normal text-slate-500">{loc.displayName}</span>
              </th>
              {loc.usable ? (
                classes.map((c) => {
                  const cell = loc.classes.find((x) => x.class === c.name);
                  const free = cell?.free ?? 0;
                  const total = cell?.total ?? 0;
                  const isSelected = selected.location === loc.location && selected.class === c.name;
                  const ratio = total ? free / total : 0;
                  return (
                    <td key={c.name} className="p-0">
                      <button
                        type="button"
                        disabled={disabled || total === 0}
                        aria-pressed={isSelected}
                        aria-label={`${c.name} in ${loc.location}: ${free} of ${total} free`}
                        onClick={() => onSelect?.({ location: loc.location, class: c.name })}
                        className={cx(
                          'flex w-full min-w-16 flex-col items-center rounded-md px-2 py-1.5 ring-1 ring-inset transition disabled:cursor-not-allowed',
                          isSelected ? 'bg-brand-50 ring-2 ring-brand-500' : 'bg-white ring-slate-200 hover:bg-slate-50 disabled:hover:bg-white',
                        )}
                      >
                        <span
                          className={cx(
                            'text-base font-semibold tabular-nums',
                            total === 0 ? 'text-slate-500' : free === 0 ? 'text-amber-700' : 'text-slate-900',
                          )}
                        >
                          {total === 0 ? '—' : free}
                        </span>
                        <span className="text-[11px] text-slate-500">{total === 0 ? 'none here' : `of ${total} free`}</span>
                        {total > 0 && (
                          <span className="mt-1 h-1 w-full overflow-hidden rounded-full bg-slate-100" aria-hidden>
                            <span
                              className={cx('block h-full rounded-full', ratio < 0.34 ? 'bg-amber-400' : 'bg-emerald-500')}
                              style={{ width: `${Math.max(free ? 8 : 0, ratio * 100)}%` }}
                            />
                          </span>
                        )}
                      </button>
                    </td>
                  );
                })
              ) : (
                <td
                  colSpan={classes.length}
                  className="rounded-md bg-slate-50 px-2 py-1.5 text-xs text-slate-600 ring-1 ring-inset ring-slate-200"
                  data-testid="location-unusable"
                >
                  <StatusBadge kind="location" state="Unavailable" /> {loc.reason}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
