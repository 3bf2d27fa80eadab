import { Badge, EmptyState, formatTime } from '@/components/ui/primitives';

export interface CniEvent {
  id: number;
  at: Date | string;
  action: string;
  cluster: string;
  reason: string | null;
}

const labels: Record<string, { text: string; tone: 'red' | 'slate' }> = {
  'cni.check.mismatch': { text: 'CHECK mismatch', tone: 'red' },
  'cni.gc.summary': { text: 'GC', tone: 'slate' },
};

/** CHECK mismatches and GC runs, newest first. */
export function CniEventsList({ events }: { events: CniEvent[] }) {
  if (events.length === 0) {
    return (
      <EmptyState title="No CHECK mismatches or GC runs yet">
        When the container runtime&apos;s CHECK finds a pod address that differs from its lease, or a cluster&apos;s GC releases leases of pods that are gone,
        the event appears here.
      </EmptyState>
    );
  }
  return (
    <ul className="divide-y divide-slate-100" aria-label="CNI events">
      {events.map((e) => {
        const label = labels[e.action] ?? { text: e.action, tone: 'slate' as const };
        return (
          <li key={e.id} className="flex flex-wrap items-baseline gap-x-3 gap-y-1 py-2 text-sm">
            <span className="w-40 shrink-0 text-xs tabular-nums text-slate-500">{formatTime(e.at)}</span>
            <Badge tone={label.tone}>{label.text}</Badge>
            <span className="font-medium text-slate-800">{e.cluster}</span>
            <span className="min-w-0 flex-1 break-words text-slate-600">{e.reason ?? '—'}</span>
          </li>
        );
      })}
    </ul>
  );
}
