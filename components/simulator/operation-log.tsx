'use client';
import { useState } from 'react';
import { Badge, Card, EmptyState, Spinner, Table, Td, cx, formatTime } from '@/components/ui/primitives';
import type { LogEntry } from '@/lib/provider-wire';
import { describeLogEvent, faultLabels, resultTone, shortId } from './format';
import type { LiveMode } from './hooks';

function LiveIndicator({ mode, problem }: { mode: LiveMode; problem: string | null }) {
  const text = {
    connecting: 'connecting…',
    live: 'live',
    reconnecting: 'reconnecting…',
    polling: 'polling every 2 s',
  }[mode];
  return (
    <span className="flex items-center gap-2 text-xs font-medium" data-testid="log-live" title={problem ?? undefined}>
      {mode === 'live' ? (
        <span aria-hidden className="relative flex h-2.5 w-2.5">
          <span className="absolute inline-flex h-full w-full animate-ping rounded-full bg-emerald-400 opacity-75" />
          <span className="relative inline-flex h-2.5 w-2.5 rounded-full bg-emerald-500" />
        </span>
      ) : mode === 'polling' ? (
        <span aria-hidden className="inline-block h-2.5 w-2.5 rounded-full bg-brand-500" />
      ) : (
        <Spinner className="text-amber-500" />
      )}
      <span className={mode === 'live' ? 'text-emerald-700' : mode === 'polling' ? 'text-brand-700' : 'text-amber-700'}>{text}</span>
    </span>
  );
}

function FaultCell({ entry }: { entry: LogEntry }) {
  if (entry.type === 'fault') {
    return (
      <span className="flex flex-wrap items-center gap-1">
        {entry.fault && <Badge tone={entry.event === 'set' ? 'amber' : 'slate'}>{faultLabels[entry.fault]}</Badge>}
        <span className="text-xs text-slate-500">{entry.detail}</span>
      </span>
    );
  }
  return (
    <span className="flex flex-wrap items-center gap-1">
      {entry.faultsApplied?.map((fault) => (
        <Badge key={fault} tone="amber">
          {faultLabels[fault]}
        </Badge>
      ))}
      {entry.errorCode && <code className="font-mono text-xs text-red-700">{entry.errorCode}</code>}
      {!entry.faultsApplied?.length && !entry.errorCode && <span className="text-slate-500">—</span>}
    </span>
  );
}

/** The simulator's log, newest first: operations (with the faults that acted on them), fault changes, new assets. */
export function OperationLog({ entries, mode, problem }: { entries: LogEntry[]; mode: LiveMode; problem: string | null }) {
  const [operationsOnly, setOperationsOnly] = useState(false);
  const shown = operationsOnly ? entries.filter((e) => e.type === 'operation') : entries;
  return (
    <Card
      title={
        <span className="flex items-center gap-3">
          Operation log <LiveIndicator mode={mode} problem={problem} />
        </span>
      }
      actions={
        <label className="flex items-center gap-2 text-xs text-slate-600">
          <input type="checkbox" checked={operationsOnly} onChange={(e) => setOperationsOnly(e.target.checked)} className="rounded border-slate-300" />
          Operations only
        </label>
      }
    >
      {problem && mode !== 'live' && <p className="mb-2 text-xs text-amber-800">{problem}</p>}
      {shown.length === 0 ? (
        <EmptyState title={mode === 'connecting' ? 'Loading the log…' : 'Nothing logged yet'}>
          Operations submitted to the simulator appear here as they happen, with their result and the faults that acted on them.
        </EmptyState>
      ) : (
        <div className="max-h-[32rem] overflow-y-auto">
          <Table head={['#', 'Time', 'Event', 'Operation', 'Asset', 'Epoch', 'Kind', 'Result', 'Fault applied / detail']}>
            {shown.map((entry) => (
              <tr key={entry.seq} data-testid="log-row" className={cx(entry.faultsApplied?.length ? 'bg-amber-50' : entry.type === 'fault' && 'bg-slate-50')}>
                <Td className="tabular-nums text-slate-500">{entry.seq}</Td>
                <Td className="whitespace-nowrap text-xs">{formatTime(entry.at).slice(11)}</Td>
                <Td className="whitespace-nowrap text-xs">{describeLogEvent(entry)}</Td>
                <Td>
                  {entry.operationId ? (
                    <code className="font-mono text-xs" title={entry.operationId}>
                      {entry.operationId}
                    </code>
                  ) : (
                    '—'
                  )}
                </Td>
                <Td>{entry.assetId ? <code className="whitespace-nowrap font-mono text-xs">{entry.assetId}</code> : '—'}</Td>
                <Td className="tabular-nums">
                  {entry.epoch ?? '—'}
                  {entry.bindingId && (
                    <span className="block text-xs text-slate-500" title={`binding ${entry.bindingId}`}>
                      {shortId(entry.bindingId)}
                    </span>
                  )}
                </Td>
                <Td>{entry.kind ?? '—'}</Td>
                <Td>{entry.result ? <Badge tone={resultTone(entry.result)}>{entry.result}</Badge> : '—'}</Td>
                <Td>
                  <FaultCell entry={entry} />
                </Td>
              </tr>
            ))}
          </Table>
        </div>
      )}
    </Card>
  );
}
