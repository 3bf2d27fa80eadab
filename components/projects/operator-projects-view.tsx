'use client';
import { StatusBadge } from '@/components/ui/status-badge';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { Pager } from '@/components/ui/pager';
import { Button, Card, EmptyState, Select, Table, Td, formatTime } from '@/components/ui/primitives';
import { SearchBox, useSearchText } from '@/components/ui/search-box';
import { DeleteProjectForm, DeletionStatus } from './deletion';

const PAGE = 50;
const REFRESH_MS = 5_000;

/**
 * Every project for platform operators: deletions under way first, with what they wait on; an
 * operator can open one to follow its deletion, or delete a project (the slug typed to confirm).
 */
export function OperatorProjectsView() {
  const trpc = useTRPC();
  const search = useSearchText();
  const [phase, setPhase] = useState<'' | 'Active' | 'Deleting'>('');
  const [offset, setOffset] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  const list = useQuery({
    ...trpc.projects.admin.list.queryOptions({ search: search.settled || undefined, phase: phase || undefined, limit: PAGE, offset }),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.items.some((p) => p.phase === 'Deleting') ? REFRESH_MS : false),
  });
  const selected = list.data?.items.find((p) => p.slug === open);
  return (
    <div className="space-y-6">
      <Card title="Projects">
        <div className="mb-3 flex flex-wrap gap-2">
          <SearchBox label="Search projects" placeholder="project or organization" search={search} onChange={() => setOffset(0)} className="w-full max-w-xs" />
          <Select
            aria-label="Phase"
            value={phase}
            onChange={(e) => {
              setPhase(e.target.value as typeof phase);
              setOffset(0);
            }}
            className="max-w-[10rem]"
          >
            <option value="">Any phase</option>
            <option value="Active">Active</option>
            <option value="Deleting">Deleting</option>
          </Select>
        </div>
        {list.data && list.data.items.length === 0 ? (
          <EmptyState title="No projects match">Projects appear here as organizations create them.</EmptyState>
        ) : (
          <Table head={['Project', 'Organization', 'Phase', 'Waiting on', 'Created', '']}>
            {list.data?.items.map((p) => (
              <tr key={p.id}>
                <Td>
                  <span className="font-mono">{p.slug}</span>
                  <div className="text-xs text-slate-500">{p.name}</div>
                </Td>
                <Td>{p.organizationSlug}</Td>
                <Td>
                  <StatusBadge kind="project" state={p.phase} />
                  {p.deletionRequestedAt && <div className="text-xs text-slate-500">since {formatTime(p.deletionRequestedAt)}</div>}
                </Td>
                <Td>
                  {Object.entries(p.waitingOn)
                    .map(([dep, n]) => `${n} on ${dep}`)
                    .join(', ') || '—'}
                </Td>
                <Td>{formatTime(p.createdAt)}</Td>
                <Td>
                  <Button
                    variant="secondary"
                    onClick={() => setOpen(open === p.slug ? null : p.slug)}
                    aria-label={`${p.phase === 'Deleting' ? 'Follow' : 'Delete'} ${p.slug}`}
                  >
                    {p.phase === 'Deleting' ? 'Follow' : 'Delete…'}
                  </Button>
                </Td>
              </tr>
            ))}
          </Table>
        )}
        {list.data && (
          <Pager
            label="Projects pages"
            offset={offset}
            count={list.data.items.length}
            pageSize={PAGE}
            total={list.data.total}
            hasNext={offset + list.data.items.length < list.data.total}
            onChange={setOffset}
          />
        )}
      </Card>
      {open && (
        <Card title={`Project ${open}`}>
          {selected?.phase === 'Active' ? <DeleteProjectForm project={open} onDeleted={() => void list.refetch()} /> : <DeletionStatus project={open} />}
        </Card>
      )}
    </div>
  );
}
