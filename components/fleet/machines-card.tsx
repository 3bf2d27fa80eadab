'use client';
import { useQueries, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useTRPC } from '@/components/trpc/client';
import { useCanEdit } from '@/components/projects/hooks';
import { EmptyState, TextLink, cx } from '@/components/ui/primitives';
import { phaseFill, phaseLabel, phaseOrder } from './format';
import { SAFETY_REFETCH_MS, useFleetLive } from './live';
import { PhaseBadge } from './parts';
import { dashboardMachinesInput, phaseCountInput } from './queries';

/**
 * The project dashboard's Machines card: how many machines are in each phase (a stacked bar and
 * a legend linking to the filtered list) and the newest ones. Counts are exact per phase (each a
 * one-row page's total), updated live as machines move.
 */
export function MachinesCardBody({ project }: { project: string }) {
  const trpc = useTRPC();
  const canEdit = useCanEdit(project);
  const live = useFleetLive({ project });
  const recent = useQuery({ ...trpc.fleet.machines.list.queryOptions(dashboardMachinesInput(project)), refetchInterval: SAFETY_REFETCH_MS });
  const perPhase = useQueries({
    queries: phaseOrder.map((phase) => ({ ...trpc.fleet.machines.list.queryOptions(phaseCountInput(project, phase)), refetchInterval: SAFETY_REFETCH_MS })),
  });
  const counts = phaseOrder.map((phase, i) => ({ phase, count: perPhase[i].data?.total ?? 0 }));

  if (perPhase.some((q) => q.isPending) || !recent.data) return <p className="text-sm text-slate-500">Loading machines…</p>;
  const released = counts.find((c) => c.phase === 'Released')!.count;
  const current = counts.filter((c) => c.phase !== 'Released' && c.count > 0);
  const active = current.reduce((n, c) => n + c.count, 0);
  const base = `/projects/${project}/machines`;

  if (active === 0 && released === 0) {
    return (
      <EmptyState title="No machines yet" action={canEdit ? <TextLink href={`${base}?request=1`}>Request a machine →</TextLink> : undefined}>
        Bare-metal machines you request appear here with their phase.
      </EmptyState>
    );
  }

  return (
    <div className="space-y-3" data-testid="machines-card">
      <div className="flex items-baseline justify-between">
        <p className="text-sm text-slate-700">
          <span className="text-2xl font-semibold tabular-nums text-slate-900">{active}</span> {active === 1 ? 'machine' : 'machines'}
          {released > 0 && <span className="text-slate-500"> · {released} released</span>}
        </p>
        {live === 'live' && <span className="text-xs text-slate-500">live</span>}
      </div>
      {active > 0 && (
        <div
          className="flex h-2.5 w-full overflow-hidden rounded-full bg-slate-100 ring-1 ring-inset ring-slate-200"
          role="img"
          aria-label={current.map((c) => `${c.count} ${phaseLabel(c.phase)}`).join(', ')}
        >
          {current.map((c) => (
            <span
              key={c.phase}
              className={cx('h-full', phaseFill[c.phase])}
              style={{ width: `${(c.count / active) * 100}%` }}
              title={`${phaseLabel(c.phase)}: ${c.count}`}
            />
          ))}
        </div>
      )}
      <ul className="flex flex-wrap gap-x-4 gap-y-1 text-sm" aria-label="Machines by phase">
        {current.map((c) => (
          <li key={c.phase}>
            <Link href={`${base}?phase=${c.phase}`} className="inline-flex items-center gap-1.5 hover:underline">
              <span aria-hidden className={cx('inline-block h-2.5 w-2.5 rounded-sm', phaseFill[c.phase])} />
              <span className="text-slate-700">{phaseLabel(c.phase)}</span>
              <span className="font-semibold tabular-nums text-slate-900">{c.count}</span>
            </Link>
          </li>
        ))}
      </ul>
      <ul className="divide-y divide-slate-100 border-t border-slate-100" aria-label="Newest machines">
        {recent.data.items.map((m) => (
          <li key={m.id} className="flex items-center justify-between gap-2 py-1.5">
            <Link href={`${base}/${m.name}`} className="truncate text-sm font-medium text-brand-600 hover:underline">
              {m.name}
            </Link>
            <span className="flex items-center gap-2 text-xs text-slate-500">
              {m.class} · {m.location}
              <PhaseBadge phase={m.phase} />
            </span>
          </li>
        ))}
      </ul>
      <p className="flex gap-4 text-sm">
        <TextLink href={base}>All machines →</TextLink>
        {canEdit && <TextLink href={`${base}?request=1`}>Request a machine</TextLink>}
      </p>
    </div>
  );
}
