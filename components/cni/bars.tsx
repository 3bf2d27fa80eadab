import { cx } from '@/components/ui/primitives';
import { formatPercent } from '@/components/ipam/format';

function tone(ratio: number) {
  if (ratio >= 0.9) return 'bg-red-500';
  if (ratio >= 0.7) return 'bg-amber-500';
  return 'bg-brand-500';
}

/**
 * A small bar with its number beside it. `max` is what a full bar means (the block capacity for
 * leases, the largest row for a ranking); `fill` colours by how full it is, not by rank.
 */
export function CountBar({ label, value, max, fill = false, suffix }: { label: string; value: number; max: number; fill?: boolean; suffix?: string }) {
  const ratio = max > 0 ? Math.min(1, value / max) : 0;
  const pct = ratio * 100;
  return (
    <div className="flex items-center gap-2">
      <div
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={max}
        aria-valuenow={value}
        aria-valuetext={fill ? `${value.toLocaleString('en-US')} of ${max.toLocaleString('en-US')} (${formatPercent(ratio)})` : value.toLocaleString('en-US')}
        className="h-1.5 w-20 shrink-0 overflow-hidden rounded-full bg-slate-100 ring-1 ring-inset ring-slate-200"
      >
        <div className={cx('h-full', fill ? tone(ratio) : 'bg-brand-500')} style={{ width: pct === 0 ? '0%' : `max(2px, ${pct}%)` }} />
      </div>
      <span className="tabular-nums text-xs text-slate-700">
        {value.toLocaleString('en-US')}
        {suffix && <span className="text-slate-500"> {suffix}</span>}
      </span>
    </div>
  );
}
