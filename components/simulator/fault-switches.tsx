'use client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type ReactNode } from 'react';
import { useTRPC } from '@/app/_trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Badge, Button, Card, Input, Select, cx, formatTime } from '@/components/ui/primitives';
import type { FaultPatch, FaultState, FaultStats, OperationKind } from '@/lib/provider-wire';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { Switch, useNow } from './controls';
import { formatDuration, plural } from './format';

/** How many switches are on. */
export function faultsOn(faults: FaultState): number {
  return [
    faults.loseResponses > 0,
    faults.failOperations !== null,
    faults.latencyMs > 0,
    faults.hang,
    faults.unavailable !== null,
    faults.cleanupFailAssets.length > 0,
    faults.crashOnNextOperation,
  ].filter(Boolean).length;
}

/** One fault: its name, what it does, its state and counter in words, its parameters and its switch. */
function FaultRow({
  title,
  description,
  on,
  state,
  controls,
  toggle,
}: {
  title: string;
  description: string;
  on: boolean;
  state: ReactNode;
  controls?: ReactNode;
  toggle: ReactNode;
}) {
  const titleId = useId();
  return (
    <li role="group" aria-labelledby={titleId} className={cx('flex flex-col gap-2 border-b border-slate-100 px-4 py-3 lg:odd:border-r', on && 'bg-amber-50/60')}>
      <div className="flex items-start justify-between gap-3">
        <div className="min-w-0">
          <h3 id={titleId} className="text-sm font-semibold text-slate-900">
            {title}
          </h3>
          <p className="text-xs text-slate-500">{description}</p>
        </div>
        {toggle}
      </div>
      <div className={cx('text-sm', on ? 'font-medium text-amber-900' : 'text-slate-500')} data-testid="fault-state">
        {state}
      </div>
      {controls && <div className="mt-auto flex flex-wrap items-end gap-2">{controls}</div>}
    </li>
  );
}

function NumberInput({ label, value, onChange, min, max, width = 'w-24', unit }: { label: string; value: string; onChange: (v: string) => void; min: number; max: number; width?: string; unit?: string }) {
  const id = useId();
  return (
    <label htmlFor={id} className="flex flex-col gap-0.5 text-xs text-slate-600">
      {label}
      <span className="flex items-center gap-1">
        <span className={cx('block', width)}>
          <Input id={id} type="number" inputMode="numeric" min={min} max={max} value={value} onChange={(e) => onChange(e.target.value)} className="py-1" />
        </span>
        {unit && <span className="text-xs text-slate-500">{unit}</span>}
      </span>
    </label>
  );
}

/**
 * An input's text that follows the simulator's value whenever that value changes (so an "on" switch shows
 * its current parameters), and is free to edit in between.
 */
function useSyncedInput(source: string | null, fallback: string): [string, (value: string) => void] {
  const [value, setValue] = useState(source ?? fallback);
  const [seen, setSeen] = useState(source);
  if (source !== seen) {
    setSeen(source);
    if (source !== null) setValue(source);
  }
  return [value, setValue];
}

const toInt = (text: string, min: number, fallback: number) => {
  const n = Number(text);
  return Number.isInteger(n) && n >= min ? n : fallback;
};

/**
 * The fault switches with their on/off state and counters. Every change goes through `simulator.setFaults`
 * (audited); counted faults count down live as operations consume them (the page refetches on log activity).
 */
export function FaultSwitches({
  faults,
  stats,
  assetIds,
  onChanged,
}: {
  faults: FaultState | null;
  stats: FaultStats | null;
  assetIds: string[];
  onChanged: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const statusKey = trpc.simulator.status.queryKey();
  const applyFaults = (next: FaultState) =>
    queryClient.setQueryData(statusKey, (old) => (old && old.configured && old.reachable ? { ...old, faults: next } : old));
  const set = useMutation(
    trpc.simulator.setFaults.mutationOptions({
      onSuccess: (next) => {
        applyFaults(next);
        onChanged();
      },
    }),
  );
  const clear = useMutation(
    trpc.simulator.clearFaults.mutationOptions({
      onSuccess: (next) => {
        applyFaults(next);
        onChanged();
      },
    }),
  );
  const [confirmCrash, setConfirmCrash] = useState(false);

  // Parameters of each switch: kept while the switch is off (turning it on uses them), following the simulator while on.
  const fail = faults?.failOperations ?? null;
  const [loseCount, setLoseCount] = useSyncedInput(faults && faults.loseResponses > 0 ? String(faults.loseResponses) : null, '1');
  const [failCount, setFailCount] = useSyncedInput(fail ? String(fail.remaining) : null, '1');
  const [failKind, setFailKind] = useSyncedInput(fail ? (fail.kind ?? '') : null, '');
  const [failAsset, setFailAsset] = useSyncedInput(fail ? (fail.assetId ?? '') : null, '');
  const [latency, setLatency] = useSyncedInput(faults && faults.latencyMs > 0 ? String(faults.latencyMs) : null, '500');
  const [unavailableMode, setUnavailableMode] = useSyncedInput(faults?.unavailable?.mode ?? null, 'reject');
  const [unavailableSeconds, setUnavailableSeconds] = useState('30');
  const [cleanupAsset, setCleanupAsset] = useState('');

  const now = useNow(1000, Boolean(faults?.unavailable?.until));
  const busy = set.isPending || clear.isPending;
  const patch = (p: FaultPatch) => set.mutate(p);
  const datalistId = useId();

  if (!faults) {
    return (
      <Card title="Fault switches">
        <p className="text-sm text-slate-600">The switches appear when the simulator answers. Faults are durable: they are still set after a restart.</p>
      </Card>
    );
  }

  const count = faultsOn(faults);
  const failRule = () => ({ count: toInt(failCount, 1, 1), ...(failKind ? { kind: failKind as OperationKind } : {}), ...(failAsset.trim() ? { assetId: failAsset.trim() } : {}) });
  const unavailableRule = () => {
    const seconds = unavailableSeconds.trim() === '' ? null : toInt(unavailableSeconds, 1, 30);
    return { mode: unavailableMode === 'reset' ? ('reset' as const) : ('reject' as const), ...(seconds === null ? {} : { durationMs: seconds * 1000 }) };
  };
  const until = faults.unavailable?.until ? Date.parse(faults.unavailable.until) : null;

  return (
    <Card
      title={
        <span className="flex items-center gap-2">
          Fault switches {count > 0 ? <Badge tone="amber">{count} on</Badge> : <Badge>all off</Badge>}
        </span>
      }
      actions={
        <Button variant="secondary" disabled={busy || count === 0} onClick={() => clear.mutate()}>
          Clear all faults
        </Button>
      }
      className="[&>div]:p-0"
    >
      {(set.error || clear.error) && (
        <div className="border-b border-slate-100 p-3">
          <Alert testId="fault-error">{errorMessage(set.error ?? clear.error)}</Alert>
        </div>
      )}
      <datalist id={datalistId}>
        {assetIds.map((id) => (
          <option key={id} value={id} />
        ))}
      </datalist>
      <ul className="grid lg:grid-cols-2">
        <FaultRow
          title="Lose next responses"
          description="The operation takes effect and is stored; its response is dropped, so the caller sees a lost connection."
          on={faults.loseResponses > 0}
          state={faults.loseResponses > 0 ? `${faults.loseResponses} remaining` : 'Off'}
          controls={
            <>
              <NumberInput label="Responses to lose" value={loseCount} onChange={setLoseCount} min={1} max={1000} />
              {faults.loseResponses > 0 && (
                <Button variant="secondary" disabled={busy} onClick={() => patch({ loseResponses: toInt(loseCount, 1, 1) })}>
                  Apply
                </Button>
              )}
            </>
          }
          toggle={<Switch label="Lose next responses" on={faults.loseResponses > 0} disabled={busy} onChange={(on) => patch({ loseResponses: on ? toInt(loseCount, 1, 1) : 0 })} />}
        />
        <FaultRow
          title="Fail next operations"
          description="New operations matching the filter are admitted and then fail with InjectedFailure (no effect)."
          on={faults.failOperations !== null}
          state={
            faults.failOperations
              ? `${faults.failOperations.remaining} remaining · ${faults.failOperations.kind ?? 'any kind'} · ${faults.failOperations.assetId ?? 'any asset'}`
              : 'Off'
          }
          controls={
            <>
              <NumberInput label="Operations" value={failCount} onChange={setFailCount} min={1} max={1000} width="w-20" />
              <label className="flex w-28 flex-col gap-0.5 text-xs text-slate-600">
                Kind
                <Select value={failKind} onChange={(e) => setFailKind(e.target.value)} className="py-1">
                  <option value="">any kind</option>
                  <option value="install">install</option>
                  <option value="power">power</option>
                  <option value="cleanup">cleanup</option>
                </Select>
              </label>
              <label className="flex w-36 flex-col gap-0.5 text-xs text-slate-600">
                Asset (optional)
                <Input value={failAsset} onChange={(e) => setFailAsset(e.target.value)} list={datalistId} placeholder="any asset" className="py-1" />
              </label>
              {faults.failOperations && (
                <Button variant="secondary" disabled={busy} onClick={() => patch({ failOperations: failRule() })}>
                  Apply
                </Button>
              )}
            </>
          }
          toggle={<Switch label="Fail next operations" on={faults.failOperations !== null} disabled={busy} onChange={(on) => patch({ failOperations: on ? failRule() : null })} />}
        />
        <FaultRow
          title="Latency"
          description="Added to every runtime request before it is processed."
          on={faults.latencyMs > 0}
          state={faults.latencyMs > 0 ? `+${faults.latencyMs} ms per request · ${plural(stats?.delayedRequests ?? 0, 'request')} delayed` : 'Off'}
          controls={
            <>
              <NumberInput label="Delay" value={latency} onChange={setLatency} min={1} max={600_000} unit="ms" />
              {faults.latencyMs > 0 && (
                <Button variant="secondary" disabled={busy} onClick={() => patch({ latencyMs: toInt(latency, 1, 500) })}>
                  Apply
                </Button>
              )}
            </>
          }
          toggle={<Switch label="Latency" on={faults.latencyMs > 0} disabled={busy} onChange={(on) => patch({ latencyMs: on ? toInt(latency, 1, 500) : 0 })} />}
        />
        <FaultRow
          title="Hang"
          description="Runtime requests are held without an answer; switching it off resets them unprocessed."
          on={faults.hang}
          state={faults.hang ? `On · ${plural(stats?.heldRequests ?? 0, 'request')} held since start` : 'Off'}
          toggle={<Switch label="Hang" on={faults.hang} disabled={busy} onChange={(on) => patch({ hang: on })} />}
        />
        <FaultRow
          title="Unavailable"
          description="Runtime requests are refused: answered 503, or the connection is reset. The admin API keeps working."
          on={faults.unavailable !== null}
          state={
            faults.unavailable
              ? `${faults.unavailable.mode === 'reject' ? '503 answers' : 'connections reset'} · ${
                  until === null ? 'until cleared' : until > now ? `until ${formatTime(faults.unavailable.until)} (${formatDuration(until - now)} left)` : 'expiring…'
                } · ${plural(stats?.refusedRequests ?? 0, 'request')} refused`
              : 'Off'
          }
          controls={
            <>
              <label className="flex w-36 flex-col gap-0.5 text-xs text-slate-600">
                Mode
                <Select value={unavailableMode} onChange={(e) => setUnavailableMode(e.target.value)} className="py-1">
                  <option value="reject">answer 503</option>
                  <option value="reset">reset connection</option>
                </Select>
              </label>
              <NumberInput label="For (empty: until cleared)" value={unavailableSeconds} onChange={setUnavailableSeconds} min={1} max={86_400} unit="s" />
              {faults.unavailable && (
                <Button variant="secondary" disabled={busy} onClick={() => patch({ unavailable: unavailableRule() })}>
                  Apply
                </Button>
              )}
            </>
          }
          toggle={<Switch label="Unavailable" on={faults.unavailable !== null} disabled={busy} onChange={(on) => patch({ unavailable: on ? unavailableRule() : null })} />}
        />
        <FaultRow
          title="Cleanup fails for assets"
          description="Cleanups of these assets fail with CleanupFailed: the asset is not wiped and its epoch stays open."
          on={faults.cleanupFailAssets.length > 0}
          state={
            faults.cleanupFailAssets.length > 0 ? (
              <span className="flex flex-wrap items-center gap-1">
                {faults.cleanupFailAssets.map((id) => (
                  <span key={id} className="inline-flex items-center gap-1 rounded bg-amber-100 px-1.5 py-0.5 font-mono text-xs text-amber-900">
                    {id}
                    <button
                      type="button"
                      aria-label={`Stop failing cleanups of ${id}`}
                      disabled={busy}
                      className="text-amber-700 hover:text-amber-950"
                      onClick={() => patch({ cleanupFailAssets: faults.cleanupFailAssets.filter((a) => a !== id) })}
                    >
                      ×
                    </button>
                  </span>
                ))}
              </span>
            ) : (
              'Off'
            )
          }
          controls={
            <>
              <label className="flex w-40 flex-col gap-0.5 text-xs text-slate-600">
                Asset
                <Input value={cleanupAsset} onChange={(e) => setCleanupAsset(e.target.value)} list={datalistId} placeholder="dev-fra1-0001" className="py-1" />
              </label>
              <Button
                variant="secondary"
                disabled={busy || !cleanupAsset.trim() || faults.cleanupFailAssets.includes(cleanupAsset.trim())}
                onClick={() => {
                  patch({ cleanupFailAssets: [...faults.cleanupFailAssets, cleanupAsset.trim()] });
                  setCleanupAsset('');
                }}
              >
                Add
              </Button>
            </>
          }
          toggle={
            <Switch
              label="Cleanup fails for assets"
              on={faults.cleanupFailAssets.length > 0}
              disabled={busy || (faults.cleanupFailAssets.length === 0 && !cleanupAsset.trim())}
              onChange={(on) => {
                patch({ cleanupFailAssets: on ? [cleanupAsset.trim()] : [] });
                if (on) setCleanupAsset('');
              }}
            />
          }
        />
        <FaultRow
          title="Crash"
          description="Exit the simulator process (code 70); the supervisor restarts it with backoff, or use Restart."
          on={faults.crashOnNextOperation}
          state={faults.crashOnNextOperation ? 'Armed: crashes right after answering the next operation' : 'Off'}
          controls={
            <Button variant="danger" disabled={busy} onClick={() => setConfirmCrash(true)}>
              Crash now
            </Button>
          }
          toggle={
            <Switch
              label="Crash on next operation"
              caption="on next operation"
              on={faults.crashOnNextOperation}
              disabled={busy}
              onChange={(on) => patch({ crash: on ? 'nextOperation' : null })}
            />
          }
        />
      </ul>

      {confirmCrash && (
        <ConfirmDialog
          title="Crash the simulator now?"
          confirmLabel="Crash now"
          pending={set.isPending}
          error={set.error ? errorMessage(set.error) : null}
          onCancel={() => setConfirmCrash(false)}
          onConfirm={() => set.mutate({ crash: 'now' }, { onSuccess: () => setConfirmCrash(false) })}
        >
          The process exits right after answering. Acknowledged operations are durable; in-flight requests are cut off. The supervisor
          restarts it after a short backoff.
        </ConfirmDialog>
      )}
    </Card>
  );
}
