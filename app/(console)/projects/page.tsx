import type { Metadata } from 'next';
import { serverCaller } from '@/app/_trpc/server';
import { DeletedNotice } from '@/components/ui/not-found';
import { Badge, EmptyState, PageHeader, Table, Td, TextLink } from '@/components/ui/primitives';

export const metadata: Metadata = { title: 'Projects' };

export default async function ProjectsPage({ searchParams }: { searchParams: Promise<{ deleted?: string }> }) {
  const { deleted } = await searchParams;
  const projects = await (await serverCaller()).projects.list();
  return (
    <>
      <PageHeader
        title="Projects"
        description="The projects you are a member of. A project is the tenant boundary: its networks, quota and machines are visible only to its members."
      />
      {deleted && (
        <DeletedNotice>
          Project {deleted} is being deleted: its tokens stopped working and everything it held is being released. It leaves this list when that is done.
        </DeletedNotice>
      )}
      {projects.length === 0 ? (
        <EmptyState
          title="You are not a member of any project yet"
          action={
            <div className="flex justify-center gap-4">
              <TextLink href="/organizations/new">New organization</TextLink>
              <TextLink href="/projects/new">New project</TextLink>
            </div>
          }
        >
          Create an organization and a project of your own, or ask an owner to invite you to theirs. Projects appear here with their networks, pod addresses,
          quota and machines.
        </EmptyState>
      ) : (
        <div className="rounded-lg border border-slate-200 bg-white">
          <Table head={['Project', 'Organization', 'Your role']}>
            {projects.map((p) => (
              <tr key={p.id}>
                <Td>
                  <TextLink href={`/projects/${p.slug}`}>{p.slug}</TextLink> {p.phase === 'Deleting' && <Badge tone="amber">Deleting</Badge>}
                  <div className="text-xs text-slate-500">{p.name}</div>
                </Td>
                <Td>{p.organizationVisible ? <TextLink href={`/organizations/${p.organizationSlug}`}>{p.organizationName}</TextLink> : p.organizationName}</Td>
                <Td>
                  <Badge tone={p.role === 'owner' ? 'blue' : 'slate'}>{p.role}</Badge>
                </Td>
              </tr>
            ))}
          </Table>
        </div>
      )}
    </>
  );
}
