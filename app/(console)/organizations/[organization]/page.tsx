import { TRPCError } from '@trpc/server';
import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { HydrateClient, getQueryClient, serverCaller, trpc } from '@/app/_trpc/server';
import { MembersView } from '@/components/tenancy/members-view';
import { Badge, Card, PageHeader, Table, Td, TextLink } from '@/components/ui/primitives';

export const metadata: Metadata = { title: 'Organization' };

export default async function OrganizationPage({ params }: { params: Promise<{ organization: string }> }) {
  const { organization } = await params;
  const caller = await serverCaller();
  const [org, me] = await Promise.all([
    caller.organizations.get({ organization }).catch((e: unknown) => {
      // Another tenant's organization, or one the user holds no role in: not found, as everywhere.
      if (e instanceof TRPCError && (e.code === 'NOT_FOUND' || e.code === 'BAD_REQUEST')) notFound();
      throw e;
    }),
    caller.me.get(),
  ]);
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
                  <TextLink href={`/projects/${p.slug}`}>{p.slug}</TextLink>
                  <div className="text-xs text-slate-500">{p.name}</div>
                </Td>
                <Td>
                  <Badge tone={p.phase === 'Deleting' ? 'amber' : 'green'}>{p.phase}</Badge>
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
