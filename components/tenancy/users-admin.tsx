'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { useConfirm } from '@/components/ui/confirm-dialog';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Button, Card, Table, Td } from '@/components/ui/primitives';
import { StatusBadge } from '@/components/ui/status-badge';

const platformRoles = ['operator', 'qa', 'admin'] as const;

/** What each platform role lets its holder do, for the question before it is granted or taken away. */
const platformRoleMeaning: Record<(typeof platformRoles)[number], string> = {
  operator: 'Operators run the fleet, the networks and the quota of every project.',
  qa: 'QA users drive the provider simulator (faults and outages).',
  admin: 'Admins manage users, their platform roles and every project.',
};

/** The question before a user is disabled or enabled. */
function disableQuestion(u: { email: string; disabled: boolean }) {
  return u.disabled
    ? {
        title: `Enable ${u.email}?`,
        body: `${u.email} can sign in again; their sessions and tokens ended when they were disabled and stay ended.`,
        confirmLabel: 'Enable',
        tone: 'primary' as const,
      }
    : {
        title: `Disable ${u.email}?`,
        body: `${u.email} is signed out everywhere at once, every API token they hold stops working, and they cannot sign in until an admin enables them again.`,
        confirmLabel: 'Disable',
        tone: 'danger' as const,
      };
}

/**
 * Every user, for administrators: platform roles (toggled in place), disable and enable (their
 * sessions and tokens stop at once), a one-time password-reset link (shown once), and their
 * sessions.
 */
export function UsersAdminView({ userId }: { userId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const users = useQuery(trpc.users.list.queryOptions());
  const refresh = () => void queryClient.invalidateQueries({ queryKey: trpc.users.list.queryKey() });
  const setDisabled = useMutation(trpc.users.setDisabled.mutationOptions({ onSuccess: refresh }));
  const setRoles = useMutation(trpc.users.setPlatformRoles.mutationOptions({ onSuccess: refresh }));
  const [link, setLink] = useState<{ email: string; url: string } | null>(null);
  const reset = useMutation(
    trpc.users.resetPassword.mutationOptions({ onSuccess: (r) => setLink({ email: r.email, url: `${window.location.origin}${r.path}` }) }),
  );
  const error = setDisabled.error ?? setRoles.error ?? reset.error;
  const { ask, dialog } = useConfirm();
  return (
    <Card title="Users">
      {dialog}
      {error && (
        <div className="mb-3">
          <Alert testId="users-error">{errorMessage(error)}</Alert>
        </div>
      )}
      {link && (
        <div className="mb-3">
          <Alert tone="green" testId="reset-link">
            One-time password-reset link for {link.email} (24 hours, shown once):{' '}
            <code className="break-all" data-testid="reset-url">
              {link.url}
            </code>
          </Alert>
        </div>
      )}
      <Table head={['E-mail', 'Name', 'Platform roles', 'State', 'Sessions', '']}>
        {users.data?.map((u) => (
          <tr key={u.id} data-testid={`user-${u.email}`}>
            <Td>
              <div>{u.email}</div>
              <div className="text-xs text-slate-500">{u.emailVerifiedBy ? `verified by ${u.emailVerifiedBy}` : 'e-mail not verified'}</div>
            </Td>
            <Td>{u.name}</Td>
            <Td>
              <div className="flex gap-3">
                {platformRoles.map((role) => {
                  // An admin never takes away their own admin role: another admin does, so the platform keeps one.
                  const own = u.id === userId && role === 'admin';
                  const granting = !u.platformRoles.includes(role);
                  return (
                    <label key={role} className="flex items-center gap-1 text-xs" title={own ? 'Another admin can take away your admin role.' : undefined}>
                      <input
                        type="checkbox"
                        aria-label={`${role} role of ${u.email}`}
                        checked={u.platformRoles.includes(role)}
                        disabled={setRoles.isPending || own}
                        onChange={() =>
                          ask({
                            title: granting ? `Make ${u.email} ${role === 'admin' ? 'an admin' : `a ${role} user`}?` : `Take the ${role} role from ${u.email}?`,
                            body: `${platformRoleMeaning[role]} ${granting ? `${u.email} gets this at their next request.` : `${u.email} loses this at their next request, and so do their operator tokens.`}`,
                            confirmLabel: granting ? `Grant ${role}` : `Take away ${role}`,
                            tone: granting ? 'primary' : 'danger',
                            run: () =>
                              setRoles.mutateAsync({ userId: u.id, roles: granting ? [...u.platformRoles, role] : u.platformRoles.filter((r) => r !== role) }),
                          })
                        }
                      />
                      {role}
                    </label>
                  );
                })}
              </div>
            </Td>
            <Td>
              <StatusBadge kind="access" state={u.disabled ? 'Disabled' : 'Active'} />
            </Td>
            <Td>
              <Link className="text-brand-700 hover:underline" href={`/operator/users/${u.id}`} aria-label={`Sessions of ${u.email}`}>
                {u.sessions} session{u.sessions === 1 ? '' : 's'}
              </Link>
            </Td>
            <Td>
              <div className="flex gap-2">
                {u.id === userId ? (
                  <span className="text-xs text-slate-500">You cannot disable yourself.</span>
                ) : (
                  <Button
                    type="button"
                    variant="secondary"
                    aria-label={`${u.disabled ? 'Enable' : 'Disable'} ${u.email}`}
                    onClick={() => ask({ ...disableQuestion(u), run: () => setDisabled.mutateAsync({ userId: u.id, disabled: !u.disabled }) })}
                  >
                    {u.disabled ? 'Enable' : 'Disable'}
                  </Button>
                )}
                <Button type="button" variant="secondary" onClick={() => reset.mutate({ userId: u.id })}>
                  Reset password
                </Button>
              </div>
            </Td>
          </tr>
        ))}
      </Table>
    </Card>
  );
}

/**
 * Accounts made from an invitation link whose e-mail nobody verified: the link went to the
 * inviter, so whoever chose the password may not hold the address. Such an account accepts no
 * invitation through an inviter's link and no single sign-on lands in it; the administrator
 * vouches for the address, or disables (or, with the CLI, deletes) the account.
 */
export function UnverifiedAccountsView({ userId }: { userId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const accounts = useQuery(trpc.users.unverified.queryOptions());
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.users.unverified.queryKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.users.list.queryKey() });
  };
  const verify = useMutation(trpc.users.verifyEmail.mutationOptions({ onSuccess: refresh }));
  const setDisabled = useMutation(trpc.users.setDisabled.mutationOptions({ onSuccess: refresh }));
  const error = verify.error ?? setDisabled.error;
  const { ask, dialog } = useConfirm();
  return (
    <Card title="Accounts with an unverified e-mail, made from an invitation">
      {dialog}
      <p className="mb-3 text-sm text-slate-600">
        Made from an invitation link the inviter held, so whoever chose the password may not hold the address. They cannot accept invitations through an
        inviter&apos;s link, and single sign-on never signs into them.
      </p>
      {error && (
        <div className="mb-3">
          <Alert testId="unverified-error">{errorMessage(error)}</Alert>
        </div>
      )}
      <Table head={['E-mail', 'Created', 'Memberships', 'Sessions', 'Invited by', '']} empty="None.">
        {accounts.data?.map((u) => (
          <tr key={u.id} data-testid={`unverified-${u.email}`}>
            <Td>{u.email}</Td>
            <Td>{new Date(u.createdAt).toLocaleString()}</Td>
            <Td>{u.memberships}</Td>
            <Td>{u.sessions}</Td>
            <Td>{u.invitedBy ?? '-'}</Td>
            <Td>
              <div className="flex gap-2">
                <Button type="button" variant="secondary" onClick={() => verify.mutate({ userId: u.id })}>
                  Verify e-mail
                </Button>
                {!u.disabled && u.id !== userId && (
                  <Button
                    type="button"
                    variant="secondary"
                    aria-label={`Disable ${u.email}`}
                    onClick={() => ask({ ...disableQuestion(u), run: () => setDisabled.mutateAsync({ userId: u.id, disabled: true }) })}
                  >
                    Disable
                  </Button>
                )}
              </div>
            </Td>
          </tr>
        ))}
      </Table>
    </Card>
  );
}
