'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTRPC } from '@/components/trpc/client';
import { Badge, Button, Card, Table, Td, formatTime } from '@/components/ui/primitives';
import { ErrorLine } from './admin-parts';

/** The last audit of the books (buckets recomputed from grants and live claims), and a button to run one now. */
export function Audit() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const last = useQuery(trpc.quota.admin.audit.last.queryOptions());
  const run = useMutation(
    trpc.quota.admin.audit.run.mutationOptions({ onSuccess: () => void queryClient.invalidateQueries({ queryKey: trpc.quota.admin.audit.last.queryKey() }) }),
  );
  return (
    <Card
      title="Audit of the books"
      actions={
        <Button variant="secondary" disabled={run.isPending} onClick={() => run.mutate()}>
          {run.isPending ? 'Auditing…' : 'Run audit now'}
        </Button>
      }
    >
      <p className="text-sm text-slate-600">
        Every 5 minutes the worker recomputes each bucket from grants and live claims. Drift is recorded as a <code>quota.drift</code> event and the{' '}
        <code>meridian_quota_drift_total</code> metric; nothing is repaired automatically.
      </p>
      {last.data ? (
        <p className="mt-2 text-sm" data-testid="audit-last">
          Last run {formatTime(last.data.at)}: {last.data.bucketsChecked} buckets checked,{' '}
          {last.data.drifted ? <Badge tone="red">{last.data.drifted} drifted</Badge> : <Badge tone="green">no drift</Badge>}, {last.data.overLimit} over their
          limit.
        </p>
      ) : (
        <p className="mt-2 text-sm text-slate-500">No audit has run yet.</p>
      )}
      <ErrorLine error={run.error} />
      {run.data && run.data.drifted.length > 0 && (
        <Table head={['Project', 'Resource type', 'Recorded (limit / allocated)', 'From the books']}>
          {run.data.drifted.map((d) => (
            <tr key={`${d.projectId}/${d.resourceType}`}>
              <Td>{d.project}</Td>
              <Td className="text-xs">{d.resourceType}</Td>
              <Td className="tabular-nums">{d.recorded ? `${d.recorded.limit} / ${d.recorded.allocated}` : 'missing'}</Td>
              <Td className="tabular-nums">
                {d.expected.limit} / {d.expected.allocated}
              </Td>
            </tr>
          ))}
        </Table>
      )}
    </Card>
  );
}
