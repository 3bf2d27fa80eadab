'use client';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { useNow } from '@/components/ui/hooks';
import { Pager } from '@/components/ui/pager';
import { Alert, Button, Card, EmptyState } from '@/components/ui/primitives';
import { ReasonDialog } from '@/components/ui/reason-dialog';
import { ago, toDate, type AllocationRow } from './format';
import { useInvalidateFleet } from './hooks';
import { PhaseBadge } from './parts';
import { ALLOCATIONS_PAGE_SIZE } from './queries';

/** Machines bound to a device, with their binding epoch: release one as the tenant would, or force a release. */
export function AllocationsSection({
  rows,
  error,
  offset,
  onOffset,
}: {
  rows: AllocationRow[];
  error: unknown;
  offset: number;
  onOffset: (offset: number) => void;
}) {
  const trpc = useTRPC();
  const invalidate = useInvalidateFleet();
  const now = useNow(5_000);
  const [acting, setActing] = useState<{ row: AllocationRow; force: boolean } | null>(null);
  const onSuccess = () => {
    setActing(null);
    void invalidate();
  };
  const release = useMutation(trpc.fleet.allocations.release.mutationOptions({ onSuccess }));
  const forceRelease = useMutation(trpc.fleet.allocations.forceRelease.mutationOptions({ onSuccess }));
  const mutation = acting?.force ? forceRelease : release;
  const items = rows.slice(0, ALLOCATIONS_PAGE_SIZE);
  return (
    <Card title="Live allocations">
      {error != null && <Alert testId="allocations-error">{errorMessage(error)}</Alert>}
      {items.length === 0 && offset === 0 ? (
        <EmptyState title="No live allocations">
          Machines bound to a device appear here with their binding epoch; release them, or force a release when the provider cannot clean up.
        </EmptyState>
      ) : (
        <div className="overflow-x-auto rounded-md border border-slate-200">
          <table className="min-w-full divide-y divide-slate-200 text-sm" aria-label="Live allocations">
            <thead className="bg-slate-50">
              <tr>
                {['Machine', 'Device', 'Epoch', 'Binding', 'Phase', 'Since', ''].map((h, i) => (
                  <th key={i} scope="col" className="px-3 py-2 text-left text-xs font-semibold uppercase tracking-wide text-slate-500">
                    {h || <span className="sr-only">Actions</span>}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100 bg-white">
              {items.map((a) => {
                const releasing = a.status === 'Releasing' || a.phase === 'Releasing';
                return (
                  <tr key={a.id} data-testid="allocation-row">
                    <td className="px-3 py-2">
                      <span className="font-medium text-slate-900">{a.machine}</span>
                      <span className="block text-xs text-slate-500">{a.project}</span>
                    </td>
                    <td className="px-3 py-2">
                      <code className="font-mono text-xs">{a.deviceRef}</code>
                    </td>
                    <td className="px-3 py-2 font-mono text-xs tabular-nums">{String(a.epoch)}</td>
                    <td className="px-3 py-2 text-xs text-slate-700">
                      {a.status}
                      <span className="block font-mono text-slate-500" title={a.id}>
                        {a.id.slice(0, 8)}…
                      </span>
                    </td>
                    <td className="px-3 py-2">
                      <PhaseBadge phase={a.phase} />
                    </td>
                    <td className="whitespace-nowrap px-3 py-2 text-xs text-slate-600" title={toDate(a.createdAt)?.toISOString()} suppressHydrationWarning>
                      {ago(a.createdAt, now)}
                    </td>
                    <td className="whitespace-nowrap px-3 py-1.5 text-right">
                      <div className="flex justify-end gap-1.5">
                        <Button
                          variant="secondary"
                          className="px-2 py-1 text-xs"
                          disabled={releasing}
                          aria-label={`Release ${a.machine}`}
                          onClick={() => setActing({ row: a, force: false })}
                        >
                          Release
                        </Button>
                        <Button
                          variant="secondary"
                          className="px-2 py-1 text-xs text-red-700!"
                          aria-label={`Force release ${a.machine}`}
                          onClick={() => setActing({ row: a, force: true })}
                        >
                          Force release
                        </Button>
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        label="Allocation pages"
        offset={offset}
        count={items.length}
        pageSize={ALLOCATIONS_PAGE_SIZE}
        hasNext={rows.length > ALLOCATIONS_PAGE_SIZE}
        onChange={onOffset}
      />
      {acting && (
        <ReasonDialog
          title={`${acting.force ? 'Force release' : 'Release'} ${acting.row.project}/${acting.row.machine}?`}
          confirmLabel={acting.force ? 'Force release' : 'Release'}
          required={acting.force}
          placeholder={acting.force ? 'e.g. the provider lost the device; cleanup cannot run' : 'e.g. tenant asked by ticket'}
          pending={mutation.isPending}
          error={mutation.error ? errorMessage(mutation.error) : null}
          onCancel={() => {
            setActing(null);
            release.reset();
            forceRelease.reset();
          }}
          onConfirm={(reason) => (acting.force ? forceRelease : release).mutate({ machineId: acting.row.machineId, reason })}
        >
          {acting.force ? (
            <p>
              The binding to <code className="font-mono">{acting.row.deviceRef}</code> ends now, without waiting for the provider. The device cannot be verified
              clean, so it is <strong>quarantined</strong>; the machine ends Failed (or Released if it never bound).
            </p>
          ) : (
            <p>
              The machine is released as if the tenant had asked: <code className="font-mono">{acting.row.deviceRef}</code> is cleaned by the provider and
              verified before it returns to the pool.
            </p>
          )}
        </ReasonDialog>
      )}
    </Card>
  );
}
