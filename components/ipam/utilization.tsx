import { cx } from '@/components/ui/primitives';
import type { FamilyTotals } from '@/server/ipam/networks';
import { exactCount, formatCount, formatPercent, formatShare } from './format';

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

/** A segment's width as a share of the whole, with a sliver for any non-zero part (exact: bigint to 4 decimals). */
function share(part: string, whole: string, sliver: string) {
  const w = BigInt(whole);
  const p = BigInt(part);
  if (p === 0n || w === 0n) return '0%';
  return `max(${sliver}, ${Number((p * 1_000_000n) / w) / 10_000}%)`;
}

/**
 * One family's address space as a labelled meter: "IPv4 · 37.5% · 96 allocated · 10 reserved ·
 * 150 free of 256". The bar shows the allocated and the reserved parts of the whole space; the
 * meter's value is the utilization (allocated of the allocatable space, so 100% means nothing is
 * free). Exact counters go in the accessible value text and the tooltips.
 */
export function UtilizationBar({
  label,
  utilization,
  allocated,
  reserved,
  available,
  capacity,
  compact = false,
}: {
  label: string;
  utilization: number;
  allocated: string;
  reserved: string;
  available: string;
  capacity: string;
  compact?: boolean;
}) {
  const pct = Math.min(100, Math.max(0, utilization * 100));
  const hasReserved = reserved !== '0';
  // The share from the exact counters (allocated of the allocatable space), not the rounded ratio.
  const allocatable = (BigInt(capacity) - BigInt(reserved)).toString();
  const shareText = formatShare(allocated, allocatable);
  return (
    <div className="min-w-0">
      <div className={cx('flex items-baseline justify-between gap-2 text-xs', compact ? 'mb-0.5' : 'mb-1')}>
        <span className="font-medium text-slate-700">{label}</span>
        <span className="truncate text-slate-600" data-testid={`${label}-figures`}>
          <span className="font-medium text-slate-800" title={`${exactCount(allocated)} of ${exactCount(allocatable)} allocatable addresses`}>
            {shareText}
          </span>
          <span className="text-slate-500"> · </span>
          <Count value={allocated} /> <span className="text-slate-500">allocated</span>
          {hasReserved && (
            <>
              <span className="text-slate-500"> · </span>
              <Count value={reserved} /> <span className="text-slate-500">reserved</span>
            </>
          )}
          {!compact && (
            <>
              <span className="text-slate-500"> · </span>
              <Count value={available} /> <span className="text-slate-500">free</span>
            </>
          )}
          <span className="text-slate-500"> of </span>
          <Count value={capacity} />
        </span>
      </div>
      <div
        role="meter"
        aria-label={`${label} utilization`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Number(pct.toFixed(4))}
        aria-valuetext={`${shareText} (${exactCount(allocated)} allocated, ${exactCount(reserved)} reserved, ${exactCount(available)} free of ${exactCount(capacity)} addresses)`}
        className={cx('flex w-full overflow-hidden rounded-full bg-slate-100 ring-1 ring-inset ring-slate-200', compact ? 'h-1.5' : 'h-2.5')}
      >
        <div className={cx('h-full', barTone(utilization))} style={{ width: share(allocated, capacity, '3px') }} />
        {hasReserved && (
          <div className="h-full bg-slate-400" title={`${exactCount(reserved)} reserved addresses`} style={{ width: share(reserved, capacity, '2px') }} />
        )}
      </div>
    </div>
  );
}

/** A network's two families side by side; a family without pools says so instead of a bar. */
export function FamilyBars({ utilization, compact = false }: { utilization: Record<'IPv4' | 'IPv6', FamilyTotals | null>; compact?: boolean }) {
  return (
    <div className={cx('grid gap-x-6', compact ? 'gap-y-1.5' : 'gap-y-3', 'sm:grid-cols-2')}>
      {(['IPv4', 'IPv6'] as const).map((family) => {
        const u = utilization[family];
        return u ? (
          <UtilizationBar key={family} label={family} compact={compact} {...u} />
        ) : (
          <div key={family} className="text-xs text-slate-500">
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
