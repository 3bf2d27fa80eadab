'use client';
import { Badge, Spinner, cx } from '@/components/ui/primitives';
import type { MachinePhase } from '@/server/fleet/phases';
import { capacityTone, operationTone, phaseLabel, phaseTone, type CapacityState, type LastOperation } from './format';
import { useExactStatusText } from './hooks';
import type { LiveState } from './live';
import { plainReason } from './plain-words';

/** A machine's phase as a coloured badge; in-flight phases carry a spinner. */
export function PhaseBadge({ phase }: { phase: MachinePhase | string }) {
  const tone = phaseTone[phase as MachinePhase] ?? 'slate';
  const moving = phase === 'Allocating' || phase === 'Bound' || phase === 'Installing' || phase === 'Releasing';
  return (
    <span data-testid="phase" data-phase={phase} className="inline-flex items-center gap-1">
      <Badge tone={tone}>
        {moving && <Spinner className="mr-1 h-2.5! w-2.5! border-[1.5px]!" />}
        {phaseLabel(phase)}
      </Badge>
    </span>
  );
}

export function CapacityStateBadge({ state }: { state: string }) {
  return <Badge tone={capacityTone[state as CapacityState] ?? 'slate'}>{state}</Badge>;
}

/** The newest provider operation of a machine: `install · Succeeded`, with attempts and error in the tooltip. */
export function OperationSummary({ op }: { op: LastOperation | null | undefined }) {
  const exact = useExactStatusText();
  if (!op) return <span className="text-slate-500">—</span>;
  // `attempts` counts outcomes that came back Unknown (lost response, timeout) and were looked up again.
  const title = [
    `operation ${op.id}`,
    op.attempts > 0 && `${op.attempts} unresolved ${op.attempts === 1 ? 'attempt' : 'attempts'}`,
    exact ? op.lastError : plainReason(op.lastError),
  ]
    .filter(Boolean)
    .join(' · ');
  return (
    <span className="inline-flex items-center gap-1.5 whitespace-nowrap text-xs" title={title}>
      <span className="text-slate-600">{op.kind}</span>
      <Badge tone={operationTone(op.state)}>{op.state}</Badge>
      {op.attempts > 0 && (
        <span className="text-slate-500" aria-label={`${op.attempts} retries`}>
          ↻{op.attempts}
        </span>
      )}
    </span>
  );
}

/** Whether the view follows changes as they happen (see live.ts), and when it is refetching. */
export function LiveIndicator({ state, fetching }: { state: LiveState; fetching?: boolean }) {
  const label = state === 'live' ? 'Live' : state === 'connecting' ? 'Connecting…' : 'Reconnecting…';
  const title =
    state === 'live'
      ? 'This view updates itself as work progresses'
      : state === 'connecting'
        ? 'Connecting to live updates'
        : 'Live updates are interrupted; reconnecting (the view still refreshes every minute)';
  return (
    <span data-testid="live-indicator" data-state={state} className="inline-flex items-center gap-1.5 text-xs text-slate-500" title={title}>
      <span
        className={cx(
          'inline-block h-2 w-2 rounded-full',
          state === 'live' ? 'bg-emerald-500' : state === 'connecting' ? 'bg-slate-300' : 'bg-amber-500',
          fetching ? 'opacity-100' : 'opacity-70',
        )}
        aria-hidden
      />
      {label}
    </span>
  );
}
