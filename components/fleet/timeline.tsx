'use client';
import { useState } from 'react';
import { Badge, cx, formatTime } from '@/components/ui/primitives';
import { operationTone, phaseLabel, phaseTone, toDate, type TimelineEntry } from './format';
import { useExactStatusText } from './hooks';
import { plainReason } from './plain-words';

type Kind = 'phase' | 'operation' | 'event';

interface Item {
  key: string;
  kind: Kind;
  at: Date | null;
  title: string;
  actor: string;
  reason: string | null;
  phase?: string;
  from?: string;
  op?: { id: string; state: string; attempts: number; epoch: unknown; fencingToken: unknown };
}

const eventTitles: Record<string, string> = {
  'machine.create': 'Requested',
  'machine.release.requested': 'Release requested',
  'machine.request.rejected': 'Rejected by an operator',
  'machine.release.forced': 'Force released by an operator',
  'machine.install.retry': 'Install retried',
  'machine.wait': 'Waiting',
};

/** What a provider operation is for, in words. */
const operationNames: Record<string, string> = { install: 'Installation', power: 'Power change', cleanup: 'Clean-up', release: 'Release' };

/** One provider outcome in words: what the provider said, or that nobody knows yet, and how an unknown outcome was resolved. */
function operationTitle(kind: string, state: string, before: { state?: string } | null, hadError: boolean): string {
  const name = operationNames[kind] ?? `Provider ${kind}`;
  if (before?.state === state) return hadError ? `${name}: retrying after an error` : `${name}: ${state.toLowerCase()}`;
  const resolved = before?.state === 'Unknown' ? ' (unknown outcome resolved)' : '';
  switch (state) {
    case 'Admitted':
      return `${name} queued for the provider`;
    case 'Submitted':
      return `${name} sent to the provider`;
    case 'Succeeded':
      return `${name} succeeded${resolved}`;
    case 'Failed':
      return `${name} failed${resolved}`;
    case 'Unknown':
      return `${name}: outcome unknown (no answer from the provider; it is looked up again)`;
    default:
      return `${name}: ${state}`;
  }
}

/**
 * One timeline row from one recorded fact, or null for a row that says nothing new (a phase
 * "change" to the phase the machine was already in: the operation rows show what happened).
 */
function describe(entry: TimelineEntry, i: number): Item | null {
  const at = toDate(entry.at as Date | string);
  const before = (entry.before ?? null) as { phase?: string; state?: string } | null;
  const after = (entry.after ?? {}) as {
    phase?: string;
    id?: string;
    kind?: string;
    state?: string;
    attempts?: number;
    epoch?: unknown;
    fencingToken?: unknown;
  };
  const base = { key: `${i}-${entry.action}`, at, actor: entry.actor, reason: entry.reason };
  if (entry.action.startsWith('machine.phase.')) {
    const phase = entry.action.slice('machine.phase.'.length);
    if (before?.phase === phase) return null;
    return { ...base, kind: 'phase', title: phaseLabel(phase), phase, from: before?.phase };
  }
  if (entry.action.startsWith('operation.')) {
    const [, kind = '', state = after.state ?? ''] = entry.action.split('.');
    const op = { id: after.id ?? '', state, attempts: after.attempts ?? 0, epoch: after.epoch, fencingToken: after.fencingToken };
    return { ...base, kind: 'operation', title: operationTitle(kind, state, before, entry.reason != null), op };
  }
  return { ...base, kind: 'event', title: eventTitles[entry.action] ?? entry.action };
}

const dot: Record<Kind, string> = { phase: 'bg-brand-500', operation: 'bg-violet-500', event: 'bg-slate-400' };
const filters: { kind: Kind | 'all'; label: string }[] = [
  { kind: 'all', label: 'All' },
  { kind: 'phase', label: 'Phases' },
  { kind: 'operation', label: 'Operations' },
  { kind: 'event', label: 'Events' },
];

/**
 * A machine's history, oldest first, built from what was recorded: phases entered (with the reason
 * each happened), each provider outcome (sent, succeeded, failed, unknown and how it was resolved,
 * retries with their error), waits with their reason, and other events (request, release,
 * rejection). Tenants read each reason as a
 * plain sentence, with the exact text and the operation's identifiers under its Details.
 */
export function MachineTimeline({ entries }: { entries: TimelineEntry[] }) {
  const [show, setShow] = useState<Kind | 'all'>('all');
  const exact = useExactStatusText();
  const items = entries.map(describe).filter((x): x is Item => x !== null);
  const count = (k: Kind | 'all') => (k === 'all' ? items.length : items.filter((x) => x.kind === k).length);
  const visible = show === 'all' ? items : items.filter((x) => x.kind === show);

  return (
    <div>
      <div className="mb-3 flex flex-wrap gap-1" role="group" aria-label="Show in timeline">
        {filters.map((f) => (
          <button
            key={f.kind}
            type="button"
            aria-pressed={show === f.kind}
            onClick={() => setShow(f.kind)}
            className={cx(
              'rounded-full px-2.5 py-0.5 text-xs font-medium ring-1 ring-inset',
              show === f.kind ? 'bg-slate-800 text-white ring-slate-800' : 'bg-white text-slate-700 ring-slate-300 hover:bg-slate-50',
            )}
          >
            {f.label} <span className="tabular-nums opacity-70">{count(f.kind)}</span>
          </button>
        ))}
      </div>
      {visible.length === 0 ? (
        <p className="text-sm text-slate-500">Nothing of this kind yet.</p>
      ) : (
        <ol aria-label="Timeline" className="relative space-y-3 border-l border-slate-200 pl-5">
          {visible.map((item) => (
            <li key={item.key} data-testid="timeline-entry" data-kind={item.kind} className="relative">
              <span aria-hidden className={cx('absolute top-1.5 -left-[25px] h-2.5 w-2.5 rounded-full ring-4 ring-white', dot[item.kind])} />
              <div className="flex flex-wrap items-baseline gap-x-2 gap-y-0.5">
                <span className="font-mono text-xs text-slate-500" title={item.at?.toISOString()}>
                  {formatTime(item.at)}
                </span>
                {item.kind === 'phase' ? (
                  <span className="text-sm text-slate-900">
                    {item.from && <span className="text-slate-500">{phaseLabel(item.from)} → </span>}
                    <Badge tone={phaseTone[item.phase as keyof typeof phaseTone] ?? 'slate'}>{item.title}</Badge>
                  </span>
                ) : (
                  <span className="text-sm font-medium text-slate-900">{item.title}</span>
                )}
                {item.op && <Badge tone={operationTone(item.op.state)}>{item.op.state}</Badge>}
                <span className="text-xs text-slate-500">by {item.actor}</span>
              </div>
              {exact ? (
                <>
                  {item.reason && <p className="mt-0.5 text-sm text-slate-700">{item.reason}</p>}
                  {item.op && <OperationDetails op={item.op} />}
                </>
              ) : (
                <>
                  {item.reason && <p className="mt-0.5 text-sm text-slate-700">{plainReason(item.reason)}</p>}
                  {(item.op || (item.reason && plainReason(item.reason) !== item.reason)) && (
                    <details className="mt-0.5 text-xs text-slate-500">
                      <summary className="cursor-pointer select-none">Details</summary>
                      {item.reason && <p className="mt-0.5 text-slate-600">{item.reason}</p>}
                      {item.op && <OperationDetails op={item.op} />}
                    </details>
                  )}
                </>
              )}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

function OperationDetails({ op }: { op: NonNullable<Item['op']> }) {
  return (
    <p className="mt-0.5 font-mono text-xs text-slate-500">
      {op.id} · epoch {String(op.epoch)} · fencing token {String(op.fencingToken)}
      {op.attempts > 0 && ` · ${op.attempts} unresolved ${op.attempts === 1 ? 'attempt' : 'attempts'} (looked up again)`}
    </p>
  );
}
