'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Button, Select } from '@/components/ui/primitives';
import type { MapCell, MapSegment } from '@/server/ipam/map';
import type { PoolView } from '@/server/ipam/networks';
import { CellsMap } from './cells-map';
import { CompressedMap } from './compressed-map';
import { ExactMap } from './exact-map';
import { Legend } from './map-legend';
import { zoomable } from './map-style';
import { MiniBar } from './utilization';

/**
 * The address-space map of one pool. Small views list every block exactly (a rectangle per block,
 * area proportional to size, coloured by kind); big views come as a 16×16 heat map of equal cells.
 * Cells and free blocks zoom in, child pools open that pool, claims select the claim in the claims
 * table, a cluster's node block opens it to show its pod addresses. IPv6 views start on the
 * compressed scale (used blocks at a readable width, free runs collapsed into labelled gaps); the
 * proportional scale is one switch away. Keyboard: one tab stop; arrows move between blocks
 * (up/down by rows in the grid), Enter activates; focus shows a block's details as hover does.
 */
export function AddressMap({
  project,
  network,
  pools,
  pool,
  onPoolChange,
  focusClaim,
  onClaimClick,
  onShownPool,
}: {
  project: string;
  network: string;
  pools: PoolView[];
  /** Selected pool name; undefined is the server's default (the first root). */
  pool: string | undefined;
  onPoolChange: (pool: string) => void;
  focusClaim: string | null;
  onClaimClick: (claim: string) => void;
  /** The pool the map shows once it is known (the server's default when `pool` is undefined). */
  onShownPool?: (pool: PoolView['name'] | null) => void;
}) {
  const trpc = useTRPC();
  // The zoom belongs to one pool: choosing another pool (here or from outside) starts at its top.
  const [zoomed, setZoomed] = useState<{ pool: string | undefined; view: string | undefined }>({ pool, view: undefined });
  const view = zoomed.pool === pool ? zoomed.view : undefined;
  const map = useQuery({ ...trpc.ipam.networks.map.queryOptions({ project, network, pool, view }), placeholderData: keepPreviousData });
  const data = map.data;
  const shown = data?.pool.name ?? null;
  useEffect(() => onShownPool?.(shown), [shown, onShownPool]);
  const [scale, setScale] = useState<'compressed' | 'proportional' | null>(null);
  const ipv6 = data?.pool.family === 6;
  const compressed = (scale ?? (ipv6 ? 'compressed' : 'proportional')) === 'compressed';
  const nodeBlock = data?.pool.kind === 'NodeBlock' ? data.pool : null;
  const parentOfNodeBlock = nodeBlock ? pools.find((p) => p.id === nodeBlock.parentPoolId) : undefined;
  // Node blocks are not offered in the list; the one opened from the map is shown while open.
  const selectable = pools.filter((p) => p.kind !== 'NodeBlock' || p.name === nodeBlock?.name);
  const poolIds = new Set(selectable.map((p) => p.name));

  const zoom = (cidr: string | undefined) => {
    if (!data) return;
    const name = data.pool.name;
    if (pool !== name) onPoolChange(name);
    setZoomed({ pool: name, view: cidr === data.pool.cidr ? undefined : cidr });
  };
  const crumbs = data?.breadcrumbs ?? [];
  const activate = (s: MapSegment) => {
    if (s.kind === 'claim' && s.label) onClaimClick(s.label);
    else if (s.kind === 'pool' && s.label && (s.nodeBlock || poolIds.has(s.label))) onPoolChange(s.label);
    else if (zoomable(s)) zoom(s.cidr);
  };

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
                  {p.kind === 'NodeBlock' ? 'node block ' : ''}
                  {p.name} — {p.cidr}
                </option>
              ))}
            </Select>
          </label>
          {data?.mode === 'exact' && (
            <div role="radiogroup" aria-label="Scale" className="flex gap-1 pb-1">
              {(['compressed', 'proportional'] as const).map((k) => (
                <Button
                  key={k}
                  role="radio"
                  aria-checked={compressed === (k === 'compressed')}
                  variant={compressed === (k === 'compressed') ? 'primary' : 'secondary'}
                  className="px-2 py-1 text-xs"
                  onClick={() => setScale(k)}
                >
                  {k === 'compressed' ? 'Compressed' : 'Proportional'}
                </Button>
              ))}
            </div>
          )}
          {data && (
            <div className="pb-1.5">
              <MiniBar label={`Pool ${data.pool.name} utilization`} utilization={data.pool.utilization} />
            </div>
          )}
        </div>
        <p className="pb-1.5 text-xs text-slate-500" aria-live="polite">
          {map.isFetching && !map.isPending
            ? 'Loading…'
            : data
              ? data.mode === 'exact'
                ? `${data.segments.length} ${data.segments.length === 1 ? 'block' : 'blocks'} in ${data.view}`
                : `${data.allocationCount.toLocaleString('en-US')} allocations in ${data.view}: 256 cells of /${cellPrefix(data.cells)}`
              : ''}
        </p>
      </div>

      {nodeBlock && parentOfNodeBlock && (
        <p className="flex flex-wrap items-center gap-2 text-sm text-slate-700">
          <Button variant="secondary" className="px-2 py-0.5 text-xs" onClick={() => onPoolChange(parentOfNodeBlock.name)}>
            ← Back to pool {parentOfNodeBlock.name}
          </Button>
          <span>
            Node block <span className="font-mono">{nodeBlock.cidr}</span>: its pod addresses.
          </span>
        </p>
      )}

      {crumbs.length > 1 && (
        <nav aria-label="Map zoom" className="flex flex-wrap items-center gap-1 text-sm">
          <Button variant="secondary" className="px-2 py-0.5 text-xs" onClick={() => zoom(crumbs[crumbs.length - 2])}>
            ← Zoom out
          </Button>
          <ol className="ml-1 flex flex-wrap items-center gap-1">
            {crumbs.map((c, i) => (
              <li key={c} className="flex items-center gap-1">
                {i > 0 && (
                  <span aria-hidden className="text-slate-500">
                    /
                  </span>
                )}
                {i === crumbs.length - 1 ? (
                  <span aria-current="location" className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs font-medium text-slate-900">
                    {c}
                  </span>
                ) : (
                  <button
                    type="button"
                    onClick={() => zoom(c)}
                    className="rounded px-1.5 py-0.5 font-mono text-xs text-brand-600 hover:bg-brand-50 hover:underline"
                  >
                    {c}
                  </button>
                )}
              </li>
            ))}
          </ol>
        </nav>
      )}

      {map.error && <Alert testId="map-error">{errorMessage(map.error)}</Alert>}
      {data?.mode === 'exact' && compressed && (
        <CompressedMap segments={data.segments} view={data.view} focusClaim={focusClaim} busy={map.isFetching} onActivate={activate} />
      )}
      {data?.mode === 'exact' && !compressed && (
        <ExactMap segments={data.segments} view={data.view} focusClaim={focusClaim} busy={map.isFetching} onActivate={activate} />
      )}
      {data?.mode === 'cells' && <CellsMap cells={data.cells} busy={map.isFetching} onZoom={(c) => zoom(c)} />}
      {data && <Legend mode={data.mode} />}
    </div>
  );
}

function cellPrefix(cells: MapCell[]) {
  return cells[0]?.cidr.split('/')[1] ?? '';
}
