'use client';
import { useId, useState, type ReactNode } from 'react';
import { Spinner } from '@/components/simulator/controls';
import { ModalDialog } from '@/components/ui/confirm-dialog';
import { Alert, Badge, Button, cx } from '@/components/ui/primitives';
import type { MachinePhase } from '@/server/fleet/phases';
import { capacityTone, operationTone, phaseLabel, phaseTone, type CapacityState, type LastOperation } from './format';
import type { LiveState } from './live';

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
  if (!op) return <span className="text-slate-400">—</span>;
  // `attempts` counts outcomes that came back Unknown (lost response, timeout) and were looked up again.
  const title = [`operation ${op.id}`, op.attempts > 0 && `${op.attempts} unresolved ${op.attempts === 1 ? 'attempt' : 'attempts'}`, op.lastError].filter(Boolean).join(' · ');
  return (
    <span className="inline-flex items-center gap-1.5 whitespace-nowrap text-xs" title={title}>
      <span className="text-slate-600">{op.kind}</span>
      <Badge tone={operationTone(op.state)}>{op.state}</Badge>
      {op.attempts > 0 && <span className="text-slate-400" aria-label={`${op.attempts} retries`}>↻{op.attempts}</span>}
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
        className={cx('inline-block h-2 w-2 rounded-full', state === 'live' ? 'bg-emerald-500' : state === 'connecting' ? 'bg-slate-300' : 'bg-amber-500', fetching ? 'opacity-100' : 'opacity-70')}
        aria-hidden
      />
      {label}
    </span>
  );
}

/** Previous/next for a server-paginated table, with "1–25 of 80" when the total is known. */
export function Pager({
  label,
  offset,
  count,
  pageSize,
  total,
  hasNext,
  onChange,
}: {
  label: string;
  offset: number;
  count: number;
  pageSize: number;
  total?: number;
  hasNext: boolean;
  onChange: (offset: number) => void;
}) {
  if (offset === 0 && !hasNext) return null;
  return (
    <nav aria-label={label} className="mt-3 flex items-center justify-between text-sm text-slate-600">
      <span>
        Showing {count ? offset + 1 : 0}–{offset + count}
        {total !== undefined && ` of ${total.toLocaleString('en-US')}`}
      </span>
      <div className="flex gap-2">
        <Button variant="secondary" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - pageSize))}>
          Previous
        </Button>
        <Button variant="secondary" disabled={!hasNext} onClick={() => onChange(offset + pageSize)}>
          Next
        </Button>
      </div>
    </nav>
  );
}

/**
 * A modal that asks for a reason before an audited action (a ModalDialog). With `required`, the action stays disabled until a reason is typed. It stays open while
 * the action runs and shows the action's error where the user is looking.
 */
export function ReasonDialog({
  title,
  children,
  confirmLabel,
  fieldLabel = 'Reason',
  tone = 'danger',
  required = true,
  placeholder,
  pending = false,
  error,
  onConfirm,
  onCancel,
}: {
  title: string;
  children?: ReactNode;
  confirmLabel: string;
  /** What the text is called (a reason, a note). */
  fieldLabel?: string;
  tone?: 'danger' | 'primary';
  required?: boolean;
  placeholder?: string;
  pending?: boolean;
  error?: string | null;
  onConfirm: (reason: string) => void;
  onCancel: () => void;
}) {
  const reasonId = useId();
  const [reason, setReason] = useState('');
  const missing = required && reason.trim() === '';
  return (
    <ModalDialog title={title} pending={pending} onCancel={onCancel}>
      {(heading) => (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (!missing) onConfirm(reason.trim());
          }}
        >
          <div className="space-y-3 p-5">
            {heading}
            {children && <div className="text-sm text-slate-700">{children}</div>}
            <div className="space-y-1">
              <label htmlFor={reasonId} className="block text-sm font-medium text-slate-700">
                {fieldLabel}
                {required ? '' : ' (optional)'}
              </label>
              <textarea
                id={reasonId}
                value={reason}
                onChange={(e) => setReason(e.target.value)}
                maxLength={500}
                rows={3}
                required={required}
                autoFocus
                placeholder={placeholder}
                className="block w-full rounded-md border border-slate-300 bg-white px-2.5 py-1.5 text-sm shadow-sm focus:border-brand-500"
              />
              <p className="text-xs text-slate-500">{required ? 'Required. ' : ''}Recorded in the audit log with your name.</p>
            </div>
            {error && <Alert testId="reason-error">{error}</Alert>}
          </div>
          <div className="flex justify-end gap-2 rounded-b-lg border-t border-slate-100 bg-slate-50 px-5 py-3">
            <Button type="button" variant="secondary" onClick={onCancel} disabled={pending}>
              Cancel
            </Button>
            <Button type="submit" variant={tone} disabled={pending || missing}>
              {pending ? 'Working…' : confirmLabel}
            </Button>
          </div>
        </form>
      )}
    </ModalDialog>
  );
}
