import { cx } from '@/components/ui/primitives';
import type { MachinePhase } from '@/server/fleet/phases';
import { phaseLabel, type TimelineEntry } from './format';
import type { Machine } from './machine-cards';

/** The steps a machine goes through, for the progress strip (approval only when it needed one). */
function steps(m: Machine, timeline: TimelineEntry[]): { phase: MachinePhase; state: 'done' | 'current' | 'failed' | 'todo' }[] {
  const reached = new Set<string>(['Pending']);
  for (const e of timeline) if (e.action.startsWith('machine.phase.')) reached.add(e.action.slice('machine.phase.'.length));
  const releasing = m.deletionRequestedAt != null || m.phase === 'Releasing' || m.phase === 'Released';
  const path: MachinePhase[] = [
    'Pending',
    ...(m.requiresApproval || reached.has('AwaitingApproval') ? (['AwaitingApproval'] as const) : []),
    'Allocating',
    'Bound',
    'Installing',
    'Ready',
  ];
  if (releasing) path.push('Releasing', 'Released');
  // A failure is shown on the step that was running when it happened.
  const failedAt =
    m.phase === 'Failed'
      ? ([...timeline].reverse().find((e) => e.action === 'machine.phase.Failed')?.before as { phase?: MachinePhase } | null)?.phase
      : undefined;
  return path.map((phase) => {
    if (failedAt === phase) return { phase, state: 'failed' };
    if (phase === m.phase) return { phase, state: 'current' };
    return { phase, state: reached.has(phase) || (m.phase === 'Released' && phase !== 'Released') ? 'done' : 'todo' };
  });
}

/** The lifecycle as a strip of steps: done, current, failed (on the step that was running) and still to come. */
export function ProgressStrip({ machine, timeline }: { machine: Machine; timeline: TimelineEntry[] }) {
  return (
    <ol aria-label="Lifecycle" className="flex flex-wrap items-center gap-y-2 text-xs">
      {steps(machine, timeline).map((s, i) => (
        <li key={s.phase} className="flex items-center" aria-current={s.state === 'current' ? 'step' : undefined}>
          {i > 0 && <span aria-hidden className={cx('mx-1.5 h-px w-5', s.state === 'todo' ? 'bg-slate-200' : 'bg-slate-400')} />}
          <span
            className={cx(
              'rounded-full px-2 py-0.5 font-medium ring-1 ring-inset',
              s.state === 'done' && 'bg-emerald-50 text-emerald-800 ring-emerald-200',
              s.state === 'current' && 'bg-brand-600 text-white ring-brand-600',
              s.state === 'failed' && 'bg-red-600 text-white ring-red-600',
              s.state === 'todo' && 'bg-white text-slate-400 ring-slate-200',
            )}
          >
            {s.state === 'done' && '✓ '}
            {phaseLabel(s.phase)}
            {s.state === 'failed' && ' — failed'}
          </span>
        </li>
      ))}
    </ol>
  );
}
