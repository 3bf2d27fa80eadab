'use client';
import { useId, useMemo, useRef, useState, type FocusEvent, type MouseEvent } from 'react';
import { cx } from '@/components/ui/primitives';
import type { MapSegment } from '@/server/ipam/map';
import { BlockDetails } from './exact-map';
import { exactCount, formatCount } from './format';
import { useRoving } from './map-hooks';
import { compressFreeRuns, type StripItem } from './map-layout';
import { focusedClaimClass, kindClass, segmentName, striped } from './map-style';

function gapName(g: Extract<StripItem<MapSegment>, { type: 'gap' }>) {
  if (g.blocks.length === 1) return segmentName(g.blocks[0]);
  const first = g.blocks[0].cidr;
  const last = g.blocks[g.blocks.length - 1].cidr;
  return `Free, ${first} to ${last}, ${exactCount(g.size)} addresses in ${g.blocks.length} blocks`;
}

/**
 * The map on a compressed scale: used blocks as tiles of readable width in address order, each run
 * of free blocks between them as one labelled gap (its size and block count). A gap zooms into its
 * largest block. Keyboard as the exact map: one tab stop, arrows move, Enter activates.
 */
export function CompressedMap({
  segments,
  view,
  focusClaim,
  busy,
  onActivate,
}: {
  segments: MapSegment[];
  view: string;
  focusClaim: string | null;
  busy: boolean;
  onActivate: (s: MapSegment) => void;
}) {
  const items = useMemo(() => compressFreeRuns(segments), [segments]);
  const { active, setActive, refs, onKeyDown } = useRoving(items.length, 1);
  // The block whose details show, and where (below it, kept inside the map).
  const [tipAt, setTipAt] = useState<{ index: number; left: number; top: number } | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const tipId = useId();
  const helpId = useId();
  const tip = tipAt?.index ?? null;
  const tipItem = tip !== null ? items[tip] : null;
  const show = (index: number, el: HTMLElement) =>
    setTipAt({ index, left: Math.min(el.offsetLeft, Math.max(0, (box.current?.clientWidth ?? 0) - 260)), top: el.offsetTop + el.offsetHeight + 4 });
  return (
    <div>
      <p id={helpId} className="sr-only">
        Compressed scale: used blocks in address order, runs of free blocks collapsed into gaps. Use the arrow keys to move between blocks; Enter on a claim
        selects it in the claims table, on a gap zooms into its largest free block.
      </p>
      <div
        ref={box}
        role="group"
        aria-label={`Address map of ${view}`}
        aria-describedby={helpId}
        aria-busy={busy}
        onKeyDown={onKeyDown}
        onMouseLeave={() => setTipAt(null)}
        className={cx('relative flex flex-wrap gap-1 rounded-md bg-slate-100 p-1 ring-1 ring-slate-300 transition-opacity', busy && 'opacity-70')}
      >
        {items.map((it, i) => {
          const s = it.type === 'block' ? it.item : it.largest;
          const focused = it.type === 'block' && s.kind === 'claim' && focusClaim !== null && s.label === focusClaim;
          const common = {
            ref: (el: HTMLButtonElement | null) => {
              refs.current[i] = el;
            },
            type: 'button' as const,
            tabIndex: i === active ? 0 : -1,
            'aria-describedby': tip === i ? tipId : undefined,
            onClick: () => onActivate(s),
            onFocus: (e: FocusEvent<HTMLButtonElement>) => {
              setActive(i);
              show(i, e.currentTarget);
            },
            onBlur: () => setTipAt((t) => (t?.index === i ? null : t)),
            onMouseEnter: (e: MouseEvent<HTMLButtonElement>) => show(i, e.currentTarget),
          };
          if (it.type === 'gap')
            return (
              <button
                key={`gap-${s.cidr}`}
                {...common}
                aria-label={gapName(it)}
                data-gap
                className="flex min-h-12 min-w-28 flex-[1_1_7rem] flex-col items-center justify-center rounded-[3px] border border-dashed border-emerald-300 bg-emerald-50 px-2 text-[11px] leading-tight text-emerald-900 hover:bg-emerald-100 focus:z-10"
              >
                <span className="font-medium">⋯ {formatCount(it.size.toString())} free ⋯</span>
                {it.blocks.length > 1 && <span className="text-emerald-700">{it.blocks.length} blocks</span>}
              </button>
            );
          return (
            <button
              key={s.cidr}
              {...common}
              aria-label={segmentName(s)}
              aria-pressed={s.kind === 'claim' ? focused : undefined}
              className={cx(
                'flex min-h-12 min-w-36 flex-[2_1_9rem] flex-col items-start justify-center rounded-[3px] px-2 text-left text-[11px] leading-tight focus:z-10',
                focused ? focusedClaimClass : kindClass[s.kind],
              )}
              style={s.kind === 'reserved' || s.kind === 'retained' ? striped : undefined}
            >
              <span className="font-mono">{s.cidr}</span>
              {s.label && <span className="font-medium">{s.label}</span>}
            </button>
          );
        })}
        {tipItem && tipAt && (
          <div
            id={tipId}
            role="tooltip"
            data-testid="map-tooltip"
            className="pointer-events-none absolute z-20 w-max max-w-xs rounded-md bg-slate-900 px-2.5 py-1.5 text-xs text-white shadow-lg"
            style={{ left: tipAt.left, top: tipAt.top }}
          >
            {tipItem.type === 'block' ? (
              <BlockDetails s={tipItem.item} />
            ) : (
              <>
                <p className="font-medium">Free run of {tipItem.blocks.length === 1 ? '1 block' : `${tipItem.blocks.length} blocks`}</p>
                <p className="font-mono">
                  {tipItem.blocks[0].cidr}
                  {tipItem.blocks.length > 1 && ` … ${tipItem.blocks[tipItem.blocks.length - 1].cidr}`}
                </p>
                <p className="text-slate-500">
                  {exactCount(tipItem.size.toString())} addresses · click to zoom into {tipItem.largest.cidr}
                </p>
              </>
            )}
          </div>
        )}
      </div>
    </div>
  );
}
