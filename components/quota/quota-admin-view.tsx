'use client';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/app/_trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Badge, Button, Card, EmptyState, Field, Input, Select, Table, Td, formatTime } from '@/components/ui/primitives';
import { QuotaBar } from './quota-bar';
import { ADMIN_PAGE_SIZE, adminBucketsInput, adminGrantsInput, queueInput } from './queries';

/** Refetches every quota view after an operator change (limits, queues and logs move together). */
function useInvalidateQuota() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.quota.pathKey() });
}

function ErrorLine({ error, testId }: { error: unknown; testId?: string }) {
  if (!error) return null;
  return (
    <div className="mt-2">
      <Alert testId={testId}>{errorMessage(error)}</Alert>
    </div>
  );
}

function Pager({ offset, count, total, onChange }: { offset: number; count: number; total: number; onChange: (offset: number) => void }) {
  if (total <= ADMIN_PAGE_SIZE) return null;
  return (
    <div className="mt-3 flex items-center justify-between text-sm text-slate-600">
      <span>
        {offset + 1}–{offset + count} of {total}
      </span>
      <div className="flex gap-2">
        <Button variant="secondary" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - ADMIN_PAGE_SIZE))}>
          Previous
        </Button>
        <Button variant="secondary" disabled={offset + count >= total} onClick={() => onChange(offset + ADMIN_PAGE_SIZE)}>
          Next
        </Button>
      </div>
    </div>
  );
}

/** `type=amount` lines ⇄ allowance lists (the policy and grant forms edit them as text). */
function parseAmounts(text: string): { resourceType: string; amount: number | string }[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((line) => {
      const at = line.lastIndexOf('=');
      const resourceType = (at < 0 ? line : line.slice(0, at)).trim();
      const raw = at < 0 ? '' : line.slice(at + 1).trim();
      return { resourceType, amount: /^\d+$/.test(raw) ? Number(raw) : raw };
    });
}
const formatAmounts = (list: { resourceType: string; amount: number | string }[]) => list.map((a) => `${a.resourceType}=${a.amount}`).join('\n');
const textArea = 'block w-full rounded-md border border-slate-300 bg-white px-2.5 py-1.5 font-mono text-xs shadow-sm focus:border-brand-500';

// ---- Increase-request queue --------------------------------------------------------------------

function IncreaseQueue() {
  const trpc = useTRPC();
  const invalidate = useInvalidateQuota();
  const [status, setStatus] = useState<'Pending' | 'Approved' | 'Rejected'>('Pending');
  const [offset, setOffset] = useState(0);
  const queue = useQuery({ ...trpc.quota.admin.increases.queue.queryOptions(queueInput(status, offset)), placeholderData: keepPreviousData });
  const approve = useMutation(trpc.quota.admin.increases.approve.mutationOptions({ onSuccess: () => void invalidate() }));
  const reject = useMutation(trpc.quota.admin.increases.reject.mutationOptions({ onSuccess: () => void invalidate() }));
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
      <ErrorLine error={approve.error ?? reject.error} testId="queue-error" />
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
                      if (submitter?.value === 'reject') reject.mutate({ id: r.id, reason });
                      else approve.mutate({ id: r.id, amount: Number(f.get('amount')) || undefined, reason: reason || undefined });
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
                    <Badge tone={r.status === 'Approved' ? 'green' : 'red'}>{r.status}</Badge> {r.status === 'Approved' ? `${r.approvedAmount} as ${r.grantName}` : ''} by {r.decidedBy}
                    {r.decisionReason ? `: ${r.decisionReason}` : ''}
                  </span>
                )}
              </Td>
            </tr>
          ))}
        </Table>
      )}
      {queue.data && <Pager offset={offset} count={items.length} total={queue.data.total} onChange={setOffset} />}
    </Card>
  );
}

// ---- Buckets -----------------------------------------------------------------------------------

function Buckets() {
  const trpc = useTRPC();
  const [flagged, setFlagged] = useState(true);
  const [search, setSearch] = useState('');
  const [offset, setOffset] = useState(0);
  const list = useQuery({ ...trpc.quota.admin.buckets.list.queryOptions(adminBucketsInput(flagged, search, offset)), placeholderData: keepPreviousData });
  const items = list.data?.items ?? [];
  return (
    <Card
      title="Buckets"
      actions={
        <div className="flex items-center gap-3 text-sm">
          <label className="flex items-center gap-1.5 text-slate-700">
            <input
              type="checkbox"
              checked={flagged}
              onChange={(e) => {
                setFlagged(e.target.checked);
                setOffset(0);
              }}
            />
            only ≥ 80 % or over
          </label>
          <Input
            type="search"
            aria-label="Search buckets"
            placeholder="project or type"
            className="w-44"
            value={search}
            onChange={(e) => {
              setSearch(e.target.value);
              setOffset(0);
            }}
          />
        </div>
      }
    >
      {list.isSuccess && items.length === 0 ? (
        <EmptyState title={flagged ? 'No bucket is near its limit' : 'No buckets'}>Every project&apos;s bucket per resource type, fullest first.</EmptyState>
      ) : (
        <ul className="space-y-3" aria-label="All buckets">
          {items.map((b) => (
            <li key={`${b.projectId}/${b.resourceType}`} className="grid gap-2 sm:grid-cols-[10rem_minmax(0,1fr)] sm:items-center">
              <span className="truncate text-sm font-medium text-slate-800">{b.project}</span>
              <QuotaBar resourceType={b.resourceType} limit={b.limit} allocated={b.allocated} available={b.available} unit={b.displayUnit} compact />
            </li>
          ))}
        </ul>
      )}
      {list.data && <Pager offset={offset} count={items.length} total={list.data.total} onChange={setOffset} />}
    </Card>
  );
}

// ---- Grants ------------------------------------------------------------------------------------

function GrantRow({ grant }: { grant: { project: string; name: string; allowances: { resourceType: string; amount: number }[]; active: boolean; activeReason: string; activeMessage: string; source: string; sourceRef: string | null } }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateQuota();
  const [editing, setEditing] = useState(false);
  const update = useMutation(trpc.quota.admin.grants.update.mutationOptions({ onSuccess: () => (setEditing(false), void invalidate()) }));
  const remove = useMutation(trpc.quota.admin.grants.delete.mutationOptions({ onSuccess: () => void invalidate() }));
  return (
    <tr data-testid="grant-row">
      <Td>{grant.project}</Td>
      <Td>
        <code className="text-xs">{grant.name}</code>
        <span className="block text-xs text-slate-500">
          {grant.source}
          {grant.sourceRef ? ` · ${grant.sourceRef}` : ''}
        </span>
      </Td>
      <Td>
        {editing ? (
          <form
            className="space-y-1.5"
            aria-label={`Edit grant ${grant.name}`}
            onSubmit={(e) => {
              e.preventDefault();
              const f = new FormData(e.currentTarget);
              update.mutate({ project: grant.project, name: grant.name, allowances: grant.allowances.map((a) => ({ resourceType: a.resourceType, amount: Number(f.get(a.resourceType)) })) });
            }}
          >
            {grant.allowances.map((a) => (
              <label key={a.resourceType} className="flex items-center justify-between gap-2 text-xs">
                <span>{a.resourceType}</span>
                <Input name={a.resourceType} type="number" min={0} step={1} defaultValue={a.amount} aria-label={`${a.resourceType} amount`} className="w-24" />
              </label>
            ))}
            <p className="text-xs text-slate-500">Below what is allocated is allowed: nothing is revoked; the bucket shows over its limit.</p>
            <div className="flex gap-2">
              <Button type="submit" disabled={update.isPending}>
                Save
              </Button>
              <Button type="button" variant="ghost" onClick={() => setEditing(false)}>
                Cancel
              </Button>
            </div>
            <ErrorLine error={update.error} />
          </form>
        ) : (
          <ul className="text-xs">
            {grant.allowances.map((a) => (
              <li key={a.resourceType} className="tabular-nums">
                {a.resourceType}: {a.amount}
              </li>
            ))}
          </ul>
        )}
      </Td>
      <Td>
        <Badge tone={grant.active ? 'green' : 'amber'}>{grant.active ? 'Active' : 'Inactive'}</Badge>
        {!grant.active && <span className="block text-xs text-slate-600">{grant.activeReason}: {grant.activeMessage}</span>}
      </Td>
      <Td>
        {!editing && (
          <div className="flex gap-1.5">
            <Button variant="secondary" aria-label={`Edit ${grant.name}`} onClick={() => setEditing(true)}>
              Edit
            </Button>
            <Button
              variant="ghost"
              aria-label={`Delete ${grant.name}`}
              onClick={() => {
                if (window.confirm(`Delete grant "${grant.name}" of ${grant.project}? Its limits drop now; nothing held is revoked.`)) remove.mutate({ project: grant.project, name: grant.name });
              }}
            >
              Delete
            </Button>
          </div>
        )}
        <ErrorLine error={remove.error} />
      </Td>
    </tr>
  );
}

function Grants() {
  const trpc = useTRPC();
  const invalidate = useInvalidateQuota();
  const [project, setProject] = useState('');
  const [offset, setOffset] = useState(0);
  const list = useQuery({ ...trpc.quota.admin.grants.list.queryOptions(adminGrantsInput(project, offset)), placeholderData: keepPreviousData, retry: false });
  const create = useMutation(trpc.quota.admin.grants.create.mutationOptions({ onSuccess: () => void invalidate() }));
  const items = list.data?.items ?? [];
  function onCreate(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    create.mutate({
      project: String(f.get('project') ?? ''),
      name: String(f.get('name') ?? ''),
      allowances: parseAmounts(String(f.get('allowances') ?? '')).map((a) => ({ resourceType: a.resourceType, amount: Number(a.amount) })),
    });
  }
  return (
    <Card
      title="Grants"
      actions={
        <form
          className="flex gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            setProject(String(new FormData(e.currentTarget).get('project') ?? '').trim());
            setOffset(0);
          }}
        >
          <Input name="project" aria-label="Filter grants by project" placeholder="project slug" className="w-40" />
          <Button type="submit" variant="secondary">
            Filter
          </Button>
        </form>
      }
    >
      <ErrorLine error={list.error} />
      {list.isSuccess && items.length === 0 ? (
        <EmptyState title="No grants">Grants give a project its limits; the default policy grants every new project its allowance.</EmptyState>
      ) : (
        <Table head={['Project', 'Grant', 'Allowances', 'Active', '']}>
          {items.map((g) => (
            <GrantRow key={g.id} grant={g} />
          ))}
        </Table>
      )}
      {list.data && <Pager offset={offset} count={items.length} total={list.data.total} onChange={setOffset} />}
      <form onSubmit={onCreate} className="mt-4 grid gap-3 border-t border-slate-100 pt-4 md:grid-cols-[10rem_12rem_minmax(0,1fr)_auto] md:items-end" aria-label="Create a grant">
        <Field label="Project" htmlFor="grant-project">
          <Input id="grant-project" name="project" required placeholder="acme-dev" />
        </Field>
        <Field label="Grant name" htmlFor="grant-name">
          <Input id="grant-name" name="name" required placeholder="launch-extra" />
        </Field>
        <Field label="Allowances (type=amount per line)" htmlFor="grant-allowances">
          <textarea id="grant-allowances" name="allowances" rows={2} required className={textArea} placeholder="ipam.miloapis.com/ipclaims=50" />
        </Field>
        <Button type="submit" disabled={create.isPending}>
          Create grant
        </Button>
      </form>
      <ErrorLine error={create.error} />
    </Card>
  );
}

// ---- Registrations -----------------------------------------------------------------------------

function Registrations() {
  const trpc = useTRPC();
  const invalidate = useInvalidateQuota();
  const list = useQuery(trpc.quota.admin.registrations.list.queryOptions());
  const create = useMutation(trpc.quota.admin.registrations.create.mutationOptions({ onSuccess: () => void invalidate() }));
  const remove = useMutation(trpc.quota.admin.registrations.delete.mutationOptions({ onSuccess: () => void invalidate() }));
  function onCreate(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    create.mutate({
      resourceType: String(f.get('resourceType') ?? '').trim(),
      type: f.get('type') === 'Allocation' ? 'Allocation' : 'Entity',
      baseUnit: String(f.get('baseUnit') ?? ''),
      displayUnit: String(f.get('displayUnit') ?? '') || String(f.get('baseUnit') ?? ''),
      claimingKinds: String(f.get('claimingKinds') ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      description: String(f.get('description') ?? ''),
    });
  }
  return (
    <Card title="Resource registrations">
      <Table head={['Resource type', 'Type', 'Units', 'Claimed by', 'Active', '']}>
        {list.data?.map((r) => (
          <tr key={r.id} data-testid="registration-row">
            <Td>
              <code className="text-xs">{r.resourceType}</code>
              {r.description && <span className="block text-xs text-slate-500">{r.description}</span>}
            </Td>
            <Td>{r.type}</Td>
            <Td className="text-xs">
              {r.displayUnit}
              {r.unitConversionFactor !== 1 ? ` (= ${r.unitConversionFactor} ${r.baseUnit})` : ''}
            </Td>
            <Td className="text-xs">{r.claimingKinds.join(', ')}</Td>
            <Td>
              <Badge tone={r.active ? 'green' : 'amber'}>{r.active ? 'Active' : 'Inactive'}</Badge>
            </Td>
            <Td>
              <Button
                variant="ghost"
                aria-label={`Unregister ${r.resourceType}`}
                onClick={() => {
                  if (window.confirm(`Unregister ${r.resourceType}? Refused while grants or live claims use it.`)) remove.mutate({ resourceType: r.resourceType });
                }}
              >
                Unregister
              </Button>
            </Td>
          </tr>
        ))}
      </Table>
      <ErrorLine error={remove.error} testId="registration-error" />
      <form onSubmit={onCreate} className="mt-4 grid gap-3 border-t border-slate-100 pt-4 md:grid-cols-3 md:items-end" aria-label="Register a resource type">
        <Field label="Resource type" htmlFor="reg-type">
          <Input id="reg-type" name="resourceType" required placeholder="ipam.miloapis.com/podaddresses" />
        </Field>
        <Field label="Kind of amount" htmlFor="reg-kind">
          <Select id="reg-kind" name="type" defaultValue="Entity">
            <option value="Entity">Entity (count of objects)</option>
            <option value="Allocation">Allocation (an amount)</option>
          </Select>
        </Field>
        <Field label="Claimed by kinds (comma-separated)" htmlFor="reg-kinds">
          <Input id="reg-kinds" name="claimingKinds" required placeholder="PodAddress" />
        </Field>
        <Field label="Base unit" htmlFor="reg-base">
          <Input id="reg-base" name="baseUnit" required placeholder="addresses" />
        </Field>
        <Field label="Display unit" htmlFor="reg-display">
          <Input id="reg-display" name="displayUnit" placeholder="addresses" />
        </Field>
        <Field label="Description" htmlFor="reg-description">
          <Input id="reg-description" name="description" />
        </Field>
        <div>
          <Button type="submit" disabled={create.isPending}>
            Register
          </Button>
        </div>
      </form>
      <ErrorLine error={create.error} />
    </Card>
  );
}

// ---- Policies ----------------------------------------------------------------------------------

interface PolicyDraft {
  mode: 'create' | 'edit';
  name: string;
  description: string;
  triggerKind: string;
  constraints: string;
  template: string;
  amounts: string;
  enabled: boolean;
}

function ReadyBadge({ ready, reason, message }: { ready: boolean; reason: string; message: string }) {
  return (
    <div>
      <Badge tone={ready ? 'green' : 'red'}>{ready ? 'Ready' : 'Not ready'}</Badge>
      {!ready && (
        <span className="mt-1 block whitespace-pre-wrap text-xs text-red-800" data-testid="policy-error">
          {reason}: {message}
        </span>
      )}
    </div>
  );
}

function PolicyForm({ kind, draft, onDone }: { kind: 'grant' | 'claim'; draft: PolicyDraft; onDone: () => void }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateQuota();
  const opts = { onSuccess: () => (onDone(), void invalidate()) };
  const grantCreate = useMutation(trpc.quota.admin.policies.grant.create.mutationOptions(opts));
  const grantUpdate = useMutation(trpc.quota.admin.policies.grant.update.mutationOptions(opts));
  const claimCreate = useMutation(trpc.quota.admin.policies.claim.create.mutationOptions(opts));
  const claimUpdate = useMutation(trpc.quota.admin.policies.claim.update.mutationOptions(opts));
  const active = kind === 'grant' ? (draft.mode === 'create' ? grantCreate : grantUpdate) : draft.mode === 'create' ? claimCreate : claimUpdate;
  function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const constraints = String(f.get('constraints') ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .map((expression) => ({ expression }));
    const common = { name: String(f.get('name') ?? ''), description: String(f.get('description') ?? ''), constraints, enabled: f.get('enabled') === 'on' };
    const amounts = parseAmounts(String(f.get('amounts') ?? ''));
    if (kind === 'grant') {
      const input = { ...common, grantNameTemplate: String(f.get('template') ?? ''), allowances: amounts.map((a) => ({ resourceType: a.resourceType, amount: Number(a.amount) })) };
      if (draft.mode === 'create') grantCreate.mutate(input);
      else grantUpdate.mutate(input);
    } else {
      const input = { ...common, triggerKind: String(f.get('triggerKind') ?? ''), claimNameTemplate: String(f.get('template') ?? ''), requests: amounts };
      if (draft.mode === 'create') claimCreate.mutate(input);
      else claimUpdate.mutate(input);
    }
  }
  const id = (s: string) => `${kind}-policy-${s}`;
  return (
    <form onSubmit={onSubmit} className="mt-4 grid gap-3 rounded-md border border-slate-200 bg-slate-50 p-3 md:grid-cols-2" aria-label={`${draft.mode === 'create' ? 'New' : 'Edit'} ${kind} creation policy`}>
      <Field label="Name" htmlFor={id('name')}>
        <Input id={id('name')} name="name" required defaultValue={draft.name} readOnly={draft.mode === 'edit'} />
      </Field>
      {kind === 'claim' ? (
        <Field label="Trigger kind" htmlFor={id('kind')} hint="One policy per kind, e.g. IPClaim, Machine">
          <Input id={id('kind')} name="triggerKind" required defaultValue={draft.triggerKind} />
        </Field>
      ) : (
        <Field label="Trigger" htmlFor={id('kind')}>
          <Input id={id('kind')} value="Project created" readOnly />
        </Field>
      )}
      <Field label="Constraints (CEL, one per line, all must be true)" htmlFor={id('constraints')} hint="Variables: trigger, requestInfo, user">
        <textarea id={id('constraints')} name="constraints" rows={3} className={textArea} defaultValue={draft.constraints} placeholder={'trigger.metadata.name.startsWith("acme-")'} />
      </Field>
      <Field label={kind === 'grant' ? 'Grant name template' : 'Claim name template'} htmlFor={id('template')} hint="Text with {{ CEL }} segments">
        <Input id={id('template')} name="template" required defaultValue={draft.template} className="font-mono text-xs" />
      </Field>
      <Field label={kind === 'grant' ? 'Allowances (type=amount per line)' : 'Requests (type=amount or type={{ CEL }} per line)'} htmlFor={id('amounts')}>
        <textarea id={id('amounts')} name="amounts" rows={3} required className={textArea} defaultValue={draft.amounts} />
      </Field>
      <div className="space-y-3">
        <Field label="Description" htmlFor={id('description')}>
          <Input id={id('description')} name="description" defaultValue={draft.description} />
        </Field>
        <label className="flex items-center gap-2 text-sm text-slate-700">
          <input type="checkbox" name="enabled" defaultChecked={draft.enabled} /> Enabled
        </label>
        <div className="flex gap-2">
          <Button type="submit" disabled={active.isPending}>
            {draft.mode === 'create' ? 'Create policy' : 'Save policy'}
          </Button>
          <Button type="button" variant="ghost" onClick={onDone}>
            Cancel
          </Button>
        </div>
      </div>
      <div className="md:col-span-2">
        <ErrorLine error={active.error} />
      </div>
    </form>
  );
}

function Policies() {
  const trpc = useTRPC();
  const invalidate = useInvalidateQuota();
  const grantPolicies = useQuery(trpc.quota.admin.policies.grant.list.queryOptions());
  const claimPolicies = useQuery(trpc.quota.admin.policies.claim.list.queryOptions());
  const removeGrant = useMutation(trpc.quota.admin.policies.grant.delete.mutationOptions({ onSuccess: () => void invalidate() }));
  const removeClaim = useMutation(trpc.quota.admin.policies.claim.delete.mutationOptions({ onSuccess: () => void invalidate() }));
  const [draft, setDraft] = useState<{ kind: 'grant' | 'claim'; draft: PolicyDraft } | null>(null);
  const blank = (kind: 'grant' | 'claim'): PolicyDraft => ({
    mode: 'create',
    name: '',
    description: '',
    triggerKind: '',
    constraints: '',
    template: kind === 'grant' ? 'extra-{{trigger.metadata.name}}' : 'x-{{requestInfo.name}}',
    amounts: '',
    enabled: true,
  });
  const confirmDelete = (what: string) => window.confirm(`Delete ${what}?`);
  return (
    <Card title="Policies">
      <div className="space-y-6">
        <section aria-labelledby="grant-policies">
          <div className="mb-2 flex items-center justify-between">
            <h3 id="grant-policies" className="text-sm font-semibold text-slate-800">
              Grant creation policies <span className="font-normal text-slate-500">(run when a project is created)</span>
            </h3>
            <Button variant="secondary" onClick={() => setDraft({ kind: 'grant', draft: blank('grant') })}>
              New grant policy
            </Button>
          </div>
          <Table head={['Name', 'Constraints', 'Grant name', 'Allowances', 'Enabled', 'Ready', '']}>
            {grantPolicies.data?.map((p) => (
              <tr key={p.id} data-testid="grant-policy-row">
                <Td>
                  <code className="text-xs">{p.name}</code>
                  <span className="block text-xs text-slate-500">generation {p.generation}</span>
                </Td>
                <Td className="font-mono text-xs">{p.constraints.length ? p.constraints.map((c) => c.expression).join(' && ') : 'always'}</Td>
                <Td className="font-mono text-xs">{p.grantNameTemplate}</Td>
                <Td className="whitespace-pre font-mono text-xs">{formatAmounts(p.allowances)}</Td>
                <Td>{p.enabled ? 'yes' : 'no'}</Td>
                <Td>
                  <ReadyBadge ready={p.ready} reason={p.readyReason} message={p.readyMessage} />
                </Td>
                <Td>
                  <div className="flex gap-1.5">
                    <Button
                      variant="secondary"
                      aria-label={`Edit ${p.name}`}
                      onClick={() =>
                        setDraft({
                          kind: 'grant',
                          draft: { mode: 'edit', name: p.name, description: p.description, triggerKind: 'Project', constraints: p.constraints.map((c) => c.expression).join('\n'), template: p.grantNameTemplate, amounts: formatAmounts(p.allowances), enabled: p.enabled },
                        })
                      }
                    >
                      Edit
                    </Button>
                    <Button variant="ghost" aria-label={`Delete ${p.name}`} onClick={() => confirmDelete(`grant policy "${p.name}"`) && removeGrant.mutate({ name: p.name })}>
                      Delete
                    </Button>
                  </div>
                </Td>
              </tr>
            ))}
          </Table>
          {draft?.kind === 'grant' && <PolicyForm key={draft.draft.name || 'new'} kind="grant" draft={draft.draft} onDone={() => setDraft(null)} />}
        </section>
        <section aria-labelledby="claim-policies">
          <div className="mb-2 flex items-center justify-between">
            <h3 id="claim-policies" className="text-sm font-semibold text-slate-800">
              Claim creation policies <span className="font-normal text-slate-500">(one per kind; decide each create)</span>
            </h3>
            <Button variant="secondary" onClick={() => setDraft({ kind: 'claim', draft: blank('claim') })}>
              New claim policy
            </Button>
          </div>
          <Table head={['Name', 'Kind', 'Constraints', 'Claim name', 'Requests', 'Enabled', 'Ready', '']}>
            {claimPolicies.data?.map((p) => (
              <tr key={p.id} data-testid="claim-policy-row">
                <Td>
                  <code className="text-xs">{p.name}</code>
                  <span className="block text-xs text-slate-500">generation {p.generation}</span>
                </Td>
                <Td>{p.triggerKind}</Td>
                <Td className="font-mono text-xs">{p.constraints.length ? p.constraints.map((c) => c.expression).join(' && ') : 'always'}</Td>
                <Td className="font-mono text-xs">{p.claimNameTemplate}</Td>
                <Td className="whitespace-pre font-mono text-xs">{formatAmounts(p.requests)}</Td>
                <Td>{p.enabled ? 'yes' : 'no (not quota-managed)'}</Td>
                <Td>
                  <ReadyBadge ready={p.ready} reason={p.readyReason} message={p.readyMessage} />
                </Td>
                <Td>
                  <div className="flex gap-1.5">
                    <Button
                      variant="secondary"
                      aria-label={`Edit ${p.name}`}
                      onClick={() =>
                        setDraft({
                          kind: 'claim',
                          draft: { mode: 'edit', name: p.name, description: p.description, triggerKind: p.triggerKind, constraints: p.constraints.map((c) => c.expression).join('\n'), template: p.claimNameTemplate, amounts: formatAmounts(p.requests), enabled: p.enabled },
                        })
                      }
                    >
                      Edit
                    </Button>
                    <Button variant="ghost" aria-label={`Delete ${p.name}`} onClick={() => confirmDelete(`claim policy "${p.name}" (its kind stops being quota-managed)`) && removeClaim.mutate({ name: p.name })}>
                      Delete
                    </Button>
                  </div>
                </Td>
              </tr>
            ))}
          </Table>
          {draft?.kind === 'claim' && <PolicyForm key={draft.draft.name || 'new'} kind="claim" draft={draft.draft} onDone={() => setDraft(null)} />}
        </section>
        <ErrorLine error={removeGrant.error ?? removeClaim.error} />
      </div>
    </Card>
  );
}

// ---- Audit -------------------------------------------------------------------------------------

function Audit() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const last = useQuery(trpc.quota.admin.audit.last.queryOptions());
  const run = useMutation(trpc.quota.admin.audit.run.mutationOptions({ onSuccess: () => void queryClient.invalidateQueries({ queryKey: trpc.quota.admin.audit.last.queryKey() }) }));
  return (
    <Card
      title="Audit of the books"
      actions={
        <Button variant="secondary" disabled={run.isPending} onClick={() => run.mutate()}>
          {run.isPending ? 'Auditing…' : 'Run audit now'}
        </Button>
      }
    >
      <p className="text-sm text-slate-600">
        Every 5 minutes the worker recomputes each bucket from grants and live claims. Drift is recorded as a <code>quota.drift</code> event and the{' '}
        <code>meridian_quota_drift_total</code> metric; nothing is repaired automatically.
      </p>
      {last.data ? (
        <p className="mt-2 text-sm" data-testid="audit-last">
          Last run {formatTime(last.data.at)}: {last.data.bucketsChecked} buckets checked,{' '}
          {last.data.drifted ? <Badge tone="red">{last.data.drifted} drifted</Badge> : <Badge tone="green">no drift</Badge>}, {last.data.overLimit} over their limit.
        </p>
      ) : (
        <p className="mt-2 text-sm text-slate-500">No audit has run yet.</p>
      )}
      <ErrorLine error={run.error} />
      {run.data && run.data.drifted.length > 0 && (
        <Table head={['Project', 'Resource type', 'Recorded (limit / allocated)', 'From the books']}>
          {run.data.drifted.map((d) => (
            <tr key={`${d.projectId}/${d.resourceType}`}>
              <Td>{d.project}</Td>
              <Td className="text-xs">{d.resourceType}</Td>
              <Td className="tabular-nums">{d.recorded ? `${d.recorded.limit} / ${d.recorded.allocated}` : 'missing'}</Td>
              <Td className="tabular-nums">
                {d.expected.limit} / {d.expected.allocated}
              </Td>
            </tr>
          ))}
        </Table>
      )}
    </Card>
  );
}

/** Operator quota administration: the queue first (it is what waits on people), then the books and configuration. */
export function QuotaAdminView() {
  return (
    <div className="space-y-6">
      <IncreaseQueue />
      <Buckets />
      <Grants />
      <Policies />
      <Registrations />
      <Audit />
    </div>
  );
}
