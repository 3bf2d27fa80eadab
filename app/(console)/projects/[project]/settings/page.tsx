import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, serverCaller, trpc } from '@/app/_trpc/server';
import { ProjectSettingsView } from '@/components/projects/deletion';

export const metadata: Metadata = { title: 'Project settings' };

export default async function ProjectSettingsPage({ params }: { params: Promise<{ project: string }> }) {
  const { project: slug } = await params;
  const project = await (await serverCaller()).projects.get({ project: slug });
  if (project.phase === 'Deleting') await getQueryClient().prefetchQuery(trpc.projects.deletion.queryOptions({ project: slug }));
  return (
    <HydrateClient>
      <ProjectSettingsView
        project={project.slug}
        name={project.name}
        description={project.description}
        organization={project.organizationSlug}
        role={project.role}
        phase={project.phase}
      />
    </HydrateClient>
  );
}
