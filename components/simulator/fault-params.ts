'use client';
import { useState } from 'react';
import type { FaultState, OperationKind } from '@/lib/provider-wire';

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

/** `text` as an integer of at least `min`, else `fallback`. */
export const toInt = (text: string, min: number, fallback: number) => {
  const n = Number(text);
  return Number.isInteger(n) && n >= min ? n : fallback;
};

/**
 * The parameters of every switch, as typed: kept while a switch is off (turning it on uses them),
 * following the simulator while it is on. Held by FaultSwitches, so they survive the simulator
 * being unreachable for a while.
 */
export function useFaultParams(faults: FaultState | null) {
  const fail = faults?.failOperations ?? null;
  const [loseCount, setLoseCount] = useSyncedInput(faults && faults.loseResponses > 0 ? String(faults.loseResponses) : null, '1');
  const [failCount, setFailCount] = useSyncedInput(fail ? String(fail.remaining) : null, '1');
  const [failKind, setFailKind] = useSyncedInput(fail ? (fail.kind ?? '') : null, '');
  const [failAsset, setFailAsset] = useSyncedInput(fail ? (fail.assetId ?? '') : null, '');
  const [latency, setLatency] = useSyncedInput(faults && faults.latencyMs > 0 ? String(faults.latencyMs) : null, '500');
  const [unavailableMode, setUnavailableMode] = useSyncedInput(faults?.unavailable?.mode ?? null, 'reject');
  const [unavailableSeconds, setUnavailableSeconds] = useState('30');
  const [cleanupAsset, setCleanupAsset] = useState('');
  return {
    loseCount,
    setLoseCount,
    failCount,
    setFailCount,
    failKind,
    setFailKind,
    failAsset,
    setFailAsset,
    latency,
    setLatency,
    unavailableMode,
    setUnavailableMode,
    unavailableSeconds,
    setUnavailableSeconds,
    cleanupAsset,
    setCleanupAsset,
  };
}

export type FaultParams = ReturnType<typeof useFaultParams>;

/** The failOperations rule the parameters describe. */
export function failRule(p: FaultParams) {
  return {
    count: toInt(p.failCount, 1, 1),
    ...(p.failKind ? { kind: p.failKind as OperationKind } : {}),
    ...(p.failAsset.trim() ? { assetId: p.failAsset.trim() } : {}),
  };
}

/** The unavailable rule the parameters describe (no duration: until cleared). */
export function unavailableRule(p: FaultParams) {
  const seconds = p.unavailableSeconds.trim() === '' ? null : toInt(p.unavailableSeconds, 1, 30);
  return { mode: p.unavailableMode === 'reset' ? ('reset' as const) : ('reject' as const), ...(seconds === null ? {} : { durationMs: seconds * 1000 }) };
}
