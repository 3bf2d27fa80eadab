import { StatusBadge } from '@/components/ui/status-badge';
import { AvailabilityMatrix } from './availability-matrix';
import type { Catalogue } from './format';

/**
 * The form's live availability: the matrix (choosing a cell picks class and location) and, for
 * the chosen pair, how many are free, why the location cannot take machines, or that the class
 * needs approval.
 */
export function RequestAvailability({
  catalogue: cat,
  checking,
  location,
  machineClass,
  onSelect,
}: {
  catalogue: Catalogue;
  /** Whether the matrix is being refetched. */
  checking: boolean;
  location: string;
  machineClass: string;
  onSelect: (choice: { location: string; class: string }) => void;
}) {
  const cls = cat.classes.find((c) => c.name === machineClass);
  const loc = cat.locations.find((l) => l.location === location);
  const cell = loc?.classes.find((c) => c.class === machineClass);
  return (
    <>
      <div>
        <div className="mb-1 flex items-baseline justify-between">
          <p className="text-sm font-medium text-slate-700">Availability</p>
          <span className="text-xs text-slate-500" title="Refreshed every few seconds while this form is open">
            live · {checking ? 'checking…' : 'free now'}
          </span>
        </div>
        <AvailabilityMatrix locations={cat.locations} classes={cat.classes} selected={{ location, class: machineClass }} onSelect={onSelect} />
      </div>
      <div data-testid="availability-summary" aria-live="polite" className="rounded-md border border-slate-200 bg-slate-50 px-3 py-2 text-sm">
        {!loc ? null : !loc.usable ? (
          <p className="text-red-800">
            <StatusBadge kind="location" state="Unavailable" /> {loc.reason}
          </p>
        ) : (
          <p className="text-slate-800">
            <strong>{machineClass}</strong> in <strong>{location}</strong>:{' '}
            {(cell?.free ?? 0) > 0 ? (
              <>
                <span className="font-semibold text-emerald-700">{cell!.free} free</span> of {cell!.total}.
              </>
            ) : (
              <span className="text-amber-800">none free now — the request waits in Pending and binds when one is released.</span>
            )}
            {cls?.requiresApproval && (
              <span className="mt-1 block text-xs text-amber-800">This class needs an operator&apos;s approval before a machine is allocated.</span>
            )}
          </p>
        )}
      </div>
    </>
  );
}
