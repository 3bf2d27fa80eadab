import type { Metadata } from 'next';
import { HydrateClient, getQueryClient, trpc } from '@/app/_trpc/server';
import { TokensView } from '@/components/tokens/tokens-view';

export const metadata: Metadata = { title: 'API tokens' };

export default async function TokensPage({ params }: { params: Promise<{ project: string }> }) {
  const { project } = await params;
  await getQueryClient().prefetchQuery(trpc.tokens.list.queryOptions({ project }));
  return (
    <HydrateClient>
      <TokensView project={project} />
    </HydrateClient>
  );
}
