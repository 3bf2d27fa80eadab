'use client';
import { StatusBadge } from '@/components/ui/status-badge';
import { UtilizationHistory } from '@/components/capacity/history-chart';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage, fieldError } from '@/components/ui/errors';
import { codeSentence } from '@/components/ui/messages';
import { withResourceWords } from '@/components/ui/resource-names';
import { useCanEdit } from '@/components/projects/hooks';
import { Pager } from '@/components/ui/pager';
import { formatCount } from '@/components/ui/numbers';
import { resourceName } from './resource-names';
import { Alert, Badge, Button, Card, EmptyState, Field, Input, Select, Table, Td, formatTime } from '@/components/ui/primitives';
import { QuotaBar } from './quota-bar';
import { CLAIM_LOG_PAGE_SIZE, claimLogInput, increasesInput, type ClaimLogStatus } from './queries';

/** The project's allowance buckets as bars (also the dashboard's Quota card). */
export function BucketBars({ project, compact = false }: { project: string; compact?: boolean }) {
  const trpc = useTRPC();
  const buckets = useQuery(trpc.quota.buckets.list.queryOptions({ project }));
  if (buckets.error) return <Alert testId="buckets-error">{errorMessage(buckets.error)}</Alert>;
  if (buckets.isSuccess && buckets.data.length === 0) {
    return (
      <EmptyState title="No quota buckets">This project has no grants yet: nothing quota-managed can be created until an operator grants some.</EmptyState>
    );
  }
  return (
    <ul className={compact ? 'space-y-2' : 'space-y-4'} aria-label="Quota buckets">
      {buckets.data?.map((b) => {
        return (
          <li key={b.resourceType}>
            <QuotaBar resourceType={b.resourceType} limit={b.limit} allocated={b.allocated} available={b.available} unit={b.displayUnit} compact={compact} />
            {!compact && (
              <p className="mt-1 flex flex-wrap items-center gap-2 text-xs text-slate-500">
                <span>
                  limit {b.limit.toLocaleString('en-US')} from {b.grantCount} grant{b.grantCount === 1 ? '' : 's'} · {b.claimCount} live claim
                  {b.claimCount === 1 ? '' : 's'}
                </span>
                {b.flag !== 'Ok' && <StatusBadge kind="quota" state={b.flag} />}
                {!b.registered && <Badge tone="slate">not registered</Badge>}
              </p>
            )}
          </li>
        );
      })}
    </ul>
  );
}

function outcomeBadge(status: 'Granted' | 'Released' | 'Denied' | 'Pending' | 'Approved' | 'Rejected') {
  return <StatusBadge kind="request" state={status} />;
}

function IncreaseRequests({ project, canRequest }: { project: string; canRequest: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const types = useQuery(trpc.quota.resourceTypes.queryOptions());
  const requests = useQuery(trpc.quota.increases.list.queryOptions(increasesInput(project)));
  const [sent, setSent] = useState<string | null>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const create = useMutation(
    trpc.quota.increases.create.mutationOptions({
      onSuccess: (r) => {
        setSent(`Your request for ${formatCount(r.amount)} more ${resourceName(r.resourceType)} was sent: an operator will approve or reject it.`);
        // Back to the defaults for the next request.
        formRef.current?.reset();
        void queryClient.invalidateQueries({ queryKey: trpc.quota.increases.list.queryKey() });
      },
    }),
  );

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setSent(null);
    const form = new FormData(event.currentTarget);
    create.mutate({
      project,
      resourceType: String(form.get('resourceType') ?? ''),
      amount: Number(form.get('amount') ?? 0),
      reason: String(form.get('reason') ?? ''),
    });
  }

  const generic = create.error && !fieldError(create.error, 'amount') && !fieldError(create.error, 'reason') ? errorMessage(create.error) : null;
  return (
    <Card title="Increase requests">
      {canRequest ? (
        <form
          ref={formRef}
          onSubmit={onSubmit}
          onChange={() => create.error && create.reset()}
          className="grid gap-3 md:grid-cols-[minmax(0,16rem)_8rem_minmax(0,1fr)_auto] md:items-end"
          aria-label="Request an increase"
        >
          <Field label="Resource type" htmlFor="increase-type" error={fieldError(create.error, 'resourceType')}>
            <Select id="increase-type" name="resourceType" required>
              {types.data?.map((t) => (
                <option key={t.resourceType} value={t.resourceType}>
                  {resourceName(t.resourceType)}
                </option>
              ))}
            </Select>
          </Field>
          <Field label="Amount" htmlFor="increase-amount" error={fieldError(create.error, 'amount')}>
            <Input id="increase-amount" name="amount" type="number" min={1} step={1} required defaultValue={10} />
          </Field>
          <Field label="Reason" htmlFor="increase-reason" error={fieldError(create.error, 'reason')}>
            <Input id="increase-reason" name="reason" placeholder="What you need it for" required minLength={3} maxLength={1000} />
          </Field>
          <Button type="submit" disabled={create.isPending}>
            Request increase
          </Button>
        </form>
      ) : (
        <p className="text-sm text-slate-600">An editor or owner of this project can ask for more.</p>
      )}
      {generic && (
        <div className="mt-3">
          <Alert testId="increase-error">{generic}</Alert>
        </div>
      )}
      {sent && (
        <div className="mt-3">
          <Alert tone="green" testId="increase-sent">
            {sent}
          </Alert>
        </div>
      )}
      <div className="mt-4">
        {requests.data && requests.data.items.length === 0 ? (
          <p className="text-sm text-slate-500">No increase requests yet. Requests and the operator&apos;s decision appear here.</p>
        ) : (
          <Table head={['Requested', 'Resource type', 'Amount', 'Reason', 'Outcome', 'Decision']}>
            {requests.data?.items.map((r) => (
              <tr key={r.id} data-testid="increase-row">
                <Td className="whitespace-nowrap font-mono text-xs">{formatTime(r.createdAt)}</Td>
                <Td>
                  <span title={r.resourceType}>{resourceName(r.resourceType)}</span>
                </Td>
                <Td className="tabular-nums">{r.amount}</Td>
                <Td>{r.reason}</Td>
                <Td>{outcomeBadge(r.status)}</Td>
                <Td className="text-slate-600">
                  {r.status === 'Pending'
                    ? 'awaiting an operator'
                    : r.status === 'Approved'
                      ? `granted ${r.approvedAmount} (grant ${r.grantName ?? '—'}) by ${r.decidedBy}${r.decisionReason ? `: ${r.decisionReason}` : ''}`
                      : `rejected by ${r.decidedBy}: ${r.decisionReason}`}
                </Td>
              </tr>
            ))}
          </Table>
        )}
      </div>
    </Card>
  );
}

function ClaimLog({ project }: { project: string }) {
  const trpc = useTRPC();
  const [status, setStatus] = useState<ClaimLogStatus>('');
  const [offset, setOffset] = useState(0);
  const log = useQuery({ ...trpc.quota.claims.list.queryOptions(claimLogInput(project, offset, status)), placeholderData: keepPreviousData });
  const items = log.data?.items ?? [];
  return (
    <Card
      title="Claim log"
      actions={
        <Select
          aria-label="Outcome"
          value={status}
          className="w-40"
          onChange={(e) => {
            setStatus(e.target.value as ClaimLogStatus);
            setOffset(0);
          }}
        >
          <option value="">All outcomes</option>
          <option value="Granted">Granted (live)</option>
          <option value="Released">Released</option>
          <option value="Denied">Denied</option>
        </Select>
      }
    >
      {log.error && <Alert testId="claims-error">{errorMessage(log.error)}</Alert>}
      {log.isSuccess && items.length === 0 ? (
        <EmptyState title={status ? 'No claims with this outcome' : 'No claims yet'}>
          Every quota decision — an IP claim or machine admitted (granted), released with its object, or denied with the reason — is listed here.
        </EmptyState>
      ) : (
        <>
          <Table head={['Time', 'Claim', 'Object', 'Requested', 'Outcome', 'Reason']}>
            {items.map((c) => (
              <tr key={c.id} data-testid="claim-row">
                <Td className="whitespace-nowrap font-mono text-xs">{formatTime(c.createdAt)}</Td>
                <Td>
                  <code className="text-xs">{c.name}</code>
                </Td>
                <Td>
                  {c.resourceRef.kind} <span className="text-slate-500">{c.resourceRef.name}</span>
                </Td>
                <Td className="text-xs">{c.requests.map((r) => `${formatCount(r.amount)} ${resourceName(r.resourceType)}`).join(', ')}</Td>
                <Td>{outcomeBadge(c.status)}</Td>
                <Td className="text-slate-600">
                  <span title={c.reason}>{codeSentence(c.reason, withResourceWords(c.message))}</span>
                  {c.releasedAt && <span className="block text-xs text-slate-500">released {formatTime(c.releasedAt)}</span>}
                </Td>
              </tr>
            ))}
          </Table>
          <Pager
            label="Claim log pages"
            always
            offset={offset}
            count={items.length}
            pageSize={CLAIM_LOG_PAGE_SIZE}
            total={log.data?.total}
            hasNext={log.data?.nextOffset != null}
            nextOffset={log.data?.nextOffset}
            onChange={setOffset}
          />
        </>
      )}
    </Card>
  );
}

/** The tenant's quota page: buckets, increase requests with their outcome, and the claim log. */
export function QuotaView({ project }: { project: string }) {
  const canRequest = useCanEdit(project);
  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-xl font-semibold text-slate-900">Quota</h1>
        <p className="mt-1 max-w-3xl text-sm text-slate-600">
          What this project may hold per resource type (limit, the sum of its grants), what it holds (allocated) and what is left. Every create is decided
          against these numbers in the same transaction; a denied create stores nothing and says why.
        </p>
      </div>
      <Card title="Allowances">
        <BucketBars project={project} />
      </Card>
      <Card title="Allowances over time">
        <UtilizationHistory project={project} object="buckets" />
      </Card>
      <IncreaseRequests project={project} canRequest={canRequest} />
      <ClaimLog project={project} />
    </div>
  );
}
