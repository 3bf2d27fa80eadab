'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { errorMessage, fieldError } from '@/components/ui/errors';
import { Alert, Badge, Button, Card, EmptyState, Field, Input, Table, Td, formatTime } from '@/components/ui/primitives';

type Scope = { kind: 'project'; project: string } | { kind: 'operator' };

/**
 * Alert webhooks: the endpoints that receive capacity alerts (signed, retried, at least once), with
 * a form to register one (its signing secret shown once), removal, and each endpoint's delivery log.
 * A project's owners manage its endpoints and its other members see them; the operators manage
 * theirs, which receive every project's alerts.
 */
export function WebhooksView({ scope }: { scope: Scope }) {
  const trpc = useTRPC();
  const isProject = scope.kind === 'project';
  const project = scope.kind === 'project' ? scope.project : '';
  const projectInfo = useQuery({ ...trpc.projects.get.queryOptions({ project }), enabled: isProject });
  const role = projectInfo.data?.role;
  const canManage = !isProject || role === 'owner';
  const queryClient = useQueryClient();
  const projectList = useQuery({ ...trpc.capacity.webhooks.list.queryOptions({ project }), enabled: isProject, refetchInterval: 15_000 });
  const operatorList = useQuery({ ...trpc.capacity.operatorWebhooks.list.queryOptions(), enabled: !isProject, refetchInterval: 15_000 });
  const endpoints = isProject ? projectList : operatorList;
  const invalidate = () =>
    queryClient.invalidateQueries({ queryKey: isProject ? trpc.capacity.webhooks.list.queryKey({ project }) : trpc.capacity.operatorWebhooks.list.queryKey() });
  const [formKey, setFormKey] = useState(0);
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<string | null>(null);
  const created = {
    onSuccess: (w: { name: string; secret: string }) => {
      setSecret({ name: w.name, secret: w.secret });
      setFormKey((k) => k + 1);
      void invalidate();
    },
  };
  const removed = {
    onSuccess: () => {
      setConfirm(null);
      void invalidate();
    },
  };
  const createProject = useMutation(trpc.capacity.webhooks.create.mutationOptions(created));
  const createOperator = useMutation(trpc.capacity.operatorWebhooks.create.mutationOptions(created));
  const removeProject = useMutation(trpc.capacity.webhooks.delete.mutationOptions(removed));
  const removeOperator = useMutation(trpc.capacity.operatorWebhooks.delete.mutationOptions(removed));
  const create = isProject ? createProject : createOperator;
  const remove = isProject ? removeProject : removeOperator;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const input = { name: String(form.get('name') ?? ''), url: String(form.get('url') ?? '') };
    if (isProject) createProject.mutate({ project, ...input });
    else createOperator.mutate(input);
  }
  function onDelete(name: string) {
    if (isProject) removeProject.mutate({ project, name });
    else removeOperator.mutate({ name });
  }

  return (
    <div className="space-y-6">
      {isProject && role && !canManage && (
        <p className="text-sm text-slate-600" data-testid="webhooks-owner-only">
          Only an owner of this project can register or remove webhooks.
        </p>
      )}
      {canManage && (
        <Card title="Register a webhook">
          <p className="mb-3 text-sm text-slate-600">
            {!isProject ? 'Every project’s capacity alerts' : 'This project’s capacity alerts'} are sent as signed JSON POSTs, retried until the endpoint
            answers 2xx. The URL must be https:// (plain http only for a loopback address, or when the server allows it).
          </p>
          <form
            key={formKey}
            onSubmit={onSubmit}
            onChange={() => create.error && create.reset()}
            className="grid gap-4 md:grid-cols-[14rem_1fr_auto] md:items-end"
          >
            <Field label="Name" htmlFor="webhook-name" error={fieldError(create.error, 'name')}>
              <Input id="webhook-name" name="name" placeholder="pager" required />
            </Field>
            <Field label="URL" htmlFor="webhook-url" error={fieldError(create.error, 'url')}>
              <Input id="webhook-url" name="url" type="text" inputMode="url" placeholder="https://hooks.example.com/meridian" required />
            </Field>
            <Button type="submit" disabled={create.isPending}>
              Register webhook
            </Button>
          </form>
          {create.error && !fieldError(create.error, 'name') && !fieldError(create.error, 'url') && (
            <div className="mt-3">
              <Alert>{errorMessage(create.error)}</Alert>
            </div>
          )}
          {secret && (
            <div className="mt-4 rounded-md border border-emerald-200 bg-emerald-50 p-3 text-sm" data-testid="new-webhook-secret">
              <p className="font-medium text-emerald-900">Webhook “{secret.name}” registered. Copy its signing secret now: it is shown only once.</p>
              <code className="mt-2 block break-all rounded bg-white px-2 py-1 font-mono text-xs text-slate-800">{secret.secret}</code>
            </div>
          )}
        </Card>
      )}
      <Card title="Webhooks">
        {endpoints.error && <Alert>{errorMessage(endpoints.error)}</Alert>}
        {endpoints.data && endpoints.data.length === 0 ? (
          <EmptyState title="No webhooks">Registered endpoints appear here with their pending and delivered alerts and their last error.</EmptyState>
        ) : (
          <Table label="Webhooks" head={['Name', 'URL', 'Pending', 'Delivered', 'Last error', 'Registered', '']}>
            {endpoints.data?.map((w) => (
              <tr key={w.id}>
                <Td className="font-medium">{w.name}</Td>
                <Td className="max-w-xs break-all font-mono text-xs">{w.url}</Td>
                <Td>{w.pending}</Td>
                <Td>{w.delivered}</Td>
                <Td className="text-xs text-red-700">{w.lastError ?? ''}</Td>
                <Td className="whitespace-nowrap">{formatTime(w.createdAt)}</Td>
                <Td className="whitespace-nowrap">
                  <span className="flex gap-2">
                    <Button variant="secondary" aria-expanded={open === w.name} onClick={() => setOpen(open === w.name ? null : w.name)}>
                      {open === w.name ? 'Hide deliveries' : 'Deliveries'}
                    </Button>
                    {canManage && (
                      <Button variant="secondary" className="text-red-700!" onClick={() => setConfirm(w.name)}>
                        Delete
                      </Button>
                    )}
                  </span>
                </Td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
      {open && <DeliveryLog key={open} scope={scope} name={open} />}
      {confirm && (
        <ConfirmDialog
          title={`Delete webhook ${confirm}?`}
          confirmLabel="Delete webhook"
          pending={remove.isPending}
          error={remove.error ? errorMessage(remove.error) : null}
          onCancel={() => {
            setConfirm(null);
            remove.reset();
          }}
          onConfirm={() => onDelete(confirm)}
        >
          <p>The endpoint and its delivery log are removed; alerts not yet delivered to it are dropped.</p>
        </ConfirmDialog>
      )}
    </div>
  );
}

/** One endpoint's deliveries, newest first: state, attempts, next attempt, last status and error. */
function DeliveryLog({ scope, name }: { scope: Scope; name: string }) {
  const trpc = useTRPC();
  const isProject = scope.kind === 'project';
  const project = scope.kind === 'project' ? scope.project : '';
  const projectLog = useQuery({ ...trpc.capacity.webhooks.deliveries.queryOptions({ project, name }), enabled: isProject, refetchInterval: 10_000 });
  const operatorLog = useQuery({ ...trpc.capacity.operatorWebhooks.deliveries.queryOptions({ name }), enabled: !isProject, refetchInterval: 10_000 });
  const q = isProject ? projectLog : operatorLog;
  return (
    <Card title={`Deliveries to ${name}`}>
      {q.error && <Alert>{errorMessage(q.error)}</Alert>}
      {q.data && q.data.length === 0 ? (
        <EmptyState title="No deliveries yet">Each alert that fires or resolves is delivered here, once per endpoint.</EmptyState>
      ) : (
        <Table label={`Deliveries to ${name}`} head={['Event', 'State', 'Attempts', 'Next attempt', 'Last status', 'Last error', 'Created']}>
          {q.data?.map((d) => (
            <tr key={d.id}>
              <Td className="text-xs">
                {d.eventType}
                <div className="font-mono text-[10px] text-slate-500">{d.eventId}</div>
              </Td>
              <Td>{d.state === 'Delivered' ? <Badge tone="green">Delivered</Badge> : <Badge tone="amber">Pending</Badge>}</Td>
              <Td>{d.attempts}</Td>
              <Td className="whitespace-nowrap">{d.nextAttemptAt ? formatTime(d.nextAttemptAt) : '—'}</Td>
              <Td>{d.lastStatus ?? '—'}</Td>
              <Td className="text-xs text-red-700">{d.lastError ?? ''}</Td>
              <Td className="whitespace-nowrap">{formatTime(d.createdAt)}</Td>
            </tr>
          ))}
        </Table>
      )}
    </Card>
  );
}
