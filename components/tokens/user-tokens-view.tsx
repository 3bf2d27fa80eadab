'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { Alert, Badge, Button, Card, EmptyState, Field, Input, Table, Td, formatTime } from '@/components/ui/primitives';
import { errorMessage, fieldError, invalidProps } from '@/components/ui/errors';
import { NewTokenSecret, RevokeCell } from './tokens-view';

/**
 * The signed-in user's own user tokens: automation acting for them on the tenancy REST routes
 * (organizations, projects, members, invitations) with their current rights, never more. Create
 * (the secret shown once), list, and revoke after a confirmation. What the token may do follows
 * the user's roles, listed here: creating projects needs a role in an organization, and changing
 * members needs the owner role there.
 */
export function UserTokensView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const tokens = useQuery(trpc.tokens.user.list.queryOptions());
  const organizations = useQuery(trpc.organizations.list.queryOptions());
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null);
  const invalidate = () => queryClient.invalidateQueries({ queryKey: trpc.tokens.user.list.queryKey() });
  const create = useMutation(
    trpc.tokens.user.create.mutationOptions({
      onSuccess: (t) => {
        setSecret({ name: t.name, secret: t.secret });
        setFormKey((k) => k + 1);
        void invalidate();
      },
    }),
  );
  const revoke = useMutation(trpc.tokens.user.revoke.mutationOptions({ onSuccess: () => void invalidate() }));
  // The form is remounted after a creation, so it returns to empty for the next token.
  const [formKey, setFormKey] = useState(0);
  const nameError = fieldError(create.error, 'name');

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setSecret(null);
    create.mutate({ name: String(new FormData(event.currentTarget).get('name') ?? '') });
  }

  const mine = (organizations.data ?? []).filter((o) => o.role !== null);
  return (
    <div className="space-y-6">
      <Card title="Create a user token">
        <p className="mb-4 text-sm text-slate-600">
          The token acts for you on the REST API&apos;s organization, project and member routes (
          <code className="font-mono text-xs">/api/v1/organizations</code>, <code className="font-mono text-xs">/api/v1/projects</code>), with your rights at
          the time of each request: when you lose a role, so does the token. For a project&apos;s networks and claims, use a project token.
        </p>
        <form key={formKey} onSubmit={onSubmit} className="grid gap-4 md:grid-cols-3 md:items-end" noValidate>
          <Field label="Name" htmlFor="user-token-name" error={nameError}>
            <Input id="user-token-name" name="name" placeholder="laptop" maxLength={100} {...invalidProps(nameError, 'user-token-name')} />
          </Field>
          <Button type="submit" disabled={create.isPending}>
            Create user token
          </Button>
        </form>
        {create.error && !nameError && (
          <div className="mt-3">
            <Alert>{errorMessage(create.error)}</Alert>
          </div>
        )}
        {revoke.error && (
          <div className="mt-3">
            <Alert>{errorMessage(revoke.error)}</Alert>
          </div>
        )}
        {secret && <NewTokenSecret name={secret.name} secret={secret.secret} />}
        <div className="mt-4 text-sm text-slate-600" data-testid="user-token-rights">
          {mine.length === 0 ? (
            <p>You hold no role in an organization yet: a token can create an organization (you own it), but no project until then.</p>
          ) : (
            <p>
              With your roles now, a token may create projects in{' '}
              {mine.map((o, i) => (
                <span key={o.id}>
                  {i > 0 && ', '}
                  <span className="font-mono">{o.slug}</span> <Badge tone={o.role === 'owner' ? 'blue' : 'slate'}>{o.role}</Badge>
                </span>
              ))}
              {mine.some((o) => o.role === 'owner') && <> and manage the members of those you own</>}.
            </p>
          )}
        </div>
      </Card>
      <Card title="Your user tokens">
        {tokens.data && tokens.data.length === 0 ? (
          <EmptyState title="No user tokens">Tokens you create appear here with when they were last used; revoked ones stay listed as revoked.</EmptyState>
        ) : (
          <Table label="User tokens" head={['Name', 'Prefix', 'Created', 'Last used', '']}>
            {tokens.data?.map((t) => (
              <tr key={t.id}>
                <Td>{t.name}</Td>
                <Td>
                  <code className="font-mono text-xs">{t.prefix}…</code>
                </Td>
                <Td>{formatTime(t.createdAt)}</Td>
                <Td>{formatTime(t.lastUsedAt)}</Td>
                <RevokeCell
                  token={t}
                  question={`Revoke user token "${t.name}"? Whatever uses it stops working at once.`}
                  onRevoke={() => revoke.mutate({ id: t.id })}
                />
              </tr>
            ))}
          </Table>
        )}
      </Card>
    </div>
  );
}
