'use client';
import { useId, useMemo, useState, type CSSProperties } from 'react';
import { cx } from '@/components/ui/primitives';
import type { MapSegment } from '@/server/ipam/map';
import { exactCount } from './format';
import { useRoving, useWidth } from './map-hooks';
import { layoutBlocks, type PlacedBlock } from './map-layout';
import { focusedClaimClass, kindClass, kindLabel, segmentName, striped, zoomable } from './map-style';

/** The text lines that fit in a block of this size: CIDR and name, or whichever fits (never cut off). */
function lines(s: MapSegment, pxW: number, pxH: number) {
  const name = s.label ?? (s.kind === 'claim' ? '' : kindLabel[s.kind]);
  const room = pxW - 10;
  const cidrFits = s.cidr.length * 6.7 <= room;
  const nameFits = name !== '' && name.length * 6.3 <= room;
  const out: { text: string; mono: boolean }[] = [];
  if (pxH >= 18 && cidrFits) out.push({ text: s.cidr, mono: true });
  if (nameFits && pxH >= (out.length ? 32 : 18)) out.push({ text: name, mono: false });
  return out;
}

/** Every block of a small view exactly: a rectangle per block, area proportional to size, labelled where the label fits. */
export function ExactMap({
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
  const [ref, width] = useWidth<HTMLDivElement>();
  const height = Math.round(Math.min(340, Math.max(200, width / 3.2)));
  const placed = useMemo(() => layoutBlocks(segments, view, width / height), [segments, view, width, height]);
  const { active, setActive, refs, onKeyDown } = useRoving(placed.length, 1);
  const [tip, setTip] = useState<number | null>(null);
  const tipId = useId();
  const helpId = useId();
  return (
    <div>
      <p id={helpId} className="sr-only">
        Blocks in address order. Use the arrow keys to move between blocks; Enter on a claim selects it in the claims table, on a free block or child pool zooms
        in.
      </p>
      <div
        ref={ref}
        role="group"
        aria-label={`Address map of ${view}`}
        aria-describedby={helpId}
        aria-busy={busy}
        onKeyDown={onKeyDown}
        onMouseLeave={() => setTip(null)}
        className={cx('relative w-full overflow-visible rounded-md bg-slate-200 ring-1 ring-slate-300 transition-opacity', busy && 'opacity-70')}
        style={{ height }}
      >
        {placed.map((p, i) => {
          const s = p.item;
          const focused = s.kind === 'claim' && focusClaim !== null && s.label === focusClaim;
          const pxW = p.w * width;
          const pxH = p.h * height;
          return (
            <button
              key={s.cidr}
              ref={(el) => {
                refs.current[i] = el;
              }}
              type="button"
              tabIndex={i === active ? 0 : -1}
              aria-label={segmentName(s)}
              aria-pressed={s.kind === 'claim' ? focused : undefined}
              aria-describedby={tip === i ? tipId : undefined}
              onClick={() => onActivate(s)}
              onFocus={() => {
                setActive(i);
                setTip(i);
              }}
              onBlur={() => setTip((t) => (t === i ? null : t))}
              onMouseEnter={() => setTip(i)}
              className="absolute p-px focus:z-10 focus-visible:z-10"
              style={{ left: `${p.x * 100}%`, top: `${p.y * 100}%`, width: `${p.w * 100}%`, height: `${p.h * 100}%` }}
            >
              <span
                className={cx(
                  'flex h-full w-full flex-col items-start justify-start overflow-hidden rounded-[3px] px-1 py-0.5 text-left text-[11px] leading-tight transition-colors',
                  focused ? focusedClaimClass : kindClass[s.kind],
                )}
                style={s.kind === 'reserved' || s.kind === 'retained' ? striped : undefined}
              >
                {lines(s, pxW, pxH).map((line) => (
                  <span key={line.text} className={cx('whitespace-nowrap', line.mono ? 'font-mono' : 'font-medium')}>
                    {line.text}
                  </span>
                ))}
              </span>
            </button>
          );
        })}
        {tip !== null && placed[tip] && <Tooltip id={tipId} block={placed[tip]} />}
      </div>
    </div>
  );
}

function Tooltip({ id, block }: { id: string; block: PlacedBlock<MapSegment> }) {
  const cx0 = block.x + block.w / 2;
  const below = block.y + block.h < 0.7;
  const style: CSSProperties = {
    left: `${Math.min(Math.max(cx0, 0.12), 0.88) * 100}%`,
    transform: 'translateX(-50%)',
    ...(below ? { top: `calc(${(block.y + block.h) * 100}% + 6px)` } : { bottom: `calc(${(1 - block.y) * 100}% + 6px)` }),
  };
  return (
    <div
      id={id}
      role="tooltip"
      data-testid="map-tooltip"
      className="pointer-events-none absolute z-20 w-max max-w-xs rounded-md bg-slate-900 px-2.5 py-1.5 text-xs text-white shadow-lg"
      style={style}
    >
      <BlockDetails s={block.item} />
    </div>
  );
}

/** What a block's tooltip says: CIDR, kind and name, owner, size and what activating it does. */
export function BlockDetails({ s }: { s: MapSegment }) {
  return (
    <>
      <p className="font-mono font-medium">{s.cidr}</p>
      <p>
        {s.nodeBlock ? 'Node block' : kindLabel[s.kind]}
        {s.label && <span className="font-semibold"> {s.label}</span>}
      </p>
      {s.owner && <p>Owner: {s.owner}</p>}
      <p className="text-slate-500">
        {exactCount(s.size)} {s.size === '1' ? 'address' : 'addresses'}
        {s.kind === 'claim' && ' · click to show in claims'}
        {s.nodeBlock ? ' · click to show its pod addresses' : zoomable(s) && (s.kind === 'pool' ? ' · click to open' : ' · click to zoom')}
      </p>
    </>
  );
}
