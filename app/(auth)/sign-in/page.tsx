import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { SignInForm } from '@/components/auth/sign-in-form';
import { currentUser } from '@/server/auth/session';
import { env, oidcEnabled } from '@/server/env';

export const metadata: Metadata = { title: 'Sign in' };
export const dynamic = 'force-dynamic';

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string; error?: string }> }) {
  if (await currentUser()) redirect('/');
  const { callbackUrl, error } = await searchParams;
  const safeCallback = callbackUrl && callbackUrl.startsWith('/') && !callbackUrl.startsWith('//') ? callbackUrl : '/';
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm">
        <div className="mb-6 text-center">
          <p className="text-2xl font-semibold tracking-tight text-slate-900">Meridian</p>
          <p className="mt-1 text-sm text-slate-600">Address space, quota and bare-metal fleet</p>
        </div>
        <SignInForm
          callbackUrl={safeCallback}
          oidcName={oidcEnabled() ? env().AUTH_OIDC_NAME : null}
          returnedError={typeof error === 'string' ? error : null}
        />
      </div>
    </main>
  );
}
