'use client';
import { StatusBadge } from '@/components/ui/status-badge';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { useConfirm } from '@/components/ui/confirm-dialog';
import { Pager } from '@/components/ui/pager';
import { Button, Card, EmptyState, Field, Input, Table, Td } from '@/components/ui/primitives';
import { ErrorLine, parseAmounts, textArea, useInvalidateQuota } from './admin-parts';
import { ADMIN_PAGE_SIZE, adminGrantsInput } from './queries';

function GrantRow({
  grant,
}: {
  grant: {
    project: string;
    name: string;
    allowances: { resourceType: string; amount: number }[];
    active: boolean;
    activeReason: string;
    activeMessage: string;
    source: string;
    sourceRef: string | null;
  };
}) {
  const trpc = useTRPC();
  const invalidate = useInvalidateQuota();
  const [editing, setEditing] = useState(false);
  const update = useMutation(trpc.quota.admin.grants.update.mutationOptions({ onSuccess: () => (setEditing(false), void invalidate()) }));
  const remove = useMutation(trpc.quota.admin.grants.delete.mutationOptions({ onSuccess: () => void invalidate() }));
  const { ask, dialog } = useConfirm();
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
              update.mutate({
                project: grant.project,
                name: grant.name,
                allowances: grant.allowances.map((a) => ({ resourceType: a.resourceType, amount: Number(f.get(a.resourceType)) })),
              });
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
        <StatusBadge kind="active" state={grant.active ? 'Active' : 'Inactive'} />
        {!grant.active && (
          <span className="block text-xs text-slate-600">
            {grant.activeReason}: {grant.activeMessage}
          </span>
        )}
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
              onClick={() =>
                ask({
                  title: `Delete grant "${grant.name}" of ${grant.project}?`,
                  body: 'Its limits drop now; nothing held is revoked, but the project cannot take more until it is back under its limits.',
                  confirmLabel: 'Delete',
                  run: () => remove.mutateAsync({ project: grant.project, name: grant.name }),
                })
              }
            >
              Delete
            </Button>
          </div>
        )}
        <ErrorLine error={remove.error} />
        {dialog}
      </Td>
    </tr>
  );
}

/** Grants across projects (filtered by project), each editable in place, and a form to create one. */
export function Grants() {
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
      {list.data && (
        <Pager
          label="Grants pages"
          offset={offset}
          count={items.length}
          pageSize={ADMIN_PAGE_SIZE}
          total={list.data.total}
          hasNext={offset + items.length < list.data.total}
          onChange={setOffset}
        />
      )}
      <form
        onSubmit={onCreate}
        className="mt-4 grid gap-3 border-t border-slate-100 pt-4 md:grid-cols-[10rem_12rem_minmax(0,1fr)_auto] md:items-end"
        aria-label="Create a grant"
      >
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
