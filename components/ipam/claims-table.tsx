'use client';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { Pager } from '@/components/ui/pager';
import { Alert, Badge, Button, EmptyState, Select, cx, formatTime } from '@/components/ui/primitives';
import { SearchBox, useSearchText } from '@/components/ui/search-box';
import type { ClaimView } from '@/server/ipam/claims';
import { familyLabel } from './format';
import { useInvalidateIpam } from './hooks';
import { CLAIMS_PAGE_SIZE, claimsListInput, initialClaimsState, type ClaimSort, type ClaimsQueryState } from './queries';

/**
 * The network's claims: search (a name, or an address — the server finds the claims containing
 * it), family filter, sort and pagination all run on the server. A claim selected on the map is
 * searched for and highlighted. Editors release claims here, after a confirmation.
 */
export function ClaimsTable({
  project,
  network,
  canEdit,
  focusClaim,
  onClearFocus,
}: {
  project: string;
  network: string;
  canEdit: boolean;
  focusClaim: string | null;
  onClearFocus: () => void;
}) {
  const trpc = useTRPC();
  const invalidate = useInvalidateIpam();
  const [state, setState] = useState<ClaimsQueryState>(initialClaimsState);
  const searchBox = useSearchText();
  const { settled: search, setText: setSearchText } = searchBox;
  useEffect(() => {
    if (focusClaim) {
      setSearchText(focusClaim);
      setState((s) => ({ ...s, search: focusClaim, offset: 0 }));
    }
  }, [focusClaim, setSearchText]);
  useEffect(() => {
    setState((s) => (s.search === search ? s : { ...s, search, offset: 0 }));
  }, [search]);

  const claims = useQuery({ ...trpc.ipam.claims.list.queryOptions(claimsListInput(project, network, state)), placeholderData: keepPreviousData });
  const [releasing, setReleasing] = useState<ClaimView | null>(null);
  const release = useMutation(
    trpc.ipam.claims.delete.mutationOptions({
      onSuccess: (_, vars) => {
        setReleasing(null);
        if (vars.name === focusClaim) {
          onClearFocus();
          setSearchText('');
          setState((s) => ({ ...s, search: '', offset: 0 }));
        }
        void invalidate();
      },
    }),
  );

  const items = claims.data?.items ?? [];
  const total = claims.data?.total ?? 0;
  const sortBy = (sort: ClaimSort) =>
    setState((s) => ({ ...s, sort, order: s.sort === sort ? (s.order === 'asc' ? 'desc' : 'asc') : sort === 'createdAt' ? 'desc' : 'asc', offset: 0 }));
  const filtered = state.search !== '' || state.family !== '';

  const head: { label: string; sort?: ClaimSort }[] = [
    { label: 'Name', sort: 'name' },
    { label: 'CIDR', sort: 'cidr' },
    { label: 'Pool' },
    { label: 'Family' },
    { label: 'Reclaim' },
    { label: 'Created by' },
    { label: 'Created', sort: 'createdAt' },
  ];

  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-center gap-2">
        <SearchBox
          label="Search claims"
          placeholder="Name or IP address, e.g. 10.20.0.5"
          search={searchBox}
          onChange={() => {
            if (focusClaim) onClearFocus();
          }}
          className="w-72"
        />
        <div className="w-36">
          <Select
            aria-label="Family"
            value={state.family}
            onChange={(e) => setState((s) => ({ ...s, family: e.target.value as ClaimsQueryState['family'], offset: 0 }))}
          >
            <option value="">All families</option>
            <option value="4">IPv4</option>
            <option value="6">IPv6</option>
          </Select>
        </div>
        {focusClaim && (
          <span className="inline-flex items-center gap-1 rounded-full bg-amber-100 px-2.5 py-0.5 text-xs text-amber-900">
            Selected on the map: <strong>{focusClaim}</strong>
            <button
              type="button"
              className="ml-1 rounded px-1 font-medium hover:bg-amber-200"
              onClick={() => {
                onClearFocus();
                setSearchText('');
                setState((s) => ({ ...s, search: '', offset: 0 }));
              }}
            >
              Clear
            </button>
          </span>
        )}
      </div>
      {claims.error && <Alert testId="claims-error">{errorMessage(claims.error)}</Alert>}
      {claims.isSuccess && total === 0 && !filtered ? (
        <EmptyState title="No claims yet">
          IP claims of this network appear here with their allocated CIDR, pool and reclaim policy.{canEdit ? ' Create one with the form on this page.' : ''}
        </EmptyState>
      ) : claims.isSuccess && total === 0 ? (
        <EmptyState title="No claims match">No claim of this network matches the search or family filter.</EmptyState>
      ) : (
        <div className="overflow-x-auto rounded-md border border-slate-200">
          <table className="min-w-full divide-y divide-slate-200 text-sm" aria-label="Claims">
            <thead className="bg-slate-50">
              <tr>
                {head.map((h) => {
                  const sorted = h.sort && state.sort === h.sort;
                  return (
                    <th
                      key={h.label}
                      scope="col"
                      aria-sort={sorted ? (state.order === 'asc' ? 'ascending' : 'descending') : undefined}
                      className="px-3 py-2 text-left text-xs font-semibold uppercase tracking-wide text-slate-500"
                    >
                      {h.sort ? (
                        <button type="button" onClick={() => sortBy(h.sort!)} className="inline-flex items-center gap-1 uppercase hover:text-slate-900">
                          {h.label}
                          <span aria-hidden className={sorted ? 'text-slate-900' : 'text-slate-500'}>
                            {sorted ? (state.order === 'asc' ? '▲' : '▼') : '↕'}
                          </span>
                        </button>
                      ) : (
                        h.label
                      )}
                    </th>
                  );
                })}
                {canEdit && (
                  <th scope="col" className="px-3 py-2">
                    <span className="sr-only">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody className={cx('divide-y divide-slate-100 bg-white', claims.isPlaceholderData && 'opacity-60')}>
              {items.map((c) => {
                const focused = c.name === focusClaim;
                return (
                  <tr key={c.id} className={focused ? 'bg-amber-50' : undefined} data-selected={focused || undefined}>
                    <td className="px-3 py-2 font-medium text-slate-900">
                      {c.name}
                      {focused && <span className="sr-only"> (selected on the map)</span>}
                    </td>
                    <td className="px-3 py-2">
                      <code className="font-mono text-xs text-slate-800">{c.allocatedCidr}</code>
                      {c.requestedCidr && (
                        <span className="ml-1 text-xs text-slate-500" title="Pinned address">
                          pinned
                        </span>
                      )}
                    </td>
                    <td className="px-3 py-2 text-slate-700">{c.pool}</td>
                    <td className="px-3 py-2 text-slate-700">{familyLabel(c.family)}</td>
                    <td className="px-3 py-2">{c.reclaimPolicy === 'Retain' ? <Badge tone="amber">Retain</Badge> : <Badge>Delete</Badge>}</td>
                    <td className="px-3 py-2 text-slate-700">{c.createdBy}</td>
                    <td className="whitespace-nowrap px-3 py-2 font-mono text-xs text-slate-600">{formatTime(c.createdAt)}</td>
                    {canEdit && (
                      <td className="px-3 py-1.5 text-right">
                        <Button variant="secondary" className="px-2 py-1 text-xs" aria-label={`Release ${c.name}`} onClick={() => setReleasing(c)}>
                          Release
                        </Button>
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        label="Claims pages"
        always
        offset={state.offset}
        count={items.length}
        pageSize={CLAIMS_PAGE_SIZE}
        total={total}
        hasNext={claims.data?.nextOffset != null}
        nextOffset={claims.data?.nextOffset}
        onChange={(offset) => setState((s) => ({ ...s, offset }))}
      />
      {releasing && (
        <ConfirmDialog
          title={`Release claim ${releasing.name}?`}
          confirmLabel="Release"
          pending={release.isPending}
          error={release.error ? errorMessage(release.error) : null}
          onCancel={() => {
            setReleasing(null);
            release.reset();
          }}
          onConfirm={() => release.mutate({ project, name: releasing.name })}
        >
          {releasing.reclaimPolicy === 'Retain' ? (
            <p>
              <code className="font-mono">{releasing.allocatedCidr}</code> stays allocated as a <strong>retained</strong> allocation (still counted) until an
              operator releases it or its retention lease ends; the name stays reserved until then.
            </p>
          ) : (
            <p>
              <code className="font-mono">{releasing.allocatedCidr}</code> returns to pool <strong>{releasing.pool}</strong> at once. Anything still using these
              addresses loses them.
            </p>
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}
