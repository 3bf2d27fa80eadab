import Link from 'next/link';
import type { ReactNode } from 'react';

/**
 * What a missing page says, inside the console or outside it: what may have happened (deleted, a
 * typo, no access: the console does not tell a foreign project from a missing one) and the ways
 * back. Rendered without waiting for any data.
 */
export function NotFoundView() {
  return (
    <div className="mx-auto max-w-lg py-12 text-center" data-testid="not-found">
      <p className="text-sm font-semibold text-brand-700">404</p>
      <h1 className="mt-1 text-xl font-semibold text-slate-900">This page does not exist</h1>
      <p className="mt-3 text-sm text-slate-600">
        What it showed may have been deleted or renamed, the address may be mistyped, or it belongs to a project you are not a member of.
      </p>
      <nav aria-label="Ways back" className="mt-6 flex flex-wrap justify-center gap-4 text-sm font-medium">
        <Link href="/projects" className="text-brand-700 hover:underline">
          Your projects
        </Link>
        <Link href="/" className="text-brand-700 hover:underline">
          Overview
        </Link>
      </nav>
    </div>
  );
}

/**
 * The notice a list shows after the user deleted one of its items (the deleting page sends them
 * here with `?deleted=<name>`), so the user is not left on the page of something that is gone.
 */
export function DeletedNotice({ children }: { children: ReactNode }) {
  return (
    <div className="mb-4 rounded-md border border-emerald-200 bg-emerald-50 px-3 py-2 text-sm text-emerald-900" role="status" data-testid="deleted-notice">
      {children}
    </div>
  );
}
