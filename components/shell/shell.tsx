'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useQueryClient } from '@tanstack/react-query';
import { signOut } from 'next-auth/react';
import { useEffect, useState, type ReactNode } from 'react';
import { cx } from '@/components/ui/primitives';
import { ProjectSwitcher } from '@/components/tenancy/project-switcher';
import type { NavSection } from './nav';

/**
 * The console frame every page inherits: a skip link, the navigation (a sidebar from the `md`
 * breakpoint up; below it a Menu button in the header opens the same links as a panel), a header
 * that wraps instead of widening the page, and the main column. Nothing in the frame is wider than
 * a 360 px screen; wide content (tables) scrolls inside its own card.
 */
export function Shell({ user, nav, children }: { user: { name: string; email: string; platformRoles: string[] }; nav: NavSection[]; children: ReactNode }) {
  const pathname = usePathname();
  const [menuOpen, setMenuOpen] = useState(false);
  // Following a link closes the menu panel.
  useEffect(() => setMenuOpen(false), [pathname]);
  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && setMenuOpen(false);
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [menuOpen]);
  return (
    <div className="flex min-h-screen">
      <a
        href="#main"
        className="sr-only z-50 rounded-md bg-white px-3 py-2 text-sm font-medium text-brand-700 shadow focus:not-sr-only focus:fixed focus:left-3 focus:top-3"
      >
        Skip to content
      </a>
      <aside className="hidden w-56 shrink-0 border-r border-slate-200 bg-white md:block">
        <div className="px-4 py-4">
          <Link href="/" className="text-lg font-semibold tracking-tight text-slate-900">
            Meridian
          </Link>
        </div>
        <NavLinks nav={nav} pathname={pathname} label="Main" />
      </aside>
      <div className="flex min-w-0 flex-1 flex-col">
        <header className="flex flex-wrap items-center justify-between gap-x-4 gap-y-2 border-b border-slate-200 bg-white px-3 py-2.5 sm:px-6">
          <div className="flex min-w-0 items-center gap-3">
            <button
              type="button"
              className="rounded-md px-2 py-1 text-sm font-medium text-slate-700 ring-1 ring-slate-300 hover:bg-slate-50 md:hidden"
              aria-expanded={menuOpen}
              aria-controls="mobile-menu"
              onClick={() => setMenuOpen((open) => !open)}
            >
              {menuOpen ? 'Close menu' : 'Menu'}
            </button>
            <Link href="/" className="text-base font-semibold tracking-tight text-slate-900 md:hidden">
              Meridian
            </Link>
            <ProjectSwitcher />
          </div>
          <div className="flex min-w-0 flex-wrap items-center gap-x-3 gap-y-1 text-sm">
            <span className="min-w-0 break-all text-slate-600" data-testid="current-user">
              {user.email}
              {user.platformRoles.length > 0 && <span className="ml-1 text-slate-500">({user.platformRoles.join(', ')})</span>}
            </span>
            <Link href="/account/sessions" className="rounded-md px-2 py-1 text-slate-700 hover:bg-slate-50">
              Sessions
            </Link>
            <Link href="/account/tokens" className="rounded-md px-2 py-1 text-slate-700 hover:bg-slate-50">
              Tokens
            </Link>
            <button
              type="button"
              onClick={() => signOut({ callbackUrl: '/sign-in' })}
              className="rounded-md px-2 py-1 text-slate-700 ring-1 ring-slate-300 hover:bg-slate-50"
            >
              Sign out
            </button>
          </div>
        </header>
        {menuOpen && (
          <div id="mobile-menu" className="border-b border-slate-200 bg-white py-2 shadow-sm md:hidden">
            <NavLinks nav={nav} pathname={pathname} label="Menu" />
          </div>
        )}
        <main id="main" tabIndex={-1} className="mx-auto w-full min-w-0 max-w-7xl flex-1 px-3 py-4 outline-none sm:px-6 sm:py-6">
          <SessionEnded pathname={pathname} />
          {children}
        </main>
      </div>
    </div>
  );
}

function NavLinks({ nav, pathname, label }: { nav: NavSection[]; pathname: string; label: string }) {
  return (
    <nav aria-label={label} className="space-y-5 px-2 pb-6">
      {nav.map((section) => (
        <div key={section.title}>
          <p className="px-2 text-xs font-semibold uppercase tracking-wide text-slate-500">{section.title}</p>
          <ul className="mt-1 space-y-0.5">
            {section.items.map((item) => {
              const active = pathname === item.href || pathname.startsWith(item.href + '/');
              return (
                <li key={item.href}>
                  <Link
                    href={item.href}
                    aria-current={active ? 'page' : undefined}
                    className={cx(
                      'block rounded-md px-2 py-1.5 text-sm',
                      active ? 'bg-brand-50 font-medium text-brand-700' : 'text-slate-700 hover:bg-slate-100',
                    )}
                  >
                    {item.label}
                  </Link>
                </li>
              );
            })}
          </ul>
        </div>
      ))}
    </nav>
  );
}

/**
 * When any call of the page is answered "not signed in" (the session was revoked, expired or the
 * user disabled), a banner says so at once with a link to sign in again and come back here,
 * instead of each card showing its own error.
 */
function SessionEnded({ pathname }: { pathname: string }) {
  const queryClient = useQueryClient();
  const [ended, setEnded] = useState(false);
  useEffect(() => {
    const unauthorized = (error: unknown) => (error as { data?: { code?: string } | null } | null)?.data?.code === 'UNAUTHORIZED';
    const unsubscribeQueries = queryClient.getQueryCache().subscribe((event) => {
      if (event.type === 'updated' && unauthorized(event.query.state.error)) setEnded(true);
    });
    const unsubscribeMutations = queryClient.getMutationCache().subscribe((event) => {
      if (event.type === 'updated' && unauthorized(event.mutation?.state.error)) setEnded(true);
    });
    return () => {
      unsubscribeQueries();
      unsubscribeMutations();
    };
  }, [queryClient]);
  if (!ended) return null;
  return (
    <div className="mb-4 rounded-md border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900" role="alert" data-testid="session-ended">
      Your session has ended.{' '}
      <a href={`/sign-in?callbackUrl=${encodeURIComponent(pathname)}`} className="font-medium text-brand-700 underline">
        Sign in again
      </a>{' '}
      to continue where you were.
    </div>
  );
}
