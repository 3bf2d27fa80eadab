import { Button } from '@/components/ui/primitives';

/**
 * Previous/next for a server-paginated list, as a navigation landmark named `label` ("Claims
 * pages"), with "Showing 26–50 of 80" (the total when the list knows it). Hidden when everything
 * fits on one page, unless `always` (where the count is the list's summary); never shown for an
 * empty first page.
 */
export function Pager({
  label,
  offset,
  count,
  pageSize,
  total,
  hasNext,
  nextOffset,
  always = false,
  onChange,
}: {
  label: string;
  offset: number;
  /** Rows on this page. */
  count: number;
  pageSize: number;
  total?: number;
  hasNext: boolean;
  /** Where the next page starts when the server says so; otherwise one page on. */
  nextOffset?: number | null;
  always?: boolean;
  onChange: (offset: number) => void;
}) {
  const onePage = offset === 0 && !hasNext;
  if (onePage && (!always || count === 0)) return null;
  return (
    <nav aria-label={label} className="mt-3 flex items-center justify-between text-sm text-slate-600">
      <span>
        Showing {count ? offset + 1 : 0}–{offset + count}
        {total !== undefined && ` of ${total.toLocaleString('en-US')}`}
      </span>
      <div className="flex gap-2">
        <Button variant="secondary" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - pageSize))}>
          Previous
        </Button>
        <Button variant="secondary" disabled={!hasNext} onClick={() => onChange(nextOffset ?? offset + pageSize)}>
          Next
        </Button>
      </div>
    </nav>
  );
}
