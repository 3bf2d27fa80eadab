'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { Alert, Button, Table, Td, formatTime } from '@/components/ui/primitives';
import type { RetainedAllocationView } from '@/server/ipam/claims';
import { useInvalidateIpam } from './hooks';
import { retainedListInput } from './queries';
import { Count } from './utilization';

type RetainedRow = Pick<RetainedAllocationView, 'cidr' | 'name' | 'project' | 'network' | 'pool'>;

/** The confirmation before a retained block is released, the same for the project's editors and for operators. */
export function ReleaseRetainedDialog({
  row,
  pending,
  error,
  onCancel,
  onConfirm,
}: {
  row: RetainedRow;
  pending: boolean;
  error: string | null;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  return (
    <ConfirmDialog title={`Release ${row.cidr}?`} confirmLabel="Release" pending={pending} error={error} onCancel={onCancel} onConfirm={onConfirm}>
      <p>
        The block retained for <strong>{row.name}</strong> in {row.project}/{row.network} returns to pool {row.pool}, and the name can be claimed again.
        Whatever still uses these addresses will conflict with the next claim that gets them.
      </p>
    </ConfirmDialog>
  );
}

/** A Release button for one retained block (the label names it, for screen readers and tests). */
export function ReleaseButton({ row, onClick }: { row: RetainedRow; onClick: () => void }) {
  return (
    <Button variant="secondary" className="px-2 py-1 text-xs" aria-label={`Release ${row.name} (${row.cidr})`} onClick={onClick}>
      Release
    </Button>
  );
}

/**
 * The network's retained allocations (blocks of deleted Retain claims, still counted and holding
 * their names). Editors release them early here, after confirming; shown only when there are some.
 */
export function RetainedSection({ project, network, canEdit }: { project: string; network: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateIpam();
  const retained = useQuery(trpc.ipam.retained.list.queryOptions(retainedListInput(project, network)));
  const [releasing, setReleasing] = useState<RetainedAllocationView | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const release = useMutation(
    trpc.ipam.retained.release.mutationOptions({
      onSuccess: (r) => {
        setNotice(`Released ${r.cidr} (${r.name}).`);
        setReleasing(null);
        void invalidate();
      },
    }),
  );
  const rows = retained.data ?? [];
  if (rows.length === 0 && !notice && !retained.error) return null;
  return (
    <section aria-labelledby="retained-heading" className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm">
      <h2 id="retained-heading" className="mb-1 text-sm font-semibold text-slate-800">
        Retained allocations
      </h2>
      <p className="mb-3 text-sm text-slate-600">
        Blocks of deleted claims with reclaim policy Retain. They stay counted, their names stay taken and the network cannot be deleted until they are released
        or their retention lease ends.
      </p>
      {notice && (
        <div className="mb-3">
          <Alert tone="green" testId="retained-notice">
            {notice}
          </Alert>
        </div>
      )}
      {retained.error && <Alert testId="retained-error">{errorMessage(retained.error)}</Alert>}
      {rows.length > 0 && (
        <Table head={['Name', 'CIDR', 'Pool', 'Addresses', 'Retained until', ...(canEdit ? [''] : [])]}>
          {rows.map((r) => (
            <tr key={r.id}>
              <Td className="font-medium text-slate-900">{r.name}</Td>
              <Td>
                <code className="font-mono text-xs">{r.cidr}</code>
              </Td>
              <Td>{r.pool}</Td>
              <Td className="text-right">
                <Count value={r.size} />
              </Td>
              <Td className="whitespace-nowrap font-mono text-xs">{formatTime(r.retainedUntil)}</Td>
              {canEdit && (
                <Td className="text-right">
                  <ReleaseButton
                    row={r}
                    onClick={() => {
                      setNotice(null);
                      release.reset();
                      setReleasing(r);
                    }}
                  />
                </Td>
              )}
            </tr>
          ))}
        </Table>
      )}
      {releasing && (
        <ReleaseRetainedDialog
          row={releasing}
          pending={release.isPending}
          error={release.error ? errorMessage(release.error) : null}
          onCancel={() => setReleasing(null)}
          onConfirm={() => release.mutate({ project, name: releasing.name })}
        />
      )}
    </section>
  );
}
