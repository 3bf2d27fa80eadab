import { TRPCError } from '@trpc/server';
import { notFound } from 'next/navigation';
import type { ReactNode } from 'react';
import { HydrateClient, getQueryClient, serverCaller, trpc } from '@/app/_trpc/server';
import { CapacityAlertsBanner } from '@/components/capacity/alerts-banner';
import { DeletionStatus } from '@/components/projects/deletion';
import { ProjectLive } from '@/components/projects/project-live';
import { ProjectTabs } from '@/components/projects/project-tabs';

/** Every project page resolves membership first: non-members get the not-found page, no data. */
export default async function ProjectLayout({ children, params }: { children: ReactNode; params: Promise<{ project: string }> }) {
  const { project: slug } = await params;
  let project;
  try {
    project = await (await serverCaller()).projects.get({ project: slug });
  } catch (e) {
    if (e instanceof TRPCError && (e.code === 'NOT_FOUND' || e.code === 'FORBIDDEN' || e.code === 'BAD_REQUEST')) notFound();
    throw e;
  }
  if (project.phase === 'Deleting') await getQueryClient().prefetchQuery(trpc.projects.deletion.queryOptions({ project: slug }));
  return (
    <div>
      <div className="mb-4">
        <p className="text-xs uppercase tracking-wide text-slate-500">{project.organizationSlug}</p>
        <p className="text-lg font-semibold text-slate-900" data-testid="project-title">
          {project.name} <span className="font-normal text-slate-500">({project.slug})</span>
          {project.phase === 'Deleting' && (
            <span className="ml-2 rounded bg-amber-100 px-1.5 py-0.5 align-middle text-xs font-medium text-amber-800">Deleting</span>
          )}
        </p>
      </div>
      {project.phase === 'Deleting' && (
        <div className="mb-4">
          <HydrateClient>
            <DeletionStatus project={project.slug} part="banner" />
          </HydrateClient>
        </div>
      )}
      <CapacityAlertsBanner project={project.slug} />
      <ProjectTabs slug={project.slug} />
      <ProjectLive project={project.slug} />
      {children}
    </div>
  );
}
