'use client';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { Button, EmptyState, Input, Select, Table, Td, TextLink, formatTime } from '@/components/ui/primitives';
import { auditObjectHref } from './object-link';

/** Words for the kinds of object the log records (the stored kind is shown as is when it is not here). */
const kindLabels: Record<string, string> = {
  allowancebucket: 'Allowance bucket',
  apiToken: 'API token',
  capacity: 'Capacity',
  claimcreationpolicy: 'Claim creation policy',
  cluster: 'Cluster',
  grantcreationpolicy: 'Grant creation policy',
  ipallocation: 'IP allocation',
  ipclaim: 'IP claim',
  machine: 'Machine',
  network: 'Network',
  operation: 'Provider operation',
  organization: 'Organization',
  pool: 'Pool',
  project: 'Project',
  quotaincreaserequest: 'Quota increase request',
  resourceclaim: 'Resource claim',
  resourcegrant: 'Resource grant',
  resourceregistration: 'Resource registration',
  simulator: 'Simulator',
  user: 'User',
};
export const kindLabel = (kind: string) => kindLabels[kind] ?? kind;

interface Filters {
  projectId: string;
  actor: string;
  objectType: string;
  action: string;
  since: string;
  until: string;
  search: string;
}
const noFilters: Filters = { projectId: '', actor: '', objectType: '', action: '', since: '', until: '', search: '' };

/** A `datetime-local` value (the browser's local time) as an ISO instant; undefined when empty. */
const localTime = (value: string) => (value ? new Date(value).toISOString() : undefined);

/**
 * The audit log, newest first, filtered and paginated on the server (keyset: "Load older events"
 * continues below the last row). Operators see every project and filter by one; `project` scopes
 * the view to that project's timeline. "Export CSV" downloads the whole filtered set.
 */
export function EventsView({ project }: { project?: string }) {
  const trpc = useTRPC();
  const [filters, setFilters] = useState<Filters>(noFilters);
  const choices = useQuery(trpc.audit.filterChoices.queryOptions());
  const input = {
    action: filters.action || undefined,
    actor: filters.actor.trim() || undefined,
    objectType: filters.objectType || undefined,
    search: filters.search.trim() || undefined,
    since: localTime(filters.since),
    until: localTime(filters.until),
    limit: 50,
  };
  const options = project
    ? trpc.audit.project.infiniteQueryOptions({ ...input, project }, { getNextPageParam: (p) => p.nextCursor ?? undefined })
    : trpc.audit.list.infiniteQueryOptions({ ...input, projectId: filters.projectId || undefined }, { getNextPageParam: (p) => p.nextCursor ?? undefined });
  const query = useInfiniteQuery(options as typeof options & { initialPageParam: string | undefined });
  const rows = query.data?.pages.flatMap((p) => p.items) ?? [];
  const projectSlug = project ?? choices.data?.projects.find((p) => p.id === filters.projectId)?.slug;

  const exportParams = new URLSearchParams();
  if (projectSlug) exportParams.set('project', projectSlug);
  for (const key of ['action', 'actor', 'objectType', 'search'] as const) if (input[key]) exportParams.set(key, input[key]!);
  if (input.since) exportParams.set('since', input.since);
  if (input.until) exportParams.set('until', input.until);

  return (
    <div className="space-y-3">
      <form
        aria-label="Filter events"
        className="grid gap-2 sm:grid-cols-2 lg:grid-cols-4 lg:items-end"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          const text = (k: keyof Filters) => String(f.get(k) ?? '');
          setFilters({
            projectId: text('projectId'),
            actor: text('actor'),
            objectType: text('objectType'),
            action: text('action'),
            since: text('since'),
            until: text('until'),
            search: text('search'),
          });
        }}
        onReset={() => setFilters(noFilters)}
      >
        {!project && (
          <FilterField label="Project">
            <Select name="projectId" defaultValue="">
              <option value="">All projects</option>
              {choices.data?.projects.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.slug}
                </option>
              ))}
            </Select>
          </FilterField>
        )}
        <FilterField label="Actor">
          <Input name="actor" placeholder="e-mail, token or job name" list="audit-actors" />
          <datalist id="audit-actors">
            {[...new Set(rows.map((r) => r.actorLabel))].slice(0, 50).map((a) => (
              <option key={a} value={a} />
            ))}
          </datalist>
        </FilterField>
        <FilterField label="Object kind">
          <Select name="objectType" defaultValue="">
            <option value="">Any kind</option>
            {choices.data?.objectTypes.map((k) => (
              <option key={k} value={k}>
                {kindLabel(k)}
              </option>
            ))}
          </Select>
        </FilterField>
        <FilterField label="Action">
          <Select name="action" defaultValue="">
            <option value="">Any action</option>
            {actionChoices(choices.data?.actions ?? []).map((a) => (
              <option key={a} value={a}>
                {a.endsWith('.') ? `${a}* (all)` : a}
              </option>
            ))}
          </Select>
        </FilterField>
        <FilterField label="From">
          <Input name="since" type="datetime-local" />
        </FilterField>
        <FilterField label="To">
          <Input name="until" type="datetime-local" />
        </FilterField>
        {project && (
          <FilterField label="Search">
            <Input name="search" placeholder="object name or reason" />
          </FilterField>
        )}
        <div className="flex flex-wrap gap-2">
          <Button type="submit" variant="secondary">
            Filter
          </Button>
          <Button type="reset" variant="ghost">
            Clear
          </Button>
          <a
            href={`/api/audit/export?${exportParams.toString()}`}
            className="inline-flex items-center rounded-md px-3 py-1.5 text-sm font-medium text-brand-700 ring-1 ring-slate-300 hover:bg-slate-50"
            download
          >
            Export CSV
          </a>
        </div>
      </form>
      {query.isSuccess && rows.length === 0 ? (
        <EmptyState title="No events match">Every change — sign-ins, tokens, claims, machines, faults — is recorded here with who made it and why.</EmptyState>
      ) : (
        <div className="rounded-lg border border-slate-200 bg-white">
          <Table label="Audit events" head={['Time', ...(project ? [] : ['Project']), 'Actor', 'Object', 'Action', 'Reason']}>
            {rows.map((e) => {
              const href = auditObjectHref(e, !project);
              const object = e.objectName ?? e.objectId ?? '';
              return (
                <tr key={e.id}>
                  <Td className="whitespace-nowrap font-mono text-xs">{formatTime(e.at)}</Td>
                  {!project && <Td>{e.projectSlug ?? (e.projectId ? <span className="text-slate-500">deleted project</span> : '—')}</Td>}
                  <Td className="break-all">{e.actorLabel}</Td>
                  <Td>
                    <span className="text-slate-500">{kindLabel(e.objectType)}</span> {href && object ? <TextLink href={href}>{object}</TextLink> : object}
                  </Td>
                  <Td>
                    <code className="text-xs">{e.action}</code>
                  </Td>
                  <Td className="text-slate-600">{e.reason ?? ''}</Td>
                </tr>
              );
            })}
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

/** The actions that occur, each object's group ("machine.") offered first for all of its actions. */
function actionChoices(actions: string[]): string[] {
  const groups = [...new Set(actions.filter((a) => a.includes('.')).map((a) => a.slice(0, a.indexOf('.') + 1)))];
  return [...groups, ...actions].sort();
}

function FilterField({ label, children }: { label: string; children: ReactNode }) {
  return (
    <label className="block space-y-1 text-sm">
      <span className="font-medium text-slate-700">{label}</span>
      {children}
    </label>
  );
}
