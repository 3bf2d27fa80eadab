'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { useCanEdit } from '@/components/projects/hooks';
import { errorMessage } from '@/components/ui/errors';
import { useNow } from '@/components/ui/hooks';
import { Pager } from '@/components/ui/pager';
import { Alert, Button, Card, EmptyState, Select, cx } from '@/components/ui/primitives';
import { SearchBox, useSearchText } from '@/components/ui/search-box';
import { ago, phaseLabel, phaseOrder, toDate, type LastOperation } from './format';
import { useExactStatusText } from './hooks';
import { SAFETY_REFETCH_MS, useFleetLive } from './live';
import { LiveIndicator, OperationSummary, PhaseBadge } from './parts';
import { plainReason } from './plain-words';
import { MACHINES_PAGE_SIZE, machinesListInput, phaseCountInput } from './queries';
import { RequestMachineForm } from './request-machine-form';
import type { MachinePhase } from '@/server/fleet/phases';

/**
 * The project's machines: phase, where each one is bound, and its newest provider operation;
 * filtered and paginated on the server, updated live as the machines move (see live.ts). Editors
 * request new machines here.
 */
export function MachinesView({ project, initialPhase = '', openForm = false }: { project: string; initialPhase?: MachinePhase | ''; openForm?: boolean }) {
  const trpc = useTRPC();
  const canEdit = useCanEdit(project);
  const exact = useExactStatusText();
  const [phase, setPhase] = useState<MachinePhase | ''>(initialPhase);
  const searchBox = useSearchText();
  const search = searchBox.settled;
  const [offset, setOffset] = useState(0);
  const [formOpen, setFormOpen] = useState<boolean | null>(openForm ? true : null);
  const live = useFleetLive({ project });
  const list = useQuery({
    ...trpc.fleet.machines.list.queryOptions(machinesListInput(project, offset, phase, search)),
    placeholderData: keepPreviousData,
    refetchInterval: SAFETY_REFETCH_MS,
  });
  const items = list.data?.items ?? [];
  const total = list.data?.total ?? 0;
  const now = useNow(5_000);
  // Released machines are not in the default list; a project with only those still shows the list (and its filter).
  const released = useQuery({ ...trpc.fleet.machines.list.queryOptions(phaseCountInput(project, 'Released')), refetchInterval: SAFETY_REFETCH_MS });
  const noneAtAll = list.isSuccess && total === 0 && offset === 0 && !phase && !search && released.data?.total === 0;
  // The form starts open when there is nothing to list yet; after that it is the user's choice.
  const showForm = canEdit && (formOpen ?? noneAtAll);

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold text-slate-900">Machines</h1>
          <p className="mt-1 max-w-3xl text-sm text-slate-600">
            Bare-metal machines of this project: request one, follow it through approval, allocation and installation, and release it when done. Released
            machines leave this list (choose Released to see them, with their timelines); their names can be used again.
          </p>
        </div>
        <div className="flex items-center gap-3">
          <LiveIndicator state={live} fetching={list.isFetching} />
          {canEdit && !showForm && released.isSuccess && <Button onClick={() => setFormOpen(true)}>Request a machine</Button>}
        </div>
      </div>

      {showForm && (
        <Card
          title="Request a machine"
          actions={
            !noneAtAll && (
              <Button variant="ghost" className="text-xs" onClick={() => setFormOpen(false)}>
                Hide
              </Button>
            )
          }
        >
          <RequestMachineForm project={project} />
        </Card>
      )}

      {list.error && <Alert testId="machines-error">{errorMessage(list.error)}</Alert>}
      {noneAtAll ? (
        !showForm && (
          <EmptyState title="No machines yet">
            Machines you request appear here with their phase, the device they are bound to and their latest provider operation.{' '}
            {canEdit ? '' : 'An editor of this project can request one.'}
          </EmptyState>
        )
      ) : (
        <section aria-labelledby="machine-list-heading" className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm">
          <div className="mb-3 flex flex-wrap items-center justify-between gap-2">
            <h2 id="machine-list-heading" className="text-sm font-semibold text-slate-800">
              {total.toLocaleString('en-US')} {phase === 'Released' ? 'released' : phase ? '' : 'live'} {total === 1 ? 'machine' : 'machines'}
              {phase && phase !== 'Released' && ` in ${phaseLabel(phase).toLowerCase()}`}
            </h2>
            <div className="flex flex-wrap gap-2">
              <div className="w-44">
                <Select
                  aria-label="Phase"
                  value={phase}
                  onChange={(e) => {
                    setPhase(e.target.value as MachinePhase | '');
                    setOffset(0);
                  }}
                >
                  <option value="">Live machines</option>
                  {phaseOrder.map((p) => (
                    <option key={p} value={p}>
                      {phaseLabel(p)}
                    </option>
                  ))}
                </Select>
              </div>
              <SearchBox label="Search machines" placeholder="Name or device" search={searchBox} onChange={() => setOffset(0)} className="w-56" />
            </div>
          </div>
          {list.isSuccess && items.length === 0 ? (
            <EmptyState title="No machines match">
              {!phase && !search
                ? 'No live machine: every machine of this project is released (choose Released to see them).'
                : 'No machine of this project matches the phase or search.'}
            </EmptyState>
          ) : (
            <div className="overflow-x-auto rounded-md border border-slate-200">
              <table className="min-w-full divide-y divide-slate-200 text-sm" aria-label="Machines">
                <thead className="bg-slate-50">
                  <tr>
                    {['Name', 'Phase', 'Class', 'Location', 'Device', 'Last operation', 'Requested'].map((h) => (
                      <th key={h} scope="col" className="px-3 py-2 text-left text-xs font-semibold uppercase tracking-wide text-slate-500">
                        {h}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody className={cx('divide-y divide-slate-100 bg-white', list.isPlaceholderData && 'opacity-60')}>
                  {items.map((m) => (
                    <tr key={m.id} data-testid="machine-row">
                      <td className="px-3 py-2">
                        <Link
                          href={`/projects/${project}/machines/${m.name}${m.phase === 'Released' ? `?uid=${m.id}` : ''}`}
                          className="font-medium text-brand-600 hover:underline"
                        >
                          {m.name}
                        </Link>
                        <span className="block text-xs text-slate-500">{m.profile}</span>
                      </td>
                      <td className="max-w-72 px-3 py-2">
                        <PhaseBadge phase={m.phase} />
                        {m.phaseReason && (
                          <span
                            className="mt-0.5 block truncate text-xs text-slate-500"
                            title={exact ? m.phaseReason : (plainReason(m.phaseReason) ?? undefined)}
                          >
                            {exact ? m.phaseReason : plainReason(m.phaseReason)}
                          </span>
                        )}
                      </td>
                      <td className="whitespace-nowrap px-3 py-2 text-slate-700">{m.class}</td>
                      <td className="whitespace-nowrap px-3 py-2 text-slate-700">{m.location}</td>
                      <td className="whitespace-nowrap px-3 py-2">
                        {m.deviceRef ? <code className="font-mono text-xs text-slate-800">{m.deviceRef}</code> : <span className="text-slate-500">—</span>}
                      </td>
                      <td className="px-3 py-2">
                        <OperationSummary op={m.lastOperation as LastOperation | null} />
                      </td>
                      <td className="whitespace-nowrap px-3 py-2 text-xs text-slate-600" title={toDate(m.createdAt)?.toISOString()} suppressHydrationWarning>
                        {ago(m.createdAt, now)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <Pager
            label="Machine pages"
            offset={offset}
            count={items.length}
            pageSize={MACHINES_PAGE_SIZE}
            total={total}
            hasNext={offset + items.length < total}
            onChange={setOffset}
          />
        </section>
      )}
    </div>
  );
}
