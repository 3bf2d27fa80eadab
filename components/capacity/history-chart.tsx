'use client';
import { resourceName } from '@/components/ui/resource-names';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { Alert, cx } from '@/components/ui/primitives';
import { formatUsage } from '@/components/ui/numbers';
import { describeForecast, type Forecast } from '@/lib/forecast';

export const RANGES = ['1h', '24h', '7d', '30d', '90d', '3y'] as const;
export type ChartRange = (typeof RANGES)[number];

interface Point {
  at: string;
  used: string;
  capacity: string;
  utilization: number;
}

const SERIES_LABEL: Record<string, string> = {
  network: 'Addresses',
  'cluster-pods': 'Pod addresses of its blocks',
  'cluster-blocks': 'Node blocks of the network',
  bucket: 'Allowance',
};

const W = 640;
const H = 140;
const PAD = { l: 36, r: 8, t: 8, b: 20 };

/**
 * Utilization over time as a plain SVG line (0–100 % of capacity, the peak of each step), one
 * chart per series, with the forecast beside it. No chart library: a polyline, a few gridlines and
 * the axis labels are all it needs.
 */
export function Sparkline({ points, from, to, label }: { points: Point[]; from: string; to: string; label: string }) {
  const t0 = Date.parse(from);
  const t1 = Date.parse(to);
  const x = (t: number) => PAD.l + ((t - t0) / Math.max(1, t1 - t0)) * (W - PAD.l - PAD.r);
  const y = (u: number) => PAD.t + (1 - Math.min(1, Math.max(0, u))) * (H - PAD.t - PAD.b);
  const path = points.map((p) => `${x(Date.parse(p.at)).toFixed(1)},${y(p.utilization).toFixed(1)}`).join(' ');
  const last = points[points.length - 1];
  const fmt = (t: number) => {
    const d = new Date(t);
    return t1 - t0 > 2 * 86_400_000 ? d.toISOString().slice(0, 10) : d.toISOString().slice(11, 16);
  };
  return (
    <svg
      viewBox={`0 0 ${W} ${H}`}
      className="h-36 w-full"
      role="img"
      aria-label={`${label}: ${points.length} points${last ? `, latest ${(last.utilization * 100).toFixed(1)} %` : ''}`}
      data-testid="utilization-chart"
      data-points={points.length}
    >
      {[0, 0.5, 0.8, 1].map((g) => (
        <g key={g}>
          <line
            x1={PAD.l}
            x2={W - PAD.r}
            y1={y(g)}
            y2={y(g)}
            className={g === 0.8 ? 'stroke-amber-300' : 'stroke-slate-200'}
            strokeDasharray={g === 0.8 ? '4 3' : undefined}
          />
          <text x={PAD.l - 4} y={y(g) + 3} textAnchor="end" className="fill-slate-400 text-[9px]">
            {g * 100}%
          </text>
        </g>
      ))}
      <text x={PAD.l} y={H - 4} className="fill-slate-400 text-[9px]">
        {fmt(t0)}
      </text>
      <text x={W - PAD.r} y={H - 4} textAnchor="end" className="fill-slate-400 text-[9px]">
        {fmt(t1)}
      </text>
      {points.length > 1 && <polyline points={path} fill="none" className="stroke-brand-600" strokeWidth={1.5} />}
      {points.length === 1 && <circle cx={x(Date.parse(points[0].at))} cy={y(points[0].utilization)} r={2.5} className="fill-brand-600" />}
    </svg>
  );
}

/** The range picker: a group of toggle buttons. */
export function RangePicker({ value, onChange }: { value: ChartRange; onChange: (r: ChartRange) => void }) {
  return (
    <div role="group" aria-label="Time range" className="inline-flex shrink-0 overflow-hidden rounded-md border border-slate-200 text-xs">
      {RANGES.map((r) => (
        <button
          key={r}
          type="button"
          aria-pressed={value === r}
          onClick={() => onChange(r)}
          className={cx('px-2.5 py-1.5', value === r ? 'bg-brand-600 text-white' : 'bg-white text-slate-600 hover:bg-slate-50')}
        >
          {r}
        </button>
      ))}
    </div>
  );
}

/**
 * The utilization history of a network (per family), a cluster or the project's buckets, with a
 * time-range picker and each series' forecast ("full in ~12 days at the last 7 days' rate").
 */
export function UtilizationHistory({ project, object, name }: { project: string; object: 'network' | 'cluster' | 'buckets'; name?: string }) {
  const trpc = useTRPC();
  const [range, setRange] = useState<ChartRange>('24h');
  const q = useQuery({ ...trpc.capacity.history.queryOptions({ project, object, name, range }), refetchInterval: 60_000 });
  return (
    <div className="space-y-3" data-testid="utilization-history">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <p className="text-xs text-slate-500">Sampled from the exact counters every minute; each point is the peak of its step.</p>
        <RangePicker value={range} onChange={setRange} />
      </div>
      {q.error && <Alert>{errorMessage(q.error)}</Alert>}
      {q.data && q.data.series.length === 0 && <p className="text-sm text-slate-500">No history yet: the worker records the first sample within a minute.</p>}
      {q.data?.series.map((s) => {
        const label = `${SERIES_LABEL[s.kind] ?? s.kind}${s.family ? ` ${s.family}` : ''}${s.resourceType ? ` ${resourceName(s.resourceType)}` : ''}`;
        return (
          <div key={s.key}>
            <div className="flex flex-wrap items-baseline justify-between gap-2 text-xs">
              <span className="font-medium text-slate-700">{label}</span>
              <span className="text-slate-600" data-testid="forecast">
                {describeForecast(s.forecast as Forecast, s.forecastWindowDays)}
              </span>
            </div>
            <Sparkline points={s.points} from={q.data.range.from} to={q.data.range.to} label={label} />
          </div>
        );
      })}
    </div>
  );
}

/** Fleet-wide address utilization (the sum over every network) per family, with the range picker: the operators' overview. */
export function FleetUtilizationHistory() {
  const trpc = useTRPC();
  const [range, setRange] = useState<ChartRange>('24h');
  const q = useQuery({ ...trpc.capacity.fleetHistory.queryOptions({ range }), refetchInterval: 60_000 });
  return (
    <div className="space-y-3" data-testid="fleet-utilization-history">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <p className="text-xs text-slate-500">
          Every network&apos;s addresses summed, per family; each point is the sum of the networks&apos; peaks in its step.
        </p>
        <RangePicker value={range} onChange={setRange} />
      </div>
      {q.error && <Alert>{errorMessage(q.error)}</Alert>}
      {q.data && q.data.series.length === 0 && <p className="text-sm text-slate-500">No networks yet.</p>}
      {q.data?.series.map((s) => {
        const label = `Fleet addresses ${s.family}`;
        return (
          <div key={s.family}>
            <div className="flex flex-wrap items-baseline justify-between gap-2 text-xs">
              <span className="font-medium text-slate-700">{label}</span>
              <span className="text-slate-600" data-testid="fleet-current">
                {formatUsage(s.current.used, s.current.capacity)} in use now
              </span>
            </div>
            <Sparkline points={s.points} from={q.data.range.from} to={q.data.range.to} label={label} />
          </div>
        );
      })}
    </div>
  );
}
