'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { Alert, Badge, Button, Card, EmptyState, Field, Input, Table, Td, formatTime } from '@/components/ui/primitives';
import { errorMessage, fieldError } from '@/components/ui/errors';
import { describeUserAgent } from './user-agent';

/**
 * A user's live sessions (browsers signed in), with "Sign out" per session and "Sign out
 * everywhere". Without `userId`, the signed-in user's own; with it, any user's (admins only).
 * Ending the session this browser uses sends it to the sign-in page.
 */
export function SessionsView({ userId }: { userId?: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const input = userId ? { userId } : undefined;
  const list = useQuery(trpc.sessions.list.queryOptions(input));
  const afterRevoke = (endedCurrent: boolean) => {
    if (endedCurrent) window.location.assign('/sign-in');
    else void queryClient.invalidateQueries({ queryKey: trpc.sessions.list.queryKey() });
  };
  const current = list.data?.sessions.find((s) => s.current)?.id;
  const revoke = useMutation(trpc.sessions.revoke.mutationOptions({ onSuccess: (_r, v) => afterRevoke(v.id === current) }));
  const revokeAll = useMutation(trpc.sessions.revokeAll.mutationOptions({ onSuccess: () => afterRevoke(current !== undefined) }));
  const error = revoke.error ?? revokeAll.error ?? list.error;
  return (
    <Card
      title={userId && list.data ? `Sessions of ${list.data.user.email}` : 'Sessions'}
      actions={
        <Button type="button" variant="secondary" disabled={revokeAll.isPending || !list.data?.sessions.length} onClick={() => revokeAll.mutate(input)}>
          Sign out everywhere
        </Button>
      }
    >
      {error && (
        <div className="mb-3">
          <Alert>{errorMessage(error)}</Alert>
        </div>
      )}
      {list.data && list.data.sessions.length === 0 ? (
        <EmptyState title="No sessions">Browsers signed in as this user appear here.</EmptyState>
      ) : (
        <Table head={['Browser', 'Address', 'Signed in', 'Last seen', '']}>
          {list.data?.sessions.map((s) => (
            <tr key={s.id} data-testid="session-row">
              <Td>
                <span title={s.userAgent || undefined} data-testid="session-browser">
                  {describeUserAgent(s.userAgent)}
                </span>{' '}
                {s.current && <Badge tone="green">this browser</Badge>}
              </Td>
              <Td>{s.address}</Td>
              <Td>{formatTime(s.createdAt)}</Td>
              <Td>{formatTime(s.lastSeenAt)}</Td>
              <Td>
                <Button type="button" variant="secondary" disabled={revoke.isPending} onClick={() => revoke.mutate({ ...input, id: s.id })}>
                  Sign out
                </Button>
              </Td>
            </tr>
          ))}
        </Table>
      )}
    </Card>
  );
}

/** Changing one's own password; the user's other sessions end at once. */
export function ChangePasswordForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [done, setDone] = useState(false);
  const change = useMutation(
    trpc.me.changePassword.mutationOptions({
      onSuccess: () => {
        setDone(true);
        void queryClient.invalidateQueries({ queryKey: trpc.sessions.list.queryKey() });
      },
    }),
  );
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setDone(false);
    change.mutate({ currentPassword: String(form.get('currentPassword') ?? ''), newPassword: String(form.get('newPassword') ?? '') });
  }
  return (
    <Card title="Change password">
      <form onSubmit={onSubmit} className="grid gap-4 md:grid-cols-3 md:items-end">
        <Field label="Current password" htmlFor="current-password" error={fieldError(change.error, 'currentPassword')}>
          <Input id="current-password" name="currentPassword" type="password" autoComplete="current-password" required />
        </Field>
        <Field label="New password" htmlFor="new-password" error={fieldError(change.error, 'newPassword')}>
          <Input id="new-password" name="newPassword" type="password" autoComplete="new-password" minLength={8} required />
        </Field>
        <Button type="submit" disabled={change.isPending}>
          Change password
        </Button>
      </form>
      {done && (
        <div className="mt-3">
          <Alert tone="green">Password changed. Your other sessions were signed out.</Alert>
        </div>
      )}
    </Card>
  );
}
