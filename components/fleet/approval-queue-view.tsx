'use client';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { useNow } from '@/components/ui/hooks';
import { Pager } from '@/components/ui/pager';
import { Alert, Badge, Button, EmptyState, cx } from '@/components/ui/primitives';
import { statusTable } from '@/components/ui/status';
import { ReasonDialog } from '@/components/ui/reason-dialog';
import { ago, toDate, type QueueItem } from './format';
import { useInvalidateFleet } from './hooks';
import { SAFETY_REFETCH_MS, useFleetLive } from './live';
import { LiveIndicator } from './parts';
import { QUEUE_PAGE_SIZE, queueInput } from './queries';

type BulkResult = { id: string; ok: true; name: string } | { id: string; ok: false; error: string };

/**
 * Machine requests awaiting approval, oldest first, each with the free capacity that matches its
 * class and location now. Approve one, several at once (each is its own decision; the result says
 * which went through), or reject with a reason the tenant will see.
 */
export function ApprovalQueueView() {
  const trpc = useTRPC();
  const invalidate = useInvalidateFleet();
  const [offset, setOffset] = useState(0);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [rejecting, setRejecting] = useState<QueueItem | null>(null);
  const [outcome, setOutcome] = useState<{ approved: string[]; failed: { name: string; error: string }[] } | null>(null);
  // New requests arrive from tenants at any time: the queue follows them live (see live.ts).
  const live = useFleetLive('operator');
  const queue = useQuery({ ...trpc.fleet.queue.list.queryOptions(queueInput(offset)), placeholderData: keepPreviousData, refetchInterval: SAFETY_REFETCH_MS });
  const now = useNow(5_000);
  const rows = queue.data ?? [];
  const items = rows.slice(0, QUEUE_PAGE_SIZE);
  const hasNext = rows.length > QUEUE_PAGE_SIZE;
  const names = new Map(items.map((i) => [i.id, i.name]));
  const chosen = items.filter((i) => selected.has(i.id));

  const done = (approved: string[], failed: { name: string; error: string }[]) => {
    setOutcome({ approved, failed });
    setSelected((s) => new Set([...s].filter((id) => !approved.includes(names.get(id) ?? ''))));
    void invalidate();
  };
  const approve = useMutation(trpc.fleet.queue.approve.mutationOptions({ onSuccess: (r) => done([r.name], []) }));
  const approveMany = useMutation(
    trpc.fleet.queue.approveMany.mutationOptions({
      onSuccess: (results: BulkResult[]) =>
        done(
          results.filter((r): r is Extract<BulkResult, { ok: true }> => r.ok).map((r) => r.name),
          results.filter((r): r is Extract<BulkResult, { ok: false }> => !r.ok).map((r) => ({ name: names.get(r.id) ?? r.id, error: r.error })),
        ),
    }),
  );
  const reject = useMutation(
    trpc.fleet.queue.reject.mutationOptions({
      onSuccess: (r) => {
        setRejecting(null);
        setOutcome(null);
        setSelected((s) => new Set([...s].filter((id) => id !== r.id)));
        void invalidate();
      },
    }),
  );
  const busy = approve.isPending || approveMany.isPending;
  const allChosen = items.length > 0 && chosen.length === items.length;
  const toggle = (id: string, on: boolean) => setSelected((s) => (on ? new Set(s).add(id) : new Set([...s].filter((x) => x !== id))));

  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <div className="flex items-center gap-3">
          <Button disabled={busy || chosen.length === 0} onClick={() => approveMany.mutate({ ids: chosen.map((c) => c.id) })}>
            {approveMany.isPending ? 'Approving…' : `Approve selected (${chosen.length})`}
          </Button>
          {chosen.length > 0 && (
            <Button variant="ghost" className="text-xs" onClick={() => setSelected(new Set())}>
              Clear selection
            </Button>
          )}
        </div>
        <LiveIndicator state={live} fetching={queue.isFetching} />
      </div>
      {(approve.error || approveMany.error) && <Alert testId="queue-error">{errorMessage(approve.error ?? approveMany.error)}</Alert>}
      {outcome && (outcome.approved.length > 0 || outcome.failed.length > 0) && (
        <Alert tone={outcome.failed.length ? 'amber' : 'green'} testId="queue-outcome">
          {outcome.approved.length > 0 && (
            <p>
              Approved {outcome.approved.length === 1 ? outcome.approved[0] : `${outcome.approved.length} requests: ${outcome.approved.join(', ')}`} —
              allocation starts now.
            </p>
          )}
          {outcome.failed.map((f) => (
            <p key={f.name}>
              Not approved: <strong>{f.name}</strong> — {f.error}
            </p>
          ))}
        </Alert>
      )}
      {queue.error && <Alert testId="queue-load-error">{errorMessage(queue.error)}</Alert>}
      {queue.isSuccess && items.length === 0 && offset === 0 ? (
        <EmptyState title="No requests are waiting">
          Machine requests for classes or projects that need approval appear here, oldest first, with the free capacity that matches each. Approve them (one by
          one or in bulk) or reject them with a reason.
        </EmptyState>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
          <table className="min-w-full divide-y divide-slate-200 text-sm" aria-label="Requests awaiting approval">
            <thead className="bg-slate-50">
              <tr>
                <th scope="col" className="w-10 px-3 py-2">
                  <input
                    type="checkbox"
                    aria-label="Select all requests on this page"
                    checked={allChosen}
                    onChange={(e) => setSelected(e.target.checked ? new Set(items.map((i) => i.id)) : new Set())}
                  />
                </th>
                {['Request', 'Project', 'Class', 'Location', 'Profile', 'Free capacity', 'Waiting', ''].map((h, i) => (
                  <th key={i} scope="col" className="px-3 py-2 text-left text-xs font-semibold uppercase tracking-wide text-slate-500">
                    {h || <span className="sr-only">Actions</span>}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody className={cx('divide-y divide-slate-100', queue.isPlaceholderData && 'opacity-60')}>
              {items.map((r) => (
                <tr key={r.id} data-testid="queue-row" className={selected.has(r.id) ? 'bg-brand-50' : undefined}>
                  <td className="px-3 py-2">
                    <input type="checkbox" aria-label={`Select ${r.name}`} checked={selected.has(r.id)} onChange={(e) => toggle(r.id, e.target.checked)} />
                  </td>
                  <td className="px-3 py-2">
                    <span className="font-medium text-slate-900">{r.name}</span>
                    <span className="block text-xs text-slate-500">by {r.createdBy}</span>
                  </td>
                  <td className="px-3 py-2 text-slate-700">{r.project}</td>
                  <td className="px-3 py-2 text-slate-700">{r.class}</td>
                  <td className="px-3 py-2 text-slate-700">{r.location}</td>
                  <td className="px-3 py-2 text-slate-700">{r.profile}</td>
                  <td className="px-3 py-2">
                    {r.freeCapacity > 0 ? (
                      <Badge tone={statusTable.freeCapacity.Free.tone}>
                        {r.freeCapacity} {statusTable.freeCapacity.Free.word}
                      </Badge>
                    ) : (
                      <span title="Approving still works: the request waits in Pending and binds when a machine is released">
                        <Badge tone={statusTable.freeCapacity.NoneFree.tone}>{statusTable.freeCapacity.NoneFree.word}</Badge>
                      </span>
                    )}
                  </td>
                  <td className="whitespace-nowrap px-3 py-2 text-xs text-slate-600" title={toDate(r.createdAt)?.toISOString()} suppressHydrationWarning>
                    {ago(r.createdAt, now)}
                  </td>
                  <td className="whitespace-nowrap px-3 py-1.5 text-right">
                    <div className="flex justify-end gap-1.5">
                      <Button className="px-2 py-1 text-xs" disabled={busy} aria-label={`Approve ${r.name}`} onClick={() => approve.mutate({ id: r.id })}>
                        Approve
                      </Button>
                      <Button variant="secondary" className="px-2 py-1 text-xs text-red-700!" aria-label={`Reject ${r.name}`} onClick={() => setRejecting(r)}>
                        Reject
                      </Button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager label="Queue pages" offset={offset} count={items.length} pageSize={QUEUE_PAGE_SIZE} hasNext={hasNext} onChange={setOffset} />
      {rejecting && (
        <ReasonDialog
          title={`Reject ${rejecting.name}?`}
          confirmLabel="Reject request"
          placeholder="e.g. arm64 capacity is reserved for the migration this week"
          pending={reject.isPending}
          error={reject.error ? errorMessage(reject.error) : null}
          onCancel={() => {
            setRejecting(null);
            reject.reset();
          }}
          onConfirm={(reason) => reject.mutate({ id: rejecting.id, reason })}
        >
          <p>
            The request of <strong>{rejecting.project}</strong> for a {rejecting.class} in {rejecting.location} ends; its quota and addresses are returned. The
            tenant sees your reason in the machine&apos;s timeline.
          </p>
        </ReasonDialog>
      )}
    </div>
  );
}
