'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { signOut } from 'next-auth/react';
import type { ReactNode } from 'react';
import { cx } from '@/components/ui/primitives';
import { ProjectSwitcher } from '@/components/tenancy/project-switcher';
import type { NavSection } from './nav';

export function Shell({ user, nav, children }: { user: { name: string; email: string; platformRoles: string[] }; nav: NavSection[]; children: ReactNode }) {
  const pathname = usePathname();
  return (
    <div className="flex min-h-screen">
      <aside className="hidden w-56 shrink-0 border-r border-slate-200 bg-white md:block">
        <div className="px-4 py-4">
          <Link href="/" className="text-lg font-semibold tracking-tight text-slate-900">
            Meridian
          </Link>
        </div>
        <nav aria-label="Main" className="space-y-5 px-2 pb-6">
          {nav.map((section) => (
            <div key={section.title}>
              <p className="px-2 text-xs font-semibold uppercase tracking-wide text-slate-400">{section.title}</p>
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
      </aside>
      <div className="flex min-w-0 flex-1 flex-col">
        <header className="flex items-center justify-between gap-4 border-b border-slate-200 bg-white px-6 py-2.5">
          <ProjectSwitcher />
          <div className="flex items-center gap-3 text-sm">
            <span className="text-slate-600" data-testid="current-user">
              {user.email}
              {user.platformRoles.length > 0 && <span className="ml-1 text-slate-400">({user.platformRoles.join(', ')})</span>}
            </span>
            <Link href="/account/sessions" className="rounded-md px-2 py-1 text-slate-700 hover:bg-slate-50">
              Sessions
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
        <main className="mx-auto w-full max-w-7xl flex-1 px-6 py-6">{children}</main>
      </div>
    </div>
  );
}
