'use client';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/app/_trpc/client';
import { Button, EmptyState, Input, Table, Td, formatTime } from '@/components/ui/primitives';

/** The audit log, newest first, filtered and paginated on the server. `project` scopes it to one project. */
export function EventsView({ project }: { project?: string }) {
  const trpc = useTRPC();
  const [filters, setFilters] = useState({ action: '', actor: '', search: '' });
  const input = {
    action: filters.action || undefined,
    actor: filters.actor || undefined,
    search: filters.search || undefined,
    limit: 50,
  };
  const options = project
    ? trpc.audit.project.infiniteQueryOptions({ ...input, project }, { getNextPageParam: (p) => p.nextCursor ?? undefined })
    : trpc.audit.list.infiniteQueryOptions(input, { getNextPageParam: (p) => p.nextCursor ?? undefined });
  const query = useInfiniteQuery(options as typeof options & { initialPageParam: number | undefined });
  const rows = query.data?.pages.flatMap((p) => p.items) ?? [];

  return (
    <div className="space-y-3">
      <form
        className="flex flex-wrap gap-2"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          setFilters({ action: String(f.get('action') ?? ''), actor: String(f.get('actor') ?? ''), search: String(f.get('search') ?? '') });
        }}
      >
        <Input name="action" aria-label="Action starts with" placeholder="action, e.g. token." className="w-48" />
        <Input name="actor" aria-label="Actor" placeholder="actor" className="w-48" />
        <Input name="search" aria-label="Search" placeholder="object or reason" className="w-56" />
        <Button type="submit" variant="secondary">
          Filter
        </Button>
      </form>
      {query.isSuccess && rows.length === 0 ? (
        <EmptyState title="No events match">Every change — sign-ins, tokens, claims, machines, faults — is recorded here with who made it and why.</EmptyState>
      ) : (
        <div className="rounded-lg border border-slate-200 bg-white">
          <Table head={['Time', 'Actor', 'Action', 'Object', 'Reason']}>
            {rows.map((e) => (
              <tr key={e.id}>
                <Td className="whitespace-nowrap font-mono text-xs">{formatTime(e.at)}</Td>
                <Td>{e.actorLabel}</Td>
                <Td>
                  <code className="text-xs">{e.action}</code>
                </Td>
                <Td>
                  {e.objectType}
                  {e.objectName && <span className="text-slate-500"> {e.objectName}</span>}
                </Td>
                <Td className="text-slate-600">{e.reason ?? ''}</Td>
              </tr>
            ))}
          </Table>
        </div>
      )}
      {query.hasNextPage && (
        <Button variant="secondary" onClick={() => void query.fetchNextPage()} disabled={query.isFetchingNextPage}>
          Load older events
        </Button>
      )}
    </div>
  );
}
