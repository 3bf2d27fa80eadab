import { TRPCError } from '@trpc/server';
import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { HydrateClient, getQueryClient, serverCaller, trpc } from '@/app/_trpc/server';
import { MembersView } from '@/components/tenancy/members-view';
import { Card, PageHeader, Table, Td, TextLink } from '@/components/ui/primitives';
import { StatusBadge } from '@/components/ui/status-badge';

export const metadata: Metadata = { title: 'Organization' };

export default async function OrganizationPage({ params }: { params: Promise<{ organization: string }> }) {
  const { organization } = await params;
  const caller = await serverCaller();
  const [org, me, mine] = await Promise.all([
    caller.organizations.get({ organization }).catch((e: unknown) => {
      // Another tenant's organization, or one the user holds no role in: not found, as everywhere.
      if (e instanceof TRPCError && (e.code === 'NOT_FOUND' || e.code === 'BAD_REQUEST')) notFound();
      throw e;
    }),
    caller.me.get(),
    caller.projects.list(),
  ]);
  // A member of the organization sees its projects, but opens only those it holds a role in.
  const openable = new Set(mine.map((p) => p.id));
  await getQueryClient().prefetchQuery(trpc.organizations.members.list.queryOptions({ organization }));
  return (
    <>
      <PageHeader
        title={org.name}
        description={`Organization ${org.slug}. Its owners own every project in it; its members create projects in it.`}
        actions={org.role ? <TextLink href={`/projects/new?organization=${org.slug}`}>New project</TextLink> : undefined}
      />
      <div className="space-y-6">
        <Card title="Projects">
          <Table head={['Project', 'Phase']} empty="No projects yet.">
            {org.projects.map((p) => (
              <tr key={p.id}>
                <Td>
                  {openable.has(p.id) ? <TextLink href={`/projects/${p.slug}`}>{p.slug}</TextLink> : <span className="font-medium">{p.slug}</span>}
                  <div className="text-xs text-slate-500">
                    {p.name}
                    {!openable.has(p.id) && ' · you hold no role in this project; its owners can add you'}
                  </div>
                </Td>
                <Td>
                  <StatusBadge kind="project" state={p.phase} />
                </Td>
              </tr>
            ))}
          </Table>
        </Card>
        <HydrateClient>
          <MembersView kind="organization" slug={organization} role={org.role} userId={me!.id} />
        </HydrateClient>
      </div>
    </>
  );
}
