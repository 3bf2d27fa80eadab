import { cx } from '@/components/ui/primitives';
import type { MachinePhase } from '@/server/fleet/phases';
import { phaseLabel, type TimelineEntry } from './format';
import type { Machine } from './machine-cards';

/** The phases a machine goes through when all goes well, for the steps still ahead of it. */
const happyPath: MachinePhase[] = ['Pending', 'AwaitingApproval', 'Allocating', 'Bound', 'Installing', 'Ready'];

/**
 * The strip's steps, from what happened: every phase the machine entered, in order (a phase entered
 * again after another, e.g. Pending after Allocating found no capacity, shows again), the step a
 * failure interrupted marked failed, and — only while the machine is not finished — the steps
 * still ahead on the usual path. A machine rejected while awaiting approval shows Pending, Awaiting
 * approval, Released, never steps it did not take.
 */
function steps(m: Machine, timeline: TimelineEntry[]): { key: string; phase: MachinePhase; state: 'done' | 'current' | 'failed' | 'todo' }[] {
  const entered: MachinePhase[] = ['Pending'];
  for (const e of timeline) {
    if (!e.action.startsWith('machine.phase.')) continue;
    const phase = e.action.slice('machine.phase.'.length) as MachinePhase;
    if (entered[entered.length - 1] !== phase) entered.push(phase);
  }
  if (entered[entered.length - 1] !== m.phase) entered.push(m.phase);
  const out: { key: string; phase: MachinePhase; state: 'done' | 'current' | 'failed' | 'todo' }[] = [];
  entered.forEach((phase, i) => {
    const last = i === entered.length - 1;
    // A failure shows on the step that was running when it happened.
    if (phase === 'Failed') {
      if (out.length) out[out.length - 1].state = 'failed';
      if (last) out.push({ key: `${i}`, phase, state: 'current' });
      return;
    }
    out.push({ key: `${i}`, phase, state: last && phase !== 'Released' ? 'current' : 'done' });
  });
  if (m.phase !== 'Released' && m.phase !== 'Failed') {
    const ahead =
      m.deletionRequestedAt != null || m.phase === 'Releasing'
        ? (['Releasing', 'Released'] as MachinePhase[])
        : happyPath.slice(happyPath.indexOf(m.phase) + 1);
    for (const phase of ahead) {
      if (phase === 'AwaitingApproval' && !m.requiresApproval) continue;
      if (!entered.includes(phase) || phase === 'Released' || phase === 'Releasing') out.push({ key: `ahead-${phase}`, phase, state: 'todo' });
    }
  }
  return out;
}

/** The lifecycle as a strip of steps: done, current, failed (on the step that was running) and still to come. */
export function ProgressStrip({ machine, timeline }: { machine: Machine; timeline: TimelineEntry[] }) {
  return (
    <ol aria-label="Lifecycle" className="flex flex-wrap items-center gap-y-2 text-xs">
      {steps(machine, timeline).map((s, i) => (
        <li key={s.key} className="flex items-center" aria-current={s.state === 'current' ? 'step' : undefined}>
          {i > 0 && <span aria-hidden className={cx('mx-1.5 h-px w-5', s.state === 'todo' ? 'bg-slate-200' : 'bg-slate-400')} />}
          <span
            className={cx(
              'rounded-full px-2 py-0.5 font-medium ring-1 ring-inset',
              s.state === 'done' && 'bg-emerald-50 text-emerald-800 ring-emerald-200',
              s.state === 'current' && 'bg-brand-600 text-white ring-brand-600',
              s.state === 'failed' && 'bg-red-600 text-white ring-red-600',
              s.state === 'todo' && 'bg-white text-slate-500 ring-slate-200',
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
