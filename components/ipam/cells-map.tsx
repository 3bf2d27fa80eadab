'use client';
import { useId, useState } from 'react';
import { cx } from '@/components/ui/primitives';
import type { MapCell } from '@/server/ipam/map';
import { exactCount, formatCount, formatPercent } from './format';
import { useRoving } from './map-hooks';
import { heat } from './map-style';

/** A big view as a 16×16 heat map of equal cells; a cell zooms in. */
export function CellsMap({ cells, busy, onZoom }: { cells: MapCell[]; busy: boolean; onZoom: (cidr: string) => void }) {
  const { active, setActive, refs, onKeyDown } = useRoving(cells.length, 16);
  const [tip, setTip] = useState<number | null>(null);
  const helpId = useId();
  const tipId = useId();
  const t = tip !== null ? cells[tip] : null;
  return (
    <div className="relative">
      <p id={helpId} className="sr-only">
        Heat map of 256 equal cells. Arrow keys move between cells; Enter zooms into a cell.
      </p>
      <div
        role="group"
        aria-label="Address map cells"
        aria-describedby={helpId}
        aria-busy={busy}
        onKeyDown={onKeyDown}
        onMouseLeave={() => setTip(null)}
        className={cx('grid grid-cols-16 gap-px overflow-hidden rounded-md bg-slate-200 p-px ring-1 ring-slate-300 transition-opacity', busy && 'opacity-70')}
      >
        {cells.map((c, i) => (
          <button
            key={c.cidr}
            ref={(el) => {
              refs.current[i] = el;
            }}
            type="button"
            tabIndex={i === active ? 0 : -1}
            aria-label={`${c.cidr}: ${formatPercent(c.utilization)} allocated`}
            aria-describedby={tip === i ? tipId : undefined}
            onClick={() => onZoom(c.cidr)}
            onFocus={() => {
              setActive(i);
              setTip(i);
            }}
            onBlur={() => setTip((x) => (x === i ? null : x))}
            onMouseEnter={() => setTip(i)}
            className={cx(
              'h-7 text-[10px] tabular-nums hover:outline-2 hover:outline-brand-700 focus:z-10',
              c.utilization > 0.55 ? 'text-white' : 'text-slate-700',
            )}
            style={{ background: heat(c.utilization) }}
          >
            {c.utilization > 0 ? Math.max(1, Math.round(c.utilization * 100)) : ''}
          </button>
        ))}
      </div>
      {t && (
        <div
          id={tipId}
          role="tooltip"
          data-testid="map-tooltip"
          className="pointer-events-none absolute z-20 w-max rounded-md bg-slate-900 px-2.5 py-1.5 text-xs text-white shadow-lg"
          style={{
            left: `${(Math.min(Math.max((tip! % 16) + 0.5, 2), 14) / 16) * 100}%`,
            transform: 'translateX(-50%)',
            ...(Math.floor(tip! / 16) < 11
              ? { top: `${((Math.floor(tip! / 16) + 1) / 16) * 100}%`, marginTop: 6 }
              : { bottom: `${(1 - Math.floor(tip! / 16) / 16) * 100}%`, marginBottom: 6 }),
          }}
        >
          <p className="font-mono font-medium">{t.cidr}</p>
          <p>
            {formatPercent(t.utilization)} allocated · <span title={exactCount(t.allocated)}>{formatCount(t.allocated)}</span> of{' '}
            <span title={exactCount(t.size)}>{formatCount(t.size)}</span>
          </p>
          <p className="text-slate-500">click to zoom in</p>
        </div>
      )}
    </div>
  );
}
