import { cx } from '@/components/ui/primitives';
import { exactCount, formatCount, formatPercent } from './format';

/** An exact count shown readably, with the exact value in the tooltip. */
export function Count({ value, className }: { value: string; className?: string }) {
  return (
    <span title={`${exactCount(value)} addresses`} className={cx('tabular-nums', className)}>
      {formatCount(value)}
    </span>
  );
}

function barTone(ratio: number) {
  if (ratio >= 0.9) return 'bg-red-500';
  if (ratio >= 0.7) return 'bg-amber-500';
  return 'bg-brand-500';
}

/**
 * One family's utilization as a labelled meter: "IPv4 · 37.5% · 96 of 256". Exact counters go in
 * the accessible value text and the tooltip; a tiny non-zero use still shows a sliver.
 */
export function UtilizationBar({
  label,
  utilization,
  allocated,
  capacity,
  compact = false,
}: {
  label: string;
  utilization: number;
  allocated: string;
  capacity: string;
  compact?: boolean;
}) {
  const pct = Math.min(100, Math.max(0, utilization * 100));
  const width = pct === 0 ? '0%' : `max(3px, ${pct}%)`;
  return (
    <div className="min-w-0">
      <div className={cx('flex items-baseline justify-between gap-2 text-xs', compact ? 'mb-0.5' : 'mb-1')}>
        <span className="font-medium text-slate-700">{label}</span>
        <span className="truncate text-slate-600">
          <span className="font-medium text-slate-800">{formatPercent(utilization)}</span>
          <span className="text-slate-400"> · </span>
          <Count value={allocated} /> <span className="text-slate-400">of</span> <Count value={capacity} />
        </span>
      </div>
      <div
        role="meter"
        aria-label={`${label} utilization`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Number(pct.toFixed(4))}
        aria-valuetext={`${formatPercent(utilization)} (${exactCount(allocated)} of ${exactCount(capacity)} addresses allocated)`}
        className={cx('w-full overflow-hidden rounded-full bg-slate-100 ring-1 ring-inset ring-slate-200', compact ? 'h-1.5' : 'h-2.5')}
      >
        <div className={cx('h-full rounded-full', barTone(utilization))} style={{ width }} />
      </div>
    </div>
  );
}

/** A network's two families side by side; a family without pools says so instead of a bar. */
export function FamilyBars({
  utilization,
  compact = false,
}: {
  utilization: Record<'IPv4' | 'IPv6', { capacity: string; allocated: string; utilization: number } | null>;
  compact?: boolean;
}) {
  return (
    <div className={cx('grid gap-x-6', compact ? 'gap-y-1.5' : 'gap-y-3', 'sm:grid-cols-2')}>
      {(['IPv4', 'IPv6'] as const).map((family) => {
        const u = utilization[family];
        return u ? (
          <UtilizationBar key={family} label={family} compact={compact} {...u} />
        ) : (
          <div key={family} className="text-xs text-slate-400">
            <span className="font-medium text-slate-500">{family}</span> · no {family} range
          </div>
        );
      })}
    </div>
  );
}

/** The small bar used in table cells (pool rows). */
export function MiniBar({ label, utilization }: { label: string; utilization: number }) {
  const pct = Math.min(100, Math.max(0, utilization * 100));
  return (
    <div className="flex items-center gap-2">
      <div
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Number(pct.toFixed(4))}
        aria-valuetext={formatPercent(utilization)}
        className="h-1.5 w-20 shrink-0 overflow-hidden rounded-full bg-slate-100 ring-1 ring-inset ring-slate-200"
      >
        <div className={cx('h-full', barTone(utilization))} style={{ width: pct === 0 ? '0%' : `max(2px, ${pct}%)` }} />
      </div>
      <span className="tabular-nums text-xs text-slate-600">{formatPercent(utilization)}</span>
    </div>
  );
}
