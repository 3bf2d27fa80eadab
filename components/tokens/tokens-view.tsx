'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { Alert, Button, Card, EmptyState, Field, Input, Select, Table, Td, formatTime } from '@/components/ui/primitives';
import { StatusBadge } from '@/components/ui/status-badge';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { errorMessage, fieldError } from '@/components/ui/errors';
import { useProjectRole } from '@/components/projects/hooks';
import { KubeconfigDownload } from './kubeconfig-download';

/**
 * A project's API tokens. Everyone in the project sees the list; only owners are offered Create
 * and Revoke (the server refuses the others). A refusal that still happens (the role changed
 * meanwhile) is shown in the row of the token, next to its Revoke button.
 */
export function TokensView({ project }: { project: string }) {
  const trpc = useTRPC();
  const role = useProjectRole(project);
  const isOwner = role === 'owner';
  const queryClient = useQueryClient();
  const tokens = useQuery(trpc.tokens.list.queryOptions({ project }));
  const [secret, setSecret] = useState<{ name: string; secret: string; cluster: boolean } | null>(null);
  const invalidate = () => queryClient.invalidateQueries({ queryKey: trpc.tokens.list.queryKey({ project }) });
  const create = useMutation(
    trpc.tokens.create.mutationOptions({
      onSuccess: (t) => {
        setSecret({ name: t.name, secret: t.secret, cluster: Boolean(t.clusterName) });
        // The form returns to its defaults for the next token.
        setFormKey((k) => k + 1);
        void invalidate();
      },
    }),
  );
  const revoke = useMutation(trpc.tokens.revoke.mutationOptions({ onSuccess: () => void invalidate() }));
  const [formKey, setFormKey] = useState(0);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    create.mutate({
      project,
      name: String(form.get('name') ?? ''),
      cluster: String(form.get('cluster') ?? '') || undefined,
      role: form.get('role') === 'viewer' ? 'viewer' : form.get('role') === 'owner' ? 'owner' : 'editor',
    });
  }

  return (
    <div className="space-y-6">
      {role && !isOwner && (
        <p className="text-sm text-slate-600" data-testid="tokens-owner-only">
          Only an owner of this project can create or revoke tokens.
        </p>
      )}
      {isOwner && (
        <Card title="Create a token">
          <form key={formKey} onSubmit={onSubmit} onChange={() => create.error && create.reset()} className="grid gap-4 md:grid-cols-4 md:items-end">
            <Field label="Name" htmlFor="token-name" error={fieldError(create.error, 'name')}>
              <Input id="token-name" name="name" placeholder="ci-pipeline" required />
            </Field>
            <Field
              label="Cluster (optional)"
              htmlFor="token-cluster"
              hint="Restricts the token to one cluster's pod addresses"
              error={fieldError(create.error, 'cluster')}
            >
              <Input id="token-cluster" name="cluster" placeholder="prod-east" />
            </Field>
            <Field label="Access" htmlFor="token-role">
              <Select id="token-role" name="role" defaultValue="editor">
                <option value="editor">Read and write</option>
                <option value="viewer">Read only</option>
                <option value="owner">Owner (can also delete the project)</option>
              </Select>
            </Field>
            <Button type="submit" disabled={create.isPending}>
              Create token
            </Button>
          </form>
          {create.error && !fieldError(create.error, 'name') && !fieldError(create.error, 'cluster') && (
            <div className="mt-3">
              <Alert>{errorMessage(create.error)}</Alert>
            </div>
          )}
          {secret && (
            <NewTokenSecret name={secret.name} secret={secret.secret}>
              {/* A cluster's token is the CNI plugin's; the others reach the project's Kubernetes API. */}
              {!secret.cluster && <KubeconfigDownload project={project} token={secret.secret} />}
            </NewTokenSecret>
          )}
        </Card>
      )}
      <Card title="Tokens">
        {tokens.data && tokens.data.length === 0 ? (
          <EmptyState title="No API tokens">Tokens for automation and for clusters&apos; CNI plugins appear here with when they were last used.</EmptyState>
        ) : (
          <Table label="Tokens" head={['Name', 'Prefix', 'Cluster', 'Access', 'Created', 'Last used', ...(isOwner ? [''] : [])]}>
            {tokens.data?.map((t) => (
              <tr key={t.id}>
                <Td>{t.name}</Td>
                <Td>
                  <code className="font-mono text-xs">{t.prefix}…</code>
                </Td>
                <Td>{t.clusterName ?? '—'}</Td>
                <Td>
                  {access(t.role)}
                  {!t.revokedAt && t.actsAs !== t.role && (
                    <div className="text-xs text-amber-800">
                      {t.actsAs ? `acts as ${access(t.actsAs)}: its creator's role` : 'no access: its creator has none'}
                    </div>
                  )}
                </Td>
                <Td>{formatTime(t.createdAt)}</Td>
                <Td>{formatTime(t.lastUsedAt)}</Td>
                {isOwner ? (
                  <RevokeCell
                    token={t}
                    question={`Revoke token "${t.name}"? Clients using it stop working at once.`}
                    onRevoke={() => revoke.mutate({ project, id: t.id })}
                    error={revoke.variables?.id === t.id && revoke.error ? errorMessage(revoke.error) : null}
                  />
                ) : null}
              </tr>
            ))}
          </Table>
        )}
      </Card>
    </div>
  );
}

const access = (role: 'viewer' | 'editor' | 'owner') => (role === 'viewer' ? 'read only' : role === 'owner' ? 'owner' : 'read/write');

/** A token's last cell: "revoked", or a Revoke button that asks `question` in a dialog first. */
export function RevokeCell({
  token,
  question,
  onRevoke,
  error,
}: {
  token: { name: string; revokedAt: Date | string | null };
  question: string;
  onRevoke: () => void;
  /** Why the last revocation of this token was refused, shown beside the button. */
  error?: string | null;
}) {
  const [asking, setAsking] = useState(false);
  return (
    <Td>
      {error && (
        <p role="status" className="mb-1 max-w-xs text-xs text-red-700" data-testid="revoke-error">
          {error}
        </p>
      )}
      {token.revokedAt ? (
        <StatusBadge kind="access" state="Revoked" />
      ) : (
        <Button variant="secondary" aria-label={`Revoke ${token.name}`} onClick={() => setAsking(true)}>
          Revoke
        </Button>
      )}
      {asking && (
        <ConfirmDialog
          title={`Revoke ${token.name}?`}
          confirmLabel="Revoke"
          onCancel={() => setAsking(false)}
          onConfirm={() => {
            setAsking(false);
            onRevoke();
          }}
        >
          {question}
        </ConfirmDialog>
      )}
    </Td>
  );
}

/** A just-created token's secret: shown once, never again (only its hash is stored). */
export function NewTokenSecret({ name, secret, children }: { name: string; secret: string; children?: ReactNode }) {
  return (
    <div className="mt-4 rounded-md border border-emerald-200 bg-emerald-50 p-3 text-sm" data-testid="new-token">
      <p className="font-medium text-emerald-900">Token “{name}” created. Copy it now: it is shown only once.</p>
      <code className="mt-2 block break-all rounded bg-white px-2 py-1 font-mono text-xs text-slate-800">{secret}</code>
      {children}
    </div>
  );
}
