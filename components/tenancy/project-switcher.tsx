'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useParams, useRouter } from 'next/navigation';
import { useTRPC } from '@/components/trpc/client';

/** The project switcher of the header, with the way to a new project or organization. */
export function ProjectSwitcher() {
  const trpc = useTRPC();
  const router = useRouter();
  const params = useParams<{ project?: string }>();
  const { data: projects } = useQuery(trpc.projects.list.queryOptions());
  return (
    <div className="flex min-w-0 flex-wrap items-center gap-x-3 gap-y-1 text-sm text-slate-600">
      {projects && projects.length > 0 ? (
        <label className="flex min-w-0 items-center gap-2">
          <span className="hidden sm:inline">Project</span>
          <select
            aria-label="Switch project"
            className="min-w-0 max-w-[11rem] rounded-md border border-slate-300 bg-white px-2 py-1 text-sm sm:max-w-none"
            value={params.project ?? ''}
            onChange={(e) => e.target.value && router.push(e.target.value.startsWith('/') ? e.target.value : `/projects/${e.target.value}`)}
          >
            <option value="">Choose…</option>
            {projects.map((p) => (
              <option key={p.id} value={p.slug}>
                {p.organizationSlug} / {p.slug}
              </option>
            ))}
          </select>
        </label>
      ) : (
        <span className="text-slate-500">No projects</span>
      )}
      <Link href="/projects/new" className="rounded-md px-2 py-1 text-brand-700 hover:bg-brand-50">
        New project
      </Link>
      <Link href="/organizations/new" className="rounded-md px-2 py-1 text-brand-700 hover:bg-brand-50">
        New organization
      </Link>
    </div>
  );
}
