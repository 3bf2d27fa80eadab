'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { signIn } from 'next-auth/react';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage, fieldMessage } from '@/components/ui/errors';
import { Alert, Button, Card, Field, Input, TextLink } from '@/components/ui/primitives';

/** Where an accepted invitation leads: the project, or the organization. */
const landing = (joined: { project: string | null; organization: string | null }) =>
  joined.project ? `/projects/${joined.project}` : joined.organization ? `/organizations/${joined.organization}` : '/projects';

/**
 * An invitation link: what it offers. Through the link mailed to the invited address, a new user
 * chooses a name and password (the account is made, they are signed in and land on the project);
 * the inviter's link never makes an account (whoever holds it may not hold the address), so it
 * says how to prove the address instead. An existing user signs in and accepts. When
 * single sign-on is configured (`oidcName`), anyone may instead continue with the provider: it
 * brings them back here (`acceptOnReturn`) signed in as the provider's identity, and the invitation
 * is accepted for it at once when its e-mail is the invited one (otherwise they are told whom it
 * is for, and the link stays unused).
 */
export function AcceptInvitation({
  token,
  signedInAs,
  oidcName = null,
  acceptOnReturn = false,
}: {
  token: string;
  signedInAs: string | null;
  oidcName?: string | null;
  acceptOnReturn?: boolean;
}) {
  const trpc = useTRPC();
  const preview = useQuery({ ...trpc.invitations.preview.queryOptions({ token }), retry: false });
  const [signingIn, setSigningIn] = useState(false);
  const accept = useMutation(trpc.invitations.accept.mutationOptions({ onSuccess: (joined) => window.location.assign(landing(joined)) }));
  const inviteeSignedIn = Boolean(preview.data && signedInAs?.toLowerCase() === preview.data.email);
  // Back from the provider as the invited e-mail: accept once, as the click on "Continue with" asked.
  const accepted = useRef(false);
  useEffect(() => {
    if (acceptOnReturn && inviteeSignedIn && !accepted.current) {
      accepted.current = true;
      accept.mutate({ token });
    }
  }, [acceptOnReturn, inviteeSignedIn, accept, token]);
  const acceptNew = useMutation(
    trpc.invitations.acceptNew.mutationOptions({
      onSuccess: async (joined, input) => {
        setSigningIn(true);
        await signIn('credentials', { email: joined.email, password: input.password, redirect: false });
        window.location.assign(landing(joined));
      },
    }),
  );
  if (preview.error) return <Alert testId="invitation-error">{errorMessage(preview.error)}</Alert>;
  const inv = preview.data;
  if (!inv) return <p className="text-sm text-slate-500">Reading the invitation…</p>;
  const where = inv.kind === 'project' ? `project ${inv.project}` : `organization ${inv.organization}`;

  function onCreate(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    acceptNew.mutate({ token, name: String(form.get('name') ?? '').trim(), password: String(form.get('password') ?? '') });
  }

  const continueWithProvider = oidcName && !inviteeSignedIn && (
    <div className="mt-4 space-y-2 border-t border-slate-200 pt-4">
      <Button
        type="button"
        variant="secondary"
        className="w-full"
        onClick={() => signIn('oidc', { callbackUrl: `/invite/${encodeURIComponent(token)}?accept=1` })}
      >
        Continue with {oidcName}
      </Button>
      <p className="text-xs text-slate-500">The invitation is accepted for the identity you sign in as, when its e-mail is {inv.email}.</p>
    </div>
  );

  return (
    <Card title={`Join ${inv.name}`}>
      <p className="mb-4 text-sm text-slate-600" data-testid="invitation-summary">
        {inv.email} is invited to {where} as <strong>{inv.role}</strong>.
      </p>
      {acceptOnReturn && signedInAs && !inviteeSignedIn && (
        <div className="mb-3">
          <Alert testId="accept-error">
            You are signed in as {signedInAs}, but this invitation is for {inv.email}: sign in with that address to accept it.
          </Alert>
        </div>
      )}
      {inv.userExists ? (
        inviteeSignedIn ? (
          <div className="space-y-3">
            {accept.error && <Alert testId="accept-error">{errorMessage(accept.error)}</Alert>}
            <Button type="button" onClick={() => accept.mutate({ token })} disabled={accept.isPending}>
              Accept invitation
            </Button>
          </div>
        ) : (
          <p className="text-sm">
            {signedInAs ? `You are signed in as ${signedInAs}. ` : ''}
            <TextLink href={`/sign-in?callbackUrl=${encodeURIComponent(`/invite/${token}`)}`}>Sign in as {inv.email}</TextLink> to accept.
          </p>
        )
      ) : !inv.viaMail ? (
        <p className="text-sm text-slate-600" data-testid="invitation-needs-proof">
          This link does not create accounts: {oidcName ? `continue with ${oidcName} as ${inv.email}, ` : ''}use the invitation link mailed to {inv.email}, or
          ask an administrator to create your account and then sign in.
        </p>
      ) : (
        <form onSubmit={onCreate} className="space-y-4" noValidate>
          <Field label="Your name" htmlFor="invite-name" error={fieldMessage(acceptNew.error, 'name')}>
            <Input id="invite-name" name="name" required maxLength={100} autoComplete="name" />
          </Field>
          <Field label="Choose a password" htmlFor="invite-password" error={fieldMessage(acceptNew.error, 'password')} hint="At least 8 characters.">
            <Input id="invite-password" name="password" type="password" required minLength={8} autoComplete="new-password" />
          </Field>
          {acceptNew.error && !fieldMessage(acceptNew.error, 'password') && !fieldMessage(acceptNew.error, 'name') && (
            <Alert testId="accept-error">{errorMessage(acceptNew.error)}</Alert>
          )}
          <Button type="submit" className="w-full" disabled={acceptNew.isPending || signingIn}>
            {signingIn ? 'Signing in…' : 'Create account and join'}
          </Button>
        </form>
      )}
      {continueWithProvider}
    </Card>
  );
}

/** A password-reset link: choose a new password (every session of the user ends), then sign in. */
export function ResetPassword({ token }: { token: string }) {
  const trpc = useTRPC();
  const preview = useQuery({ ...trpc.users.passwordReset.preview.queryOptions({ token }), retry: false });
  const use = useMutation(trpc.users.passwordReset.use.mutationOptions());
  if (preview.error) return <Alert testId="reset-error">{errorMessage(preview.error)}</Alert>;
  if (!preview.data) return <p className="text-sm text-slate-500">Reading the link…</p>;
  if (use.isSuccess) {
    return (
      <Alert tone="green" testId="reset-done">
        Password changed. <TextLink href="/sign-in">Sign in</TextLink> with it.
      </Alert>
    );
  }
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    use.mutate({ token, newPassword: String(new FormData(event.currentTarget).get('password') ?? '') });
  }
  return (
    <Card title={`New password for ${preview.data.email}`}>
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        <Field label="New password" htmlFor="reset-password" error={fieldMessage(use.error, 'newPassword')} hint="At least 8 characters.">
          <Input id="reset-password" name="password" type="password" required minLength={8} autoComplete="new-password" />
        </Field>
        {use.error && !fieldMessage(use.error, 'newPassword') && <Alert testId="reset-error">{errorMessage(use.error)}</Alert>}
        <Button type="submit" className="w-full" disabled={use.isPending}>
          Set password
        </Button>
      </form>
    </Card>
  );
}
