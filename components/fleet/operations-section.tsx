'use client';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { useNow } from '@/components/ui/hooks';
import { Alert, Badge, Button, Card, EmptyState, formatTime } from '@/components/ui/primitives';
import { ReasonDialog } from '@/components/ui/reason-dialog';
import { ago, operationTone, toDate, type OperationRow } from './format';
import { useInvalidateFleet } from './hooks';

/** Provider operations whose outcome is Unknown, Failed or still running; an operator acknowledges one with a note. */
export function OperationsSection({ rows, error }: { rows: OperationRow[]; error: unknown }) {
  const now = useNow(5_000);
  const trpc = useTRPC();
  const invalidate = useInvalidateFleet();
  const [acknowledging, setAcknowledging] = useState<OperationRow | null>(null);
  const [cancelling, setCancelling] = useState<OperationRow | null>(null);
  const cancel = useMutation(
    trpc.fleet.operations.cancel.mutationOptions({
      onSuccess: () => {
        setCancelling(null);
        void invalidate();
      },
    }),
  );
  const acknowledge = useMutation(
    trpc.fleet.operations.acknowledge.mutationOptions({
      onSuccess: () => {
        setAcknowledging(null);
        void invalidate();
      },
    }),
  );
  const unknown = rows.filter((o) => o.state === 'Unknown').length;
  const failed = rows.filter((o) => o.state === 'Failed').length;
  return (
    <Card
      title="Provider operations needing attention"
      actions={
        rows.length > 0 && (
          <span className="flex gap-1.5">
            {unknown > 0 && <Badge tone="amber">{unknown} unknown</Badge>}
            {failed > 0 && <Badge tone="red">{failed} failed</Badge>}
          </span>
        )
      }
    >
      {error != null && <Alert testId="operations-error">{errorMessage(error)}</Alert>}
      {rows.length === 0 ? (
        <EmptyState title="Nothing needs attention">
          Provider operations whose outcome is Unknown (a lost response or timeout, being resolved by lookup), that failed, or that are still running appear
          here. They leave once resolved (a retry succeeded, or the device was verified clean since) or acknowledged by an operator with a note.
        </EmptyState>
      ) : (
        <div className="overflow-x-auto rounded-md border border-slate-200">
          <table className="min-w-full divide-y divide-slate-200 text-sm" aria-label="Provider operations">
            <thead className="bg-slate-50">
              <tr>
                {['Operation', 'State', 'Retries', 'Last error', 'Device', 'Machine', 'Driven by', 'Epoch / fence', 'Updated', ''].map((h, i) => (
                  <th key={i} scope="col" className="px-3 py-2 text-left text-xs font-semibold uppercase tracking-wide text-slate-500">
                    {h || <span className="sr-only">Actions</span>}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100 bg-white">
              {rows.map((o) => (
                <tr key={o.id} data-testid="operation-row">
                  <td className="px-3 py-2">
                    <span className="font-medium text-slate-900">{o.kind}</span>
                    <span className="block max-w-56 truncate font-mono text-xs text-slate-500" title={o.id}>
                      {o.id}
                    </span>
                  </td>
                  <td className="px-3 py-2">
                    <Badge tone={operationTone(o.state)}>{o.state}</Badge>
                  </td>
                  <td className="px-3 py-2 tabular-nums text-slate-700" title="Outcomes that came back Unknown and were looked up again">
                    {o.attempts}
                  </td>
                  <td className="max-w-72 px-3 py-2 text-xs text-red-800">{o.lastError ?? <span className="text-slate-500">—</span>}</td>
                  <td className="px-3 py-2">
                    <code className="font-mono text-xs">{o.deviceRef}</code>
                  </td>
                  <td className="px-3 py-2 text-xs text-slate-700">{o.machine ? `${o.project}/${o.machine}` : '—'}</td>
                  <td className="px-3 py-2 font-mono text-xs text-slate-600" title={o.caller ?? undefined}>
                    {o.caller ? o.caller.replace(/^spiffe:\/\/[^/]+\/meridian\//, '') : '—'}
                  </td>
                  <td className="px-3 py-2 font-mono text-xs tabular-nums text-slate-600">
                    {String(o.epoch)} / {String(o.fencingToken)}
                  </td>
                  <td className="whitespace-nowrap px-3 py-2 text-xs text-slate-600" title={formatTime(toDate(o.updatedAt))} suppressHydrationWarning>
                    {ago(o.updatedAt, now)}
                  </td>
                  <td className="whitespace-nowrap px-3 py-1.5 text-right">
                    {o.kind !== 'cleanup' && o.machine && (o.state === 'Admitted' || o.state === 'Submitted' || o.state === 'Unknown') && (
                      <Button variant="secondary" className="mr-1.5 px-2 py-1 text-xs" aria-label={`Cancel ${o.id}`} onClick={() => setCancelling(o)}>
                        Cancel
                      </Button>
                    )}
                    <Button variant="secondary" className="px-2 py-1 text-xs" aria-label={`Acknowledge ${o.id}`} onClick={() => setAcknowledging(o)}>
                      Acknowledge
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cancelling && (
        <ReasonDialog
          title={`Cancel ${cancelling.kind} on ${cancelling.deviceRef}?`}
          confirmLabel="Cancel operation"
          fieldLabel="Reason"
          placeholder="e.g. wrong image requested (ticket OPS-1234)"
          pending={cancel.isPending}
          error={cancel.error ? errorMessage(cancel.error) : null}
          onCancel={() => {
            setCancelling(null);
            cancel.reset();
          }}
          onConfirm={(reason) => cancel.mutate({ id: cancelling.id, reason })}
        >
          <p>
            The machine {cancelling.project}/{cancelling.machine} is cancelled with it: the provider may have started, so the device is cleaned and the cleanup
            verified before it returns to the pool. Your reason is recorded in the audit log.
          </p>
        </ReasonDialog>
      )}
      {acknowledging && (
        <ReasonDialog
          title={`Acknowledge ${acknowledging.kind} on ${acknowledging.deviceRef}?`}
          confirmLabel="Acknowledge"
          fieldLabel="Note"
          tone="primary"
          placeholder="e.g. known provider incident, device replaced (ticket OPS-1234)"
          pending={acknowledge.isPending}
          error={acknowledge.error ? errorMessage(acknowledge.error) : null}
          onCancel={() => {
            setAcknowledging(null);
            acknowledge.reset();
          }}
          onConfirm={(note) => acknowledge.mutate({ id: acknowledging.id, note })}
        >
          <p>
            <code className="font-mono">{acknowledging.id}</code> is {acknowledging.state}
            {acknowledging.lastError ? `: ${acknowledging.lastError}` : ''}. Acknowledged, it leaves this list; your note is recorded in the audit log.
          </p>
        </ReasonDialog>
      )}
    </Card>
  );
}
