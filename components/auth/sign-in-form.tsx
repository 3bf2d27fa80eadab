'use client';
import { signIn } from 'next-auth/react';
import { useState, type FormEvent } from 'react';
import { Alert, Button, Card, Field, Input } from '@/components/ui/primitives';

const messages: Record<string, string> = {
  invalid: 'Wrong e-mail or password.',
  disabled: 'Your Meridian account is disabled. Ask an administrator to enable it.',
  throttled: 'Too many failed attempts from here. Wait a little and try again.',
  unavailable: 'Meridian cannot reach its database right now. Try again in a moment.',
};

/**
 * What the sign-in page says for the `error` next-auth (or the OIDC sign-in callback,
 * server/auth/oidc-provider.ts) sent the browser back with.
 */
export function returnedErrorMessage(code: string, oidcName: string | null): string {
  const provider = oidcName ?? 'single sign-on';
  switch (code) {
    case 'OidcUnverified':
      return `${provider} has not verified the e-mail address of the account you signed in with, so Meridian cannot sign you in with it. Verify it there, or sign in another way.`;
    case 'OidcNoEmail':
      return `${provider} did not give Meridian an e-mail address for the account you signed in with, so Meridian cannot sign you in with it.`;
    case 'DatabaseUnavailable':
      return messages.unavailable;
    case 'OidcDisabled':
      return messages.disabled;
    case 'OidcAccountUnverified':
      return `A Meridian account with your e-mail address exists, but nobody verified that the address is its holder's, so ${provider} cannot sign you into it. Ask an administrator to review the account.`;
    default:
      return oidcName ? `Signing in with ${oidcName} did not work. Try again, or sign in another way.` : 'Signing in did not work. Try again.';
  }
}

export function SignInForm({ callbackUrl, oidcName, returnedError = null }: { callbackUrl: string; oidcName: string | null; returnedError?: string | null }) {
  const [error, setError] = useState<string | null>(returnedError ? returnedErrorMessage(returnedError, oidcName) : null);
  const [pending, setPending] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    setError(null);
    const result = await signIn('credentials', {
      email: String(form.get('email') ?? ''),
      password: String(form.get('password') ?? ''),
      redirect: false,
    });
    setPending(false);
    if (!result || result.error) {
      setError(messages[result?.code ?? 'invalid'] ?? messages.invalid);
      return;
    }
    window.location.assign(callbackUrl);
  }

  return (
    <Card>
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        <Field label="Email" htmlFor="email">
          <Input id="email" name="email" type="email" autoComplete="username" required autoFocus />
        </Field>
        <Field label="Password" htmlFor="password">
          <Input id="password" name="password" type="password" autoComplete="current-password" required />
        </Field>
        {error && <Alert testId="sign-in-error">{error}</Alert>}
        <Button type="submit" className="w-full" disabled={pending}>
          {pending ? 'Signing in…' : 'Sign in'}
        </Button>
      </form>
      {oidcName && (
        <div className="mt-4 border-t border-slate-100 pt-4">
          <Button variant="secondary" className="w-full" onClick={() => signIn('oidc', { callbackUrl })}>
            Continue with {oidcName}
          </Button>
        </div>
      )}
    </Card>
  );
}
