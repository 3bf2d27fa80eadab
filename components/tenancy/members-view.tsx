'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { useConfirm } from '@/components/ui/confirm-dialog';
import { errorMessage, fieldMessage } from '@/components/ui/errors';
import { Alert, Badge, Button, Card, Field, Input, Select, Table, Td, formatTime } from '@/components/ui/primitives';

/** The roles each kind of scope gives: organizations have owners and members; projects owners, editors and viewers. */
const rolesOf = { project: ['viewer', 'editor', 'owner'], organization: ['member', 'owner'] } as const;
type Role = (typeof rolesOf)[keyof typeof rolesOf][number];

/** What each role lets its holder do, for the question before a role changes. */
const roleMeaning: Record<Role, string> = {
  viewer: 'A viewer sees everything but changes nothing.',
  editor: 'An editor creates and changes networks, claims and machines, but not members or tokens.',
  owner: 'An owner can do everything, including adding and removing members and deleting the project.',
  member: 'A member sees the organization and its projects as its project roles allow.',
};

/**
 * The members of a project or an organization: roles (owners change them), removal, leaving, and
 * invitations by e-mail (the single-use link is shown once, pending ones can be revoked).
 */
export function MembersView(props: { kind: 'project' | 'organization'; slug: string; role: Role | null; userId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const { kind, slug } = props;
  const owner = props.role === 'owner';
  const roles = rolesOf[kind];
  // The two routers' member and invitation procedures are the same but for the scoping field
  // (`project` or `organization`) and the roles: typed as the project's, called with the right ones.
  const api = (kind === 'project' ? trpc.projects : trpc.organizations) as unknown as typeof trpc.projects;
  const scope = (kind === 'project' ? { project: slug } : { organization: slug }) as unknown as { project: string };
  const members = useQuery(api.members.list.queryOptions(scope));
  const invitations = useQuery({ ...api.invitations.list.queryOptions(scope), enabled: owner });
  const viaOrganization = useQuery({ ...trpc.projects.members.viaOrganization.queryOptions({ project: slug }), enabled: kind === 'project' });
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: api.members.list.queryKey() });
    void queryClient.invalidateQueries({ queryKey: api.invitations.list.queryKey() });
  };
  const setRole = useMutation(api.members.setRole.mutationOptions({ onSuccess: refresh }));
  const remove = useMutation(api.members.remove.mutationOptions({ onSuccess: refresh }));
  const leave = useMutation(api.members.leave.mutationOptions({ onSuccess: () => router.push('/projects') }));
  const revoke = useMutation(api.invitations.revoke.mutationOptions({ onSuccess: refresh }));
  const [link, setLink] = useState<{ email: string; url: string; mail: 'sent' | 'failed' | 'off' } | null>(null);
  const invite = useMutation(
    api.invitations.create.mutationOptions({
      onSuccess: (created) => {
        setLink({ email: created.email, url: `${window.location.origin}${created.path}`, mail: created.mail });
        refresh();
      },
    }),
  );
  const error = setRole.error ?? remove.error ?? leave.error ?? revoke.error;
  const { ask, dialog } = useConfirm();
  const onlyOwnerBack = kind === 'project' ? 'Only an owner of the project can add you back.' : 'Only an owner of the organization can add you back.';

  function onInvite(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    invite.mutate({ ...scope, email: String(form.get('email') ?? '').trim(), role: String(form.get('role')) as 'editor' });
  }

  return (
    <div className="space-y-6">
      {dialog}
      <Card
        title="Members"
        actions={
          <Button
            type="button"
            variant="secondary"
            disabled={leave.isPending}
            onClick={() =>
              ask({
                title: `Leave ${slug}?`,
                body: `You lose access to ${kind} ${slug} at once. ${onlyOwnerBack}`,
                confirmLabel: `Leave ${kind}`,
                run: () => leave.mutateAsync(scope),
              })
            }
          >
            Leave {kind}
          </Button>
        }
      >
        {error && (
          <div className="mb-3">
            <Alert testId="members-error">{errorMessage(error)}</Alert>
          </div>
        )}
        <Table head={['Member', 'Role', 'Since', '']}>
          {(members.data ?? []).map((m) => (
            <tr key={m.userId} data-testid={`member-${m.email}`}>
              <Td>
                {m.email} {m.userId === props.userId && <Badge>you</Badge>} {m.disabled && <Badge tone="red">disabled</Badge>}
                <div className="text-xs text-slate-500">{m.name}</div>
              </Td>
              <Td>
                {owner ? (
                  <Select
                    aria-label={`Role of ${m.email}`}
                    value={m.role}
                    disabled={setRole.isPending}
                    onChange={(e) => {
                      const role = e.target.value as Role;
                      ask({
                        title: `Make ${m.email} ${role === 'owner' ? 'an owner' : `a ${role}`}?`,
                        body: `${m.email} is ${m.role === 'owner' ? 'an owner' : `a ${m.role}`} of ${slug}. ${roleMeaning[role]}`,
                        confirmLabel: 'Change role',
                        tone: 'primary',
                        run: () => setRole.mutateAsync({ ...scope, userId: m.userId, role: role as 'editor' }),
                      });
                    }}
                  >
                    {roles.map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </Select>
                ) : (
                  <Badge tone={m.role === 'owner' ? 'blue' : 'slate'}>{m.role}</Badge>
                )}
              </Td>
              <Td>{formatTime(m.since)}</Td>
              <Td>
                {owner && m.userId !== props.userId && (
                  <Button
                    type="button"
                    variant="secondary"
                    aria-label={`Remove ${m.email}`}
                    onClick={() =>
                      ask({
                        title: `Remove ${m.email} from ${slug}?`,
                        body: `${m.email} loses access to ${kind} ${slug} at once; their API tokens for it stop working. You can invite them again later.`,
                        confirmLabel: 'Remove',
                        run: () => remove.mutateAsync({ ...scope, userId: m.userId }),
                      })
                    }
                  >
                    Remove
                  </Button>
                )}
              </Td>
            </tr>
          ))}
        </Table>
        {kind === 'project' && (viaOrganization.data?.length ?? 0) > 0 && (
          <div className="mt-4" data-testid="organization-access">
            <h3 className="mb-1 text-sm font-semibold text-slate-800">Owners through organization {viaOrganization.data![0].organization}</h3>
            <p className="mb-2 text-xs text-slate-500">The organization&apos;s owners own every project of it; change this on the organization&apos;s page.</p>
            <Table head={['Person', 'Role', 'Since']}>
              {viaOrganization.data!.map((m) => (
                <tr key={m.userId} data-testid={`org-owner-${m.email}`}>
                  <Td>
                    {m.email} {m.userId === props.userId && <Badge>you</Badge>} {m.disabled && <Badge tone="red">disabled</Badge>}
                    <div className="text-xs text-slate-500">{m.name}</div>
                  </Td>
                  <Td>
                    <Badge tone="blue">owner</Badge> <span className="text-xs text-slate-500">through {m.organization}</span>
                  </Td>
                  <Td>{formatTime(m.since)}</Td>
                </tr>
              ))}
            </Table>
          </div>
        )}
      </Card>
      {owner && (
        <Card title="Invite people">
          <form onSubmit={onInvite} className="flex flex-wrap items-end gap-3" noValidate>
            <Field label="E-mail" htmlFor="invite-email" error={fieldMessage(invite.error, 'email')}>
              <Input id="invite-email" name="email" type="email" required />
            </Field>
            <Field label="Role" htmlFor="invite-role">
              <Select id="invite-role" name="role" defaultValue={kind === 'project' ? 'editor' : 'member'}>
                {roles.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </Select>
            </Field>
            <Button type="submit" disabled={invite.isPending}>
              Create invitation
            </Button>
          </form>
          {invite.error && !fieldMessage(invite.error, 'email') && (
            <div className="mt-3">
              <Alert testId="invite-error">{errorMessage(invite.error)}</Alert>
            </div>
          )}
          {link && (
            <div className="mt-3">
              <Alert tone={link.mail === 'failed' ? 'red' : 'green'} testId="invitation-link">
                {link.mail === 'sent'
                  ? `An invitation was mailed to ${link.email}. `
                  : link.mail === 'failed'
                    ? `Mailing the invitation to ${link.email} failed; invite again to retry. `
                    : ''}
                This link works once, for 7 days, and is not shown again; it joins only someone who signs in as {link.email} (single sign-on, or an account
                whose address is verified), never a new password account:{' '}
                <code className="break-all" data-testid="invitation-url">
                  {link.url}
                </code>
              </Alert>
            </div>
          )}
          <div className="mt-4">
            <Table head={['Pending invitation', 'Role', 'Expires', '']} empty="No pending invitations.">
              {(invitations.data ?? []).map((i) => (
                <tr key={i.id}>
                  <Td>
                    {i.email}
                    <div className="text-xs text-slate-500">by {i.invitedBy ?? 'someone'}</div>
                  </Td>
                  <Td>{i.role}</Td>
                  <Td>{formatTime(i.expiresAt)}</Td>
                  <Td>
                    <Button
                      type="button"
                      variant="secondary"
                      aria-label={`Revoke the invitation of ${i.email}`}
                      onClick={() =>
                        ask({
                          title: `Revoke the invitation of ${i.email}?`,
                          body: `The link sent for ${i.email} stops working. You can invite them again later.`,
                          confirmLabel: 'Revoke',
                          run: () => revoke.mutateAsync({ ...scope, id: i.id }),
                        })
                      }
                    >
                      Revoke
                    </Button>
                  </Td>
                </tr>
              ))}
            </Table>
          </div>
        </Card>
      )}
    </div>
  );
}
