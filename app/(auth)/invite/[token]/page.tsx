import type { Metadata } from 'next';
import { AcceptInvitation } from '@/components/tenancy/link-forms';
import { currentUser } from '@/server/auth/session';

export const metadata: Metadata = { title: 'Invitation' };
export const dynamic = 'force-dynamic';

export default async function InvitationPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const user = await currentUser();
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-md">
        <p className="mb-6 text-center text-2xl font-semibold tracking-tight text-slate-900">Meridian</p>
        <AcceptInvitation token={token} signedInAs={user?.email ?? null} />
      </div>
    </main>
  );
}
