'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { Alert, Button, Card, EmptyState, Field, Input, Table, Td, formatTime } from '@/components/ui/primitives';
import { errorMessage, fieldError } from '@/components/ui/errors';
import { NewTokenSecret, RevokeCell } from './tokens-view';

/**
 * Operator tokens: automation acting for the signed-in operator on the operator REST routes
 * (registrations, grants, policies, increase requests, the machine queue, capacity). Every
 * operator sees and may revoke every operator token; a token stops working when its operator
 * loses the role.
 */
export function OperatorTokensView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const tokens = useQuery(trpc.tokens.operator.list.queryOptions());
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null);
  const invalidate = () => queryClient.invalidateQueries({ queryKey: trpc.tokens.operator.list.queryKey() });
  const create = useMutation(
    trpc.tokens.operator.create.mutationOptions({
      onSuccess: (t) => {
        setSecret({ name: t.name, secret: t.secret });
        void invalidate();
      },
    }),
  );
  const revoke = useMutation(trpc.tokens.operator.revoke.mutationOptions({ onSuccess: () => void invalidate() }));

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    create.mutate({ name: String(new FormData(event.currentTarget).get('name') ?? '') });
  }

  return (
    <div className="space-y-6">
      <Card title="Create an operator token">
        <p className="mb-4 text-sm text-slate-600">
          The token acts for you on the operator routes of the REST API (<code className="font-mono text-xs">GET /api/v1</code> lists them). It works only while
          you hold the operator role.
        </p>
        <form onSubmit={onSubmit} className="grid gap-4 md:grid-cols-3 md:items-end">
          <Field label="Name" htmlFor="operator-token-name" error={fieldError(create.error, 'name')}>
            <Input id="operator-token-name" name="name" placeholder="quota-automation" required />
          </Field>
          <Button type="submit" disabled={create.isPending}>
            Create operator token
          </Button>
        </form>
        {create.error && !fieldError(create.error, 'name') && (
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
      </Card>
      <Card title="Operator tokens">
        {tokens.data && tokens.data.length === 0 ? (
          <EmptyState title="No operator tokens">Tokens that act for an operator appear here with whom they act for and when they were last used.</EmptyState>
        ) : (
          <Table head={['Name', 'Prefix', 'Acts for', 'Created', 'Last used', '']}>
            {tokens.data?.map((t) => (
              <tr key={t.id}>
                <Td>{t.name}</Td>
                <Td>
                  <code className="font-mono text-xs">{t.prefix}…</code>
                </Td>
                <Td>{t.user}</Td>
                <Td>{formatTime(t.createdAt)}</Td>
                <Td>{formatTime(t.lastUsedAt)}</Td>
                <RevokeCell
                  token={t}
                  question={`Revoke operator token "${t.name}"? Automation using it stops working at once.`}
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
