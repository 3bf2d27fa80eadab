import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, serverCaller, trpc } from '@/app/_trpc/server';
import { MembersView } from '@/components/tenancy/members-view';

export const metadata: Metadata = { title: 'Members' };

export default async function ProjectMembersPage({ params }: { params: Promise<{ project: string }> }) {
  const { project } = await params;
  const caller = await serverCaller();
  const [access, me] = await Promise.all([caller.projects.get({ project }), caller.me.get()]);
  await getQueryClient().prefetchQuery(trpc.projects.members.list.queryOptions({ project }));
  return (
    <HydrateClient>
      <MembersView kind="project" slug={project} role={access.role} userId={me!.id} />
    </HydrateClient>
  );
}
