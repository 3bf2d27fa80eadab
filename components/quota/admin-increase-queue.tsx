'use client';
import { StatusBadge } from '@/components/ui/status-badge';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { Pager } from '@/components/ui/pager';
import { Button, Card, EmptyState, Input, Select, Table, Td, formatTime } from '@/components/ui/primitives';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { errorMessage } from '@/components/ui/errors';
import { formatCount } from '@/components/ui/numbers';
import { ErrorLine, useInvalidateQuota } from './admin-parts';
import { resourceName } from './resource-names';
import { ADMIN_PAGE_SIZE, queueInput } from './queries';

/** Tenants' requests for more quota, oldest first: approve (possibly a different amount) or reject with a reason. */
export function IncreaseQueue() {
  const trpc = useTRPC();
  const invalidate = useInvalidateQuota();
  const [status, setStatus] = useState<'Pending' | 'Approved' | 'Rejected'>('Pending');
  const [offset, setOffset] = useState(0);
  const queue = useQuery({ ...trpc.quota.admin.increases.queue.queryOptions(queueInput(status, offset)), placeholderData: keepPreviousData });
  // An approval is confirmed first, with what it changes; afterwards the page says what changed.
  const [confirming, setConfirming] = useState<{
    id: string;
    project: string;
    resourceType: string;
    amount: number;
    limit: number | null;
    reason?: string;
  } | null>(null);
  const [approved, setApproved] = useState<string | null>(null);
  const approve = useMutation(
    trpc.quota.admin.increases.approve.mutationOptions({
      onSuccess: () => {
        if (confirming) setApproved(describeApproval(confirming, 'done'));
        setConfirming(null);
        void invalidate();
      },
    }),
  );
  // A rejection is confirmed too: the tenant is told no, and the request cannot be decided again.
  const [rejecting, setRejecting] = useState<{ id: string; project: string; resourceType: string; amount: number; reason: string } | null>(null);
  const reject = useMutation(
    trpc.quota.admin.increases.reject.mutationOptions({
      onSuccess: () => {
        if (rejecting)
          setApproved(`Rejected ${rejecting.project}'s request for ${formatCount(rejecting.amount)} more ${resourceName(rejecting.resourceType)}.`);
        setRejecting(null);
        void invalidate();
      },
    }),
  );
  const items = queue.data?.items ?? [];
  return (
    <Card
      title="Increase requests"
      actions={
        <Select
          aria-label="Request status"
          className="w-36"
          value={status}
          onChange={(e) => {
            setStatus(e.target.value as typeof status);
            setOffset(0);
          }}
        >
          <option value="Pending">Pending</option>
          <option value="Approved">Approved</option>
          <option value="Rejected">Rejected</option>
        </Select>
      }
    >
      <ErrorLine error={confirming || rejecting ? null : (approve.error ?? reject.error)} testId="queue-error" />
      {rejecting && (
        <ConfirmDialog
          title={`Reject ${rejecting.project}'s request for ${formatCount(rejecting.amount)} more ${resourceName(rejecting.resourceType)}?`}
          confirmLabel="Reject"
          pending={reject.isPending}
          error={reject.error ? errorMessage(reject.error) : null}
          onCancel={() => {
            setRejecting(null);
            reject.reset();
          }}
          onConfirm={() => reject.mutate({ id: rejecting.id, reason: rejecting.reason })}
        >
          {rejecting.reason
            ? `The request is closed with your reason (“${rejecting.reason}”), which the project's members see; it cannot be approved afterwards.`
            : "A rejection needs a reason, which the project's members see: cancel and write one in the Reason field."}
        </ConfirmDialog>
      )}
      {approved && (
        <p className="mb-3 rounded-md border border-emerald-200 bg-emerald-50 px-3 py-2 text-sm text-emerald-900" role="status" data-testid="approval-done">
          {approved}
        </p>
      )}
      {confirming && (
        <ConfirmDialog
          title={`Approve ${formatCount(confirming.amount)} more ${resourceName(confirming.resourceType)} for ${confirming.project}?`}
          confirmLabel="Approve"
          tone="primary"
          pending={approve.isPending}
          error={approve.error ? errorMessage(approve.error) : null}
          onCancel={() => {
            setConfirming(null);
            approve.reset();
          }}
          onConfirm={() => approve.mutate({ id: confirming.id, amount: confirming.amount, reason: confirming.reason })}
        >
          {describeApproval(confirming, 'ask')}
        </ConfirmDialog>
      )}
      {queue.isSuccess && items.length === 0 ? (
        <EmptyState title={status === 'Pending' ? 'No requests waiting' : `No ${status.toLowerCase()} requests`}>
          Tenants&apos; requests for more quota appear here, oldest first, with their reason and the project&apos;s bucket now.
        </EmptyState>
      ) : (
        <Table head={['Requested', 'Project', 'Resource type', 'Amount', 'Reason', 'Bucket now', status === 'Pending' ? 'Decide' : 'Decision']}>
          {items.map((r) => (
            <tr key={r.id} data-testid="queue-row">
              <Td className="whitespace-nowrap font-mono text-xs">
                {formatTime(r.createdAt)}
                <span className="block font-sans text-slate-500">{r.requestedBy}</span>
              </Td>
              <Td>{r.project}</Td>
              <Td className="text-xs">{r.resourceType}</Td>
              <Td className="tabular-nums">{r.amount}</Td>
              <Td>{r.reason}</Td>
              <Td className="tabular-nums text-xs">{r.bucket ? `${r.bucket.allocated} of ${r.bucket.limit}` : 'no bucket'}</Td>
              <Td>
                {r.status === 'Pending' ? (
                  <form
                    className="flex flex-wrap items-center gap-1.5"
                    onSubmit={(e) => {
                      e.preventDefault();
                      const f = new FormData(e.currentTarget);
                      const submitter = (e.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
                      const reason = String(f.get('reason') ?? '');
                      if (submitter?.value === 'reject') {
                        setApproved(null);
                        reject.reset();
                        setRejecting({ id: r.id, project: r.project, resourceType: r.resourceType, amount: r.amount, reason });
                      } else {
                        setApproved(null);
                        setConfirming({
                          id: r.id,
                          project: r.project,
                          resourceType: r.resourceType,
                          amount: Number(f.get('amount')) || r.amount,
                          limit: r.bucket ? Number(r.bucket.limit) : null,
                          reason: reason || undefined,
                        });
                      }
                    }}
                  >
                    <Input name="amount" type="number" min={1} defaultValue={r.amount} aria-label="Amount to grant" className="w-20" />
                    <Input name="reason" aria-label="Reason" placeholder="reason (required to reject)" className="w-44" />
                    <Button type="submit" value="approve" disabled={approve.isPending}>
                      Approve
                    </Button>
                    <Button type="submit" value="reject" variant="danger" disabled={reject.isPending}>
                      Reject
                    </Button>
                  </form>
                ) : (
                  <span className="text-sm text-slate-600">
                    <StatusBadge kind="request" state={r.status} /> {r.status === 'Approved' ? `${r.approvedAmount} as ${r.grantName}` : ''} by {r.decidedBy}
                    {r.decisionReason ? `: ${r.decisionReason}` : ''}
                  </span>
                )}
              </Td>
            </tr>
          ))}
        </Table>
      )}
      {queue.data && (
        <Pager
          label="Increase requests pages"
          offset={offset}
          count={items.length}
          pageSize={ADMIN_PAGE_SIZE}
          total={queue.data.total}
          hasNext={offset + items.length < queue.data.total}
          onChange={setOffset}
        />
      )}
    </Card>
  );
}

/** What approving changes, as a question before and a statement after: the project's limit, from and to. */
function describeApproval(a: { project: string; resourceType: string; amount: number; limit: number | null }, when: 'ask' | 'done'): string {
  const what = `${a.project}'s ${resourceName(a.resourceType)} limit`;
  const change =
    a.limit === null
      ? `${when === 'ask' ? 'becomes' : 'is now'} ${formatCount(a.amount)}`
      : `${when === 'ask' ? 'goes' : 'went'} from ${formatCount(a.limit)} to ${formatCount(a.limit + a.amount)}`;
  return when === 'ask' ? `A grant of ${formatCount(a.amount)} is added: ${what} ${change}.` : `Approved: ${what} ${change}.`;
}
