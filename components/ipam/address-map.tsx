'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useId, useLayoutEffect, useMemo, useRef, useState, type CSSProperties, type KeyboardEvent } from 'react';
import { useTRPC } from '@/app/_trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Button, Select, cx } from '@/components/ui/primitives';
import type { MapCell, MapSegment } from '@/server/ipam/map';
import type { PoolView } from '@/server/ipam/networks';
import { exactCount, formatCount, formatPercent } from './format';
import { layoutBlocks, type PlacedBlock } from './map-layout';
import { MiniBar } from './utilization';

type Kind = MapSegment['kind'];

const kindLabel: Record<Kind, string> = { claim: 'Claim', reserved: 'Reserved', pool: 'Child pool', pod: 'Pod address', retained: 'Retained', free: 'Free' };
const kindClass: Record<Kind, string> = {
  claim: 'bg-brand-500 text-white hover:bg-brand-600',
  reserved: 'bg-slate-400 text-white',
  pool: 'bg-violet-200 text-violet-950 hover:bg-violet-300 ring-1 ring-inset ring-violet-400',
  pod: 'bg-teal-500 text-white hover:bg-teal-600',
  retained: 'bg-amber-300 text-amber-950 hover:bg-amber-400',
  free: 'bg-emerald-50 text-emerald-900 hover:bg-emerald-100 ring-1 ring-inset ring-emerald-200',
};
const striped = { backgroundImage: 'repeating-linear-gradient(135deg, rgba(255,255,255,0.35) 0 4px, transparent 4px 9px)' };
const focusedClaimClass = 'bg-amber-500 text-slate-950 hover:bg-amber-500 ring-2 ring-inset ring-amber-800';

function heat(u: number) {
  if (u <= 0) return '#f8fafc';
  const p = Math.round(12 + Math.min(1, u) * 88);
  return `color-mix(in oklab, #1c4797 ${p}%, #d9eaff)`;
}

/**
 * The address-space map of one pool. Small views list every block exactly (a rectangle per block,
 * area proportional to size, coloured by kind); big views come as a 16×16 heat map of equal cells.
 * Cells and free blocks zoom in, child pools open that pool, claims select the claim in the claims
 * table. Keyboard: one tab stop; arrows move between blocks (up/down by rows in the grid), Enter
 * activates.
 */
export function AddressMap({
  project,
  network,
  pools,
  pool,
  onPoolChange,
  focusClaim,
  onClaimClick,
}: {
  project: string;
  network: string;
  pools: PoolView[];
  /** Selected pool name; undefined is the server's default (the first root). */
  pool: string | undefined;
  onPoolChange: (pool: string) => void;
  focusClaim: string | null;
  onClaimClick: (claim: string) => void;
}) {
  const trpc = useTRPC();
  // The zoom belongs to one pool: choosing another pool (here or from outside) starts at its top.
  const [zoomed, setZoomed] = useState<{ pool: string | undefined; view: string | undefined }>({ pool, view: undefined });
  const view = zoomed.pool === pool ? zoomed.view : undefined;
  const map = useQuery({ ...trpc.ipam.networks.map.queryOptions({ project, network, pool, view }), placeholderData: keepPreviousData });
  const data = map.data;
  const selectable = pools.filter((p) => p.kind !== 'NodeBlock');
  const poolIds = new Set(selectable.map((p) => p.name));

  const zoom = (cidr: string | undefined) => {
    if (!data) return;
    const name = data.pool.name;
    if (pool !== name) onPoolChange(name);
    setZoomed({ pool: name, view: cidr === data.pool.cidr ? undefined : cidr });
  };
  const crumbs = data?.breadcrumbs ?? [];

  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div className="flex flex-wrap items-end gap-3">
          <label className="block w-80 max-w-full text-sm">
            <span className="mb-1 block font-medium text-slate-700">Pool</span>
            <Select value={data?.pool.name ?? pool ?? ''} onChange={(e) => onPoolChange(e.target.value)}>
              {selectable.map((p) => (
                <option key={p.id} value={p.name}>
                  {p.parentPoolId ? '↳ ' : ''}
                  {p.name} — {p.cidr}
                </option>
              ))}
            </Select>
          </label>
          {data && (
            <div className="pb-1.5">
              <MiniBar label={`Pool ${data.pool.name} utilization`} utilization={data.pool.utilization} />
            </div>
          )}
        </div>
        <p className="pb-1.5 text-xs text-slate-500" aria-live="polite">
          {map.isFetching && !map.isPending ? 'Loading…' : data ? (data.mode === 'exact' ? `${data.segments.length} ${data.segments.length === 1 ? 'block' : 'blocks'} in ${data.view}` : `${data.allocationCount.toLocaleString('en-US')} allocations in ${data.view}: 256 cells of /${cellPrefix(data.cells)}`) : ''}
        </p>
      </div>

      {crumbs.length > 1 && (
        <nav aria-label="Map zoom" className="flex flex-wrap items-center gap-1 text-sm">
          <Button variant="secondary" className="px-2 py-0.5 text-xs" onClick={() => zoom(crumbs[crumbs.length - 2])}>
            ← Zoom out
          </Button>
          <ol className="ml-1 flex flex-wrap items-center gap-1">
            {crumbs.map((c, i) => (
              <li key={c} className="flex items-center gap-1">
                {i > 0 && <span aria-hidden className="text-slate-400">/</span>}
                {i === crumbs.length - 1 ? (
                  <span aria-current="location" className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs font-medium text-slate-900">
                    {c}
                  </span>
                ) : (
                  <button type="button" onClick={() => zoom(c)} className="rounded px-1.5 py-0.5 font-mono text-xs text-brand-600 hover:bg-brand-50 hover:underline">
                    {c}
                  </button>
                )}
              </li>
            ))}
          </ol>
        </nav>
      )}

      {map.error && <Alert testId="map-error">{errorMessage(map.error)}</Alert>}
      {data?.mode === 'exact' && (
        <ExactMap
          segments={data.segments}
          view={data.view}
          focusClaim={focusClaim}
          busy={map.isFetching}
          onActivate={(s) => {
            if (s.kind === 'claim' && s.label) onClaimClick(s.label);
            else if (s.kind === 'pool' && s.label && poolIds.has(s.label)) onPoolChange(s.label);
            else if (zoomable(s)) zoom(s.cidr);
          }}
        />
      )}
      {data?.mode === 'cells' && <CellsMap cells={data.cells} busy={map.isFetching} onZoom={(c) => zoom(c)} />}
      {data && <Legend mode={data.mode} />}
    </div>
  );
}

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

function zoomable(s: MapSegment) {
  return (s.kind === 'free' || s.kind === 'pool') && s.size !== '1';
}

function cellPrefix(cells: MapCell[]) {
  return cells[0]?.cidr.split('/')[1] ?? '';
}

function segmentName(s: MapSegment) {
  return `${kindLabel[s.kind]}${s.label ? ` ${s.label}` : ''}, ${s.cidr}, ${exactCount(s.size)} ${s.size === '1' ? 'address' : 'addresses'}`;
}

/** Width of the map in pixels, tracked so labels only show where they fit. */
function useWidth<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(960);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(el.clientWidth || 960);
    const observer = new ResizeObserver(([entry]) => setWidth(entry.contentRect.width || 960));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width] as const;
}

/** Roving tab stop over a list of buttons: arrows move focus, the list is one stop in the tab order. */
function useRoving(count: number, columns: number) {
  const [active, setActive] = useState(0);
  const refs = useRef<(HTMLButtonElement | null)[]>([]);
  useEffect(() => {
    if (active >= count) setActive(0);
  }, [active, count]);
  const onKeyDown = (e: KeyboardEvent) => {
    const step: Record<string, number> = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: columns, ArrowUp: -columns };
    let next: number | null = null;
    if (e.key in step) next = Math.min(count - 1, Math.max(0, active + step[e.key]));
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = count - 1;
    if (next === null) return;
    e.preventDefault();
    setActive(next);
    refs.current[next]?.focus();
  };
  return { active, setActive, refs, onKeyDown };
}

function ExactMap({ segments, view, focusClaim, busy, onActivate }: { segments: MapSegment[]; view: string; focusClaim: string | null; busy: boolean; onActivate: (s: MapSegment) => void }) {
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
        Blocks in address order. Use the arrow keys to move between blocks; Enter on a claim selects it in the claims table, on a free block or child pool zooms in.
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
                className={cx('flex h-full w-full flex-col items-start justify-start overflow-hidden rounded-[3px] px-1 py-0.5 text-left text-[11px] leading-tight transition-colors', focused ? focusedClaimClass : kindClass[s.kind])}
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
  const s = block.item;
  const cx0 = block.x + block.w / 2;
  const below = block.y + block.h < 0.7;
  const style: CSSProperties = {
    left: `${Math.min(Math.max(cx0, 0.12), 0.88) * 100}%`,
    transform: 'translateX(-50%)',
    ...(below ? { top: `calc(${(block.y + block.h) * 100}% + 6px)` } : { bottom: `calc(${(1 - block.y) * 100}% + 6px)` }),
  };
  return (
    <div id={id} role="tooltip" data-testid="map-tooltip" className="pointer-events-none absolute z-20 w-max max-w-xs rounded-md bg-slate-900 px-2.5 py-1.5 text-xs text-white shadow-lg" style={style}>
      <p className="font-mono font-medium">{s.cidr}</p>
      <p>
        {kindLabel[s.kind]}
        {s.label && <span className="font-semibold"> {s.label}</span>}
      </p>
      <p className="text-slate-300">
        {exactCount(s.size)} {s.size === '1' ? 'address' : 'addresses'}
        {s.kind === 'claim' && ' · click to show in claims'}
        {zoomable(s) && (s.kind === 'pool' ? ' · click to open' : ' · click to zoom')}
      </p>
    </div>
  );
}

function CellsMap({ cells, busy, onZoom }: { cells: MapCell[]; busy: boolean; onZoom: (cidr: string) => void }) {
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
            className={cx('h-7 text-[10px] tabular-nums hover:outline-2 hover:outline-brand-700 focus:z-10', c.utilization > 0.55 ? 'text-white' : 'text-slate-700')}
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
            ...(Math.floor(tip! / 16) < 11 ? { top: `${((Math.floor(tip! / 16) + 1) / 16) * 100}%`, marginTop: 6 } : { bottom: `${(1 - Math.floor(tip! / 16) / 16) * 100}%`, marginBottom: 6 }),
          }}
        >
          <p className="font-mono font-medium">{t.cidr}</p>
          <p>
            {formatPercent(t.utilization)} allocated · <span title={exactCount(t.allocated)}>{formatCount(t.allocated)}</span> of <span title={exactCount(t.size)}>{formatCount(t.size)}</span>
          </p>
          <p className="text-slate-300">click to zoom in</p>
        </div>
      )}
    </div>
  );
}

function Legend({ mode }: { mode: 'exact' | 'cells' }) {
  if (mode === 'cells') {
    return (
      <div className="flex items-center gap-2 text-xs text-slate-600">
        <span>0%</span>
        <span aria-hidden className="h-2.5 w-40 rounded-sm ring-1 ring-inset ring-slate-200" style={{ background: `linear-gradient(to right, #f8fafc, ${heat(0.01)}, ${heat(0.5)}, ${heat(1)})` }} />
        <span>100% of each cell allocated (numbers are percent)</span>
      </div>
    );
  }
  return (
    <ul aria-label="Legend" className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-600">
      {(Object.keys(kindLabel) as Kind[]).map((k) => (
        <li key={k} className="flex items-center gap-1.5">
          <span aria-hidden className={cx('inline-block h-3 w-3 rounded-sm', kindClass[k])} style={k === 'reserved' || k === 'retained' ? striped : undefined} />
          {kindLabel[k]}
        </li>
      ))}
      <li className="flex items-center gap-1.5">
        <span aria-hidden className={cx('inline-block h-3 w-3 rounded-sm', focusedClaimClass)} />
        Selected claim
      </li>
    </ul>
  );
}
