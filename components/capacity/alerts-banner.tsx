'use client';
import { withResourceWords } from '@/components/ui/resource-names';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useTRPC } from '@/components/trpc/client';
import { Badge, formatTime } from '@/components/ui/primitives';

const tone = (condition: string) => (condition === 'critical' ? 'red' : 'amber');

/**
 * The project's firing capacity alerts as a banner on every project page, with the notification
 * list (firing, then recently resolved) behind it. Nothing shows while nothing fires.
 */
export function CapacityAlertsBanner({ project }: { project: string }) {
  const trpc = useTRPC();
  const alerts = useQuery({ ...trpc.capacity.alerts.queryOptions({ project, firingOnly: false }), refetchInterval: 60_000 });
  const list = alerts.data ?? [];
  const firing = list.filter((a) => a.firing);
  if (firing.length === 0) return null;
  const critical = firing.some((a) => a.condition === 'critical');
  return (
    <details
      className={`mb-4 rounded-md border px-3 py-2 text-sm ${critical ? 'border-red-200 bg-red-50 text-red-900' : 'border-amber-200 bg-amber-50 text-amber-900'}`}
      data-testid="capacity-alerts-banner"
    >
      <summary className="cursor-pointer select-none font-medium">
        {firing.length} capacity {firing.length === 1 ? 'alert' : 'alerts'} firing: {withResourceWords(firing[0].message)}
      </summary>
      <ul className="mt-2 space-y-1" aria-label="Capacity notifications">
        {list.map((a) => (
          <li key={`${a.series}:${a.condition}`} className="flex flex-wrap items-center gap-2">
            <Badge tone={a.firing ? tone(a.condition) : 'green'}>{a.firing ? a.condition : 'resolved'}</Badge>
            <span>{withResourceWords(a.message)}</span>
            <span className="text-xs opacity-70">since {formatTime(a.since)}</span>
          </li>
        ))}
      </ul>
      <p className="mt-2 text-xs">
        <Link href={`/projects/${project}/webhooks`} className="font-medium underline">
          What triggers an alert, and its thresholds
        </Link>
      </p>
    </details>
  );
}

/** Every project's firing capacity alerts, for operators. */
export function OperatorCapacityAlerts() {
  const trpc = useTRPC();
  const alerts = useQuery({ ...trpc.capacity.operatorAlerts.queryOptions(), refetchInterval: 60_000 });
  const list = alerts.data ?? [];
  if (list.length === 0) return <p className="text-sm text-slate-500">No capacity alert is firing.</p>;
  return (
    <ul className="space-y-1 text-sm" data-testid="operator-capacity-alerts">
      {list.map((a) => (
        <li key={`${a.series}:${a.condition}`} className="flex flex-wrap items-center gap-2">
          <Badge tone={tone(a.condition)}>{a.condition}</Badge>
          <span>{withResourceWords(a.message)}</span>
          <span className="text-xs text-slate-500">since {formatTime(a.since)}</span>
        </li>
      ))}
    </ul>
  );
}
