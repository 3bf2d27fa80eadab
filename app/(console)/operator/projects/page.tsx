import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { OperatorProjectsView } from '@/components/projects/operator-projects-view';
import { PageHeader } from '@/components/ui/primitives';
import { requirePlatformRole } from '@/server/auth/guards';

export const metadata: Metadata = { title: 'Projects' };

export default async function OperatorProjectsPage() {
  await requirePlatformRole('operator');
  await getQueryClient().prefetchQuery(trpc.projects.admin.list.queryOptions({ limit: 50, offset: 0 }));
  return (
    <>
      <PageHeader
        title="Projects"
        description="Every project, deletions under way first with what they wait on. Deleting a project releases everything it holds; what needs the machine provider waits for it, retried with backoff."
      />
      <HydrateClient>
        <OperatorProjectsView />
      </HydrateClient>
    </>
  );
}
