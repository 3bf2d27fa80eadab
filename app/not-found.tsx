import type { Metadata } from 'next';
import { NotFoundView } from '@/components/ui/not-found';

export const metadata: Metadata = { title: 'Not found' };

/** An address no route matches. It looks nothing up, so it answers at once; the console's links lead to sign-in when nobody is signed in. */
export default function NotFound() {
  return (
    <main className="min-h-screen bg-slate-50 px-4">
      <NotFoundView />
    </main>
  );
}
