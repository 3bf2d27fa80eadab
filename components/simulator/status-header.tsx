'use client';
import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '@/server/trpc/root';
import { useNow } from '@/components/ui/hooks';
import { Alert, Badge, Button, Card, Spinner, cx, formatTime } from '@/components/ui/primitives';
import { Stat } from './controls';
import { formatDuration } from './format';

export type SimulatorStatus = inferRouterOutputs<AppRouter>['simulator']['status'];

/** Where a restart request stands: waiting for the simulator to answer, back, or still down after the deadline. */
export type RestartProgress =
  { requestedAt: number; phase: 'waiting' } | { requestedAt: number; phase: 'back'; backAt: number } | { requestedAt: number; phase: 'timeout' };

/**
 * Reachable or not (with the reason), the store and fault counters, and the restart button, shown when the
 * simulator does not answer (stopped, crashed, or refusing to start) or while a restart is in progress.
 */
export function StatusHeader({
  status,
  loadError,
  restart,
  onRestart,
}: {
  status: SimulatorStatus | undefined;
  loadError: string | null;
  restart: RestartProgress | null;
  onRestart: () => void;
}) {
  const now = useNow(1000, restart?.phase === 'waiting');
  const down = status?.configured === true && !status.reachable;
  const showRestart = down || restart?.phase === 'waiting' || restart?.phase === 'timeout';

  let badge = <Badge>checking…</Badge>;
  let headline = 'Checking the simulator…';
  if (status && !status.configured) {
    badge = <Badge tone="amber">not configured</Badge>;
    headline = 'No admin access to the simulator';
  } else if (status?.configured && status.reachable) {
    badge = <Badge tone="green">reachable</Badge>;
    headline = 'The simulator is up';
  } else if (down) {
    badge = <Badge tone="red">unreachable</Badge>;
    headline = 'The simulator does not answer';
  }

  return (
    <Card>
      <div className="flex flex-wrap items-start justify-between gap-4" data-testid="simulator-status">
        <div className="min-w-0 space-y-1">
          <div className="flex flex-wrap items-center gap-2">
            <span
              aria-hidden
              className={cx(
                'inline-block h-2.5 w-2.5 rounded-full',
                status?.configured && status.reachable ? 'bg-emerald-500' : down ? 'bg-red-500' : 'bg-slate-300',
              )}
            />
            <h2 className="text-base font-semibold text-slate-900">{headline}</h2>
            {badge}
          </div>
          <p className="text-sm text-slate-600">
            {status?.url ? (
              <>
                Admin API at <code className="font-mono text-xs">{status.url}</code>
              </>
            ) : (
              'No simulator URL configured'
            )}
            {status && <span className="text-slate-500"> · checked {formatTime(status.checkedAt)}</span>}
          </p>
          {down && status?.configured && !status.reachable && (
            <p className="text-sm text-red-700" data-testid="simulator-unreachable-reason">
              {status.reason}
            </p>
          )}
          {loadError && <p className="text-sm text-red-700">{loadError}</p>}
        </div>
        {showRestart && (
          <Button variant={down ? 'primary' : 'secondary'} onClick={onRestart} disabled={restart?.phase === 'waiting'}>
            {restart?.phase === 'waiting' ? (
              <>
                <Spinner /> Restarting…
              </>
            ) : (
              'Restart simulator'
            )}
          </Button>
        )}
      </div>

      {restart && (
        <div className="mt-3" data-testid="restart-progress">
          {restart.phase === 'waiting' && (
            <Alert tone="amber" testId="restart-progress-alert">
              Restart requested {formatDuration(now - restart.requestedAt)} ago — waiting for the simulator to answer…
            </Alert>
          )}
          {restart.phase === 'back' && (
            <Alert tone="green" testId="restart-progress-alert">
              The simulator is back (answered {formatDuration(restart.backAt - restart.requestedAt)} after the request).
            </Alert>
          )}
          {restart.phase === 'timeout' && (
            <Alert testId="restart-progress-alert">
              The simulator still does not answer a minute after the restart request. If it refused to start (for example a corrupt state file), the server log
              names the cause; fix it and restart again.
            </Alert>
          )}
        </div>
      )}

      {status?.configured && status.reachable && (
        <dl className="mt-4 grid grid-cols-2 gap-x-6 gap-y-3 border-t border-slate-100 pt-4 sm:grid-cols-4 lg:grid-cols-8">
          <Stat label="Uptime" value={formatDuration(status.store.uptimeMs)} />
          <Stat label="Assets" value={status.store.assets} />
          <Stat label="Operations" value={status.store.operations} hint="Retained operation records" />
          <Stat label="Running" value={status.store.running} />
          <Stat
            label="Durable writes"
            value={`${status.store.writes}`}
            hint={`${status.store.changes} changes in ${status.store.writes} fsync'd writes of ${status.store.stateFile}`}
          />
          <Stat label="Delayed requests" value={status.faultStats.delayedRequests} hint="By the latency fault, since start" />
          <Stat label="Held requests" value={status.faultStats.heldRequests} hint="By the hang fault, since start" />
          <Stat label="Refused requests" value={status.faultStats.refusedRequests} hint="By the unavailable fault, since start" />
        </dl>
      )}
    </Card>
  );
}
