'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { Pager } from '@/components/ui/pager';
import { Card, EmptyState } from '@/components/ui/primitives';
import { SearchBox, useSearchText } from '@/components/ui/search-box';
import { QuotaBar } from './quota-bar';
import { ADMIN_PAGE_SIZE, adminBucketsInput } from './queries';

/** Every project's bucket per resource type, fullest first; by default only those at 80 % or more. */
export function Buckets() {
  const trpc = useTRPC();
  const [flagged, setFlagged] = useState(true);
  const search = useSearchText();
  const [offset, setOffset] = useState(0);
  const list = useQuery({
    ...trpc.quota.admin.buckets.list.queryOptions(adminBucketsInput(flagged, search.settled, offset)),
    placeholderData: keepPreviousData,
  });
  const items = list.data?.items ?? [];
  return (
    <Card
      title="Buckets"
      actions={
        <div className="flex items-center gap-3 text-sm">
          <label className="flex items-center gap-1.5 text-slate-700">
            <input
              type="checkbox"
              checked={flagged}
              onChange={(e) => {
                setFlagged(e.target.checked);
                setOffset(0);
              }}
            />
            only ≥ 80 % or over
          </label>
          <SearchBox label="Search buckets" placeholder="project or type" search={search} onChange={() => setOffset(0)} className="w-44" />
        </div>
      }
    >
      {list.isSuccess && items.length === 0 ? (
        <EmptyState title={flagged ? 'No bucket is near its limit' : 'No buckets'}>Every project&apos;s bucket per resource type, fullest first.</EmptyState>
      ) : (
        <ul className="space-y-3" aria-label="All buckets">
          {items.map((b) => (
            <li key={`${b.projectId}/${b.resourceType}`} className="grid gap-2 sm:grid-cols-[10rem_minmax(0,1fr)] sm:items-center">
              <span className="truncate text-sm font-medium text-slate-800">{b.project}</span>
              <QuotaBar resourceType={b.resourceType} limit={b.limit} allocated={b.allocated} available={b.available} unit={b.displayUnit} compact />
            </li>
          ))}
        </ul>
      )}
      {list.data && (
        <Pager
          label="Buckets pages"
          offset={offset}
          count={items.length}
          pageSize={ADMIN_PAGE_SIZE}
          total={list.data.total}
          hasNext={offset + items.length < list.data.total}
          onChange={setOffset}
        />
      )}
    </Card>
  );
}
