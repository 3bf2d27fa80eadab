'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { cx } from '@/components/ui/primitives';

/** The project's sections; features add their tab here. */
export const projectTabs = [
  { path: '', label: 'Overview' },
  { path: '/networks', label: 'Networks' },
  { path: '/machines', label: 'Machines' },
  { path: '/quota', label: 'Quota' },
  { path: '/tokens', label: 'API tokens' },
  { path: '/webhooks', label: 'Webhooks' },
  { path: '/members', label: 'Members' },
  { path: '/activity', label: 'Activity' },
  { path: '/settings', label: 'Settings' },
];

export function ProjectTabs({ slug }: { slug: string }) {
  const pathname = usePathname();
  const base = `/projects/${slug}`;
  return (
    <nav aria-label="Project" className="mb-6 flex gap-1 overflow-x-auto border-b border-slate-200">
      {projectTabs.map((tab) => {
        const href = base + tab.path;
        const active = tab.path === '' ? pathname === base : pathname.startsWith(href);
        return (
          <Link
            key={tab.path}
            href={href}
            aria-current={active ? 'page' : undefined}
            className={cx(
              '-mb-px shrink-0 whitespace-nowrap border-b-2 px-3 py-2 text-sm',
              active ? 'border-brand-600 font-medium text-brand-700' : 'border-transparent text-slate-600 hover:text-slate-900',
            )}
          >
            {tab.label}
          </Link>
        );
      })}
    </nav>
  );
}
