'use client';
import { useNow } from '@/components/ui/hooks';
import { Button, Input, Select, formatTime } from '@/components/ui/primitives';
import type { FaultPatch, FaultState, FaultStats } from '@/lib/provider-wire';
import { Switch } from './controls';
import { failRule, toInt, unavailableRule, type FaultParams } from './fault-params';
import { FaultRow, NumberInput } from './fault-row';
import { formatDuration, plural } from './format';

/** What every fault row gets: the simulator's faults and counters, the typed parameters, and how to change them. */
interface FaultRowProps {
  faults: FaultState;
  stats: FaultStats | null;
  params: FaultParams;
  busy: boolean;
  patch: (p: FaultPatch) => void;
  /** The id of the datalist of known asset ids, for the asset inputs. */
  assetList: string;
  /** The simulator's asset ids (empty while unknown). */
  assetIds: string[];
}

export function LoseResponsesFault({ faults, params, busy, patch }: FaultRowProps) {
  return (
    <FaultRow
      title="Lose next responses"
      description="The operation takes effect and is stored; its response is dropped, so the caller sees a lost connection."
      on={faults.loseResponses > 0}
      state={faults.loseResponses > 0 ? `${faults.loseResponses} remaining` : 'Off'}
      controls={
        <>
          <NumberInput label="Responses to lose" value={params.loseCount} onChange={params.setLoseCount} min={1} max={1000} />
          {faults.loseResponses > 0 && (
            <Button variant="secondary" disabled={busy} onClick={() => patch({ loseResponses: toInt(params.loseCount, 1, 1) })}>
              Apply
            </Button>
          )}
        </>
      }
      toggle={
        <Switch
          label="Lose next responses"
          on={faults.loseResponses > 0}
          disabled={busy}
          onChange={(on) => patch({ loseResponses: on ? toInt(params.loseCount, 1, 1) : 0 })}
        />
      }
    />
  );
}

export function FailOperationsFault({ faults, params, busy, patch, assetList }: FaultRowProps) {
  return (
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
          <NumberInput label="Operations" value={params.failCount} onChange={params.setFailCount} min={1} max={1000} width="w-20" />
          <label className="flex w-28 flex-col gap-0.5 text-xs text-slate-600">
            Kind
            <Select value={params.failKind} onChange={(e) => params.setFailKind(e.target.value)} className="py-1">
              <option value="">any kind</option>
              <option value="install">install</option>
              <option value="power">power</option>
              <option value="cleanup">cleanup</option>
            </Select>
          </label>
          <label className="flex w-36 flex-col gap-0.5 text-xs text-slate-600">
            Asset (optional)
            <Input value={params.failAsset} onChange={(e) => params.setFailAsset(e.target.value)} list={assetList} placeholder="any asset" className="py-1" />
          </label>
          {faults.failOperations && (
            <Button variant="secondary" disabled={busy} onClick={() => patch({ failOperations: failRule(params) })}>
              Apply
            </Button>
          )}
        </>
      }
      toggle={
        <Switch
          label="Fail next operations"
          on={faults.failOperations !== null}
          disabled={busy}
          onChange={(on) => patch({ failOperations: on ? failRule(params) : null })}
        />
      }
    />
  );
}

export function LatencyFault({ faults, stats, params, busy, patch }: FaultRowProps) {
  return (
    <FaultRow
      title="Latency"
      description="Added to every runtime request before it is processed."
      on={faults.latencyMs > 0}
      state={faults.latencyMs > 0 ? `+${faults.latencyMs} ms per request · ${plural(stats?.delayedRequests ?? 0, 'request')} delayed` : 'Off'}
      controls={
        <>
          <NumberInput label="Delay" value={params.latency} onChange={params.setLatency} min={1} max={600_000} unit="ms" />
          {faults.latencyMs > 0 && (
            <Button variant="secondary" disabled={busy} onClick={() => patch({ latencyMs: toInt(params.latency, 1, 500) })}>
              Apply
            </Button>
          )}
        </>
      }
      toggle={
        <Switch label="Latency" on={faults.latencyMs > 0} disabled={busy} onChange={(on) => patch({ latencyMs: on ? toInt(params.latency, 1, 500) : 0 })} />
      }
    />
  );
}

export function HangFault({ faults, stats, busy, patch }: FaultRowProps) {
  return (
    <FaultRow
      title="Hang"
      description="Runtime requests are held without an answer; switching it off resets them unprocessed."
      on={faults.hang}
      state={faults.hang ? `On · ${plural(stats?.heldRequests ?? 0, 'request')} held since start` : 'Off'}
      toggle={<Switch label="Hang" on={faults.hang} disabled={busy} onChange={(on) => patch({ hang: on })} />}
    />
  );
}

/** Unavailable, with the time left counting down while it has an end. */
export function UnavailableFault({ faults, stats, params, busy, patch }: FaultRowProps) {
  const now = useNow(1000, Boolean(faults.unavailable?.until));
  const until = faults.unavailable?.until ? Date.parse(faults.unavailable.until) : null;
  return (
    <FaultRow
      title="Unavailable"
      description="Runtime requests are refused: answered 503, or the connection is reset. The admin API keeps working."
      on={faults.unavailable !== null}
      state={
        faults.unavailable
          ? `${faults.unavailable.mode === 'reject' ? '503 answers' : 'connections reset'} · ${
              until === null
                ? 'until cleared'
                : until > now
                  ? `until ${formatTime(faults.unavailable.until)} (${formatDuration(until - now)} left)`
                  : 'expiring…'
            } · ${plural(stats?.refusedRequests ?? 0, 'request')} refused`
          : 'Off'
      }
      controls={
        <>
          <label className="flex w-36 flex-col gap-0.5 text-xs text-slate-600">
            Mode
            <Select value={params.unavailableMode} onChange={(e) => params.setUnavailableMode(e.target.value)} className="py-1">
              <option value="reject">answer 503</option>
              <option value="reset">reset connection</option>
            </Select>
          </label>
          <NumberInput
            label="For (empty: until cleared)"
            value={params.unavailableSeconds}
            onChange={params.setUnavailableSeconds}
            min={1}
            max={86_400}
            unit="s"
          />
          {faults.unavailable && (
            <Button variant="secondary" disabled={busy} onClick={() => patch({ unavailable: unavailableRule(params) })}>
              Apply
            </Button>
          )}
        </>
      }
      toggle={
        <Switch
          label="Unavailable"
          on={faults.unavailable !== null}
          disabled={busy}
          onChange={(on) => patch({ unavailable: on ? unavailableRule(params) : null })}
        />
      }
    />
  );
}

export function CleanupFailFault({ faults, params, busy, patch, assetList, assetIds }: FaultRowProps) {
  const { cleanupAsset, setCleanupAsset } = params;
  const typed = cleanupAsset.trim();
  // A rule for an asset the simulator does not have fires only once an operation creates it: say so.
  const unknownAsset = typed !== '' && assetIds.length > 0 && !assetIds.includes(typed);
  return (
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
            <Input
              value={cleanupAsset}
              onChange={(e) => setCleanupAsset(e.target.value)}
              list={assetList}
              placeholder={assetIds[0] ?? 'asset id'}
              aria-invalid={unknownAsset || undefined}
              aria-describedby={unknownAsset ? `${assetList}-unknown` : undefined}
              className="py-1"
            />
          </label>
          <Button
            variant="secondary"
            disabled={busy || !typed || faults.cleanupFailAssets.includes(typed)}
            onClick={() => {
              patch({ cleanupFailAssets: [...faults.cleanupFailAssets, cleanupAsset.trim()] });
              setCleanupAsset('');
            }}
          >
            Add
          </Button>
          {unknownAsset && (
            <p id={`${assetList}-unknown`} className="w-full text-xs text-red-700" data-testid="cleanup-asset-unknown">
              The simulator has no asset {typed}: the rule fails no cleanup until an operation creates that asset. Check the name against the assets below.
            </p>
          )}
        </>
      }
      toggle={
        <Switch
          label="Cleanup fails for assets"
          on={faults.cleanupFailAssets.length > 0}
          disabled={busy || (faults.cleanupFailAssets.length === 0 && !typed)}
          onChange={(on) => {
            patch({ cleanupFailAssets: on ? [cleanupAsset.trim()] : [] });
            if (on) setCleanupAsset('');
          }}
        />
      }
    />
  );
}

/** Crash: armed for the next operation by its switch, or now (after `onCrashNow` confirms). */
export function CrashFault({ faults, busy, patch, onCrashNow }: FaultRowProps & { onCrashNow: () => void }) {
  return (
    <FaultRow
      title="Crash"
      description="Exit the simulator process (code 70); the supervisor restarts it with backoff, or use Restart."
      on={faults.crashOnNextOperation}
      state={faults.crashOnNextOperation ? 'Armed: crashes right after answering the next operation' : 'Off'}
      controls={
        <Button variant="danger" disabled={busy} onClick={onCrashNow}>
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
  );
}
