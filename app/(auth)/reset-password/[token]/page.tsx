import type { Metadata } from 'next';
import { ResetPassword } from '@/components/tenancy/link-forms';

export const metadata: Metadata = { title: 'Reset password' };
export const dynamic = 'force-dynamic';

export default async function ResetPasswordPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-md">
        <p className="mb-6 text-center text-2xl font-semibold tracking-tight text-slate-900">Meridian</p>
        <ResetPassword token={token} />
      </div>
    </main>
  );
}
