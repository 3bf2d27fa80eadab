import { cx } from '@/components/ui/primitives';
import { exactCount, formatCount } from '@/components/ui/numbers';
import { resourceName } from './resource-names';

/** Bar colour by how full a bucket is: red at (or over) its limit, amber from 80 %. */
export function quotaTone(limit: number, allocated: number): 'red' | 'amber' | 'ok' {
  if (allocated >= limit) return 'red';
  return allocated / limit >= 0.8 ? 'amber' : 'ok';
}

const fill = { red: 'bg-red-500', amber: 'bg-amber-500', ok: 'bg-brand-500' };

/**
 * One allowance bucket as a labelled meter: "IP claims · 1 of 100 used · 99 available" (counts by
 * the console's number formatter, exact in the tooltip and the meter's value text). Over its limit (a grant shrank below what is held) it says so instead of clipping
 * silently.
 */
export function QuotaBar({
  resourceType,
  limit,
  allocated,
  available,
  unit,
  compact = false,
}: {
  resourceType: string;
  limit: number;
  allocated: number;
  available: number;
  unit?: string | null;
  compact?: boolean;
}) {
  const tone = quotaTone(limit, allocated);
  const ratio = limit > 0 ? allocated / limit : allocated > 0 ? 1 : 0;
  const pct = Math.min(100, ratio * 100);
  const over = allocated > limit;
  const summary = `${formatCount(allocated)} of ${formatCount(limit)}${unit ? ` ${unit}` : ''} used · ${formatCount(available)} available`;
  const exact = `${exactCount(allocated)} of ${exactCount(limit)}${unit ? ` ${unit}` : ''} used · ${exactCount(available)} available`;
  return (
    <div className="min-w-0" data-testid={`bucket-${resourceType}`} data-tone={tone}>
      <div className={cx('flex items-baseline justify-between gap-2 text-xs', compact ? 'mb-0.5' : 'mb-1')}>
        <span className="truncate font-medium text-slate-700" title={resourceType}>
          {resourceName(resourceType)}
        </span>
        <span
          className={cx(
            'shrink-0 tabular-nums',
            tone === 'red' ? 'font-medium text-red-700' : tone === 'amber' ? 'font-medium text-amber-800' : 'text-slate-600',
          )}
        >
          <span title={exact}>{summary}</span>
          {over && <span className="ml-1">(over limit by {formatCount(allocated - limit)})</span>}
        </span>
      </div>
      <div
        role="meter"
        aria-label={`${resourceName(resourceType)} quota`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.round(pct)}
        aria-valuetext={`${exact}${over ? ', over its limit' : ''}`}
        className={cx('w-full overflow-hidden rounded-full bg-slate-100 ring-1 ring-inset ring-slate-200', compact ? 'h-1.5' : 'h-2.5')}
      >
        <div className={cx('h-full rounded-full', fill[tone])} style={{ width: pct === 0 ? '0%' : `max(3px, ${pct}%)` }} />
      </div>
    </div>
  );
}
