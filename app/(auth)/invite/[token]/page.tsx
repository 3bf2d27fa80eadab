import type { Metadata } from 'next';
import { AcceptInvitation } from '@/components/tenancy/link-forms';
import { currentUser } from '@/server/auth/session';
import { env, oidcEnabled } from '@/server/env';

export const metadata: Metadata = { title: 'Invitation' };
export const dynamic = 'force-dynamic';

export default async function InvitationPage({ params, searchParams }: { params: Promise<{ token: string }>; searchParams: Promise<{ accept?: string }> }) {
  const { token } = await params;
  const { accept } = await searchParams;
  const user = await currentUser();
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-md">
        <p className="mb-6 text-center text-2xl font-semibold tracking-tight text-slate-900">Meridian</p>
        <AcceptInvitation
          token={token}
          signedInAs={user?.email ?? null}
          oidcName={oidcEnabled() ? env().AUTH_OIDC_NAME : null}
          acceptOnReturn={accept === '1'}
        />
      </div>
    </main>
  );
}
