/**
 * Fault injection: the durable fault switches, how a patch changes them, and how operations consume them.
 * Every change and every consumption is logged (consumption as `faultsApplied` on the operation's entry).
 */
import type { FaultName, FaultPatchSchema, FaultState, OperationRequest } from '../lib/provider-wire';
import type { z } from 'zod';
import { appendLog, emptyFaults, type SimulatorState, type StoredOperation } from './state';

export type ParsedFaultPatch = z.output<typeof FaultPatchSchema>;

export interface FaultContext {
  now: number;
  logEntries: number;
}

type PlannedResult = NonNullable<StoredOperation['planned']>;

/**
 * Decides the result of a newly admitted operation, consuming `failOperations` when it matches.
 * `applied` collects the faults that acted on it.
 */
export function planOperationResult(faults: FaultState, request: OperationRequest, applied: FaultName[]): PlannedResult {
  const rule = faults.failOperations;
  if (rule && (rule.kind === null || rule.kind === request.kind) && (rule.assetId === null || rule.assetId === request.assetId)) {
    faults.failOperations = rule.remaining > 1 ? { ...rule, remaining: rule.remaining - 1 } : null;
    applied.push('failOperations');
    return { state: 'Failed', error: { code: 'InjectedFailure', message: `${request.kind} failed: injected failure (failOperations fault)` } };
  }
  if (request.kind === 'cleanup' && faults.cleanupFailAssets.includes(request.assetId)) {
    applied.push('cleanupFailAssets');
    return {
      state: 'Failed',
      error: {
        code: 'CleanupFailed',
        message: `cleanup of asset ${request.assetId} failed (cleanupFailAssets fault): the asset was not wiped and epoch ${request.epoch} stays open`,
      },
    };
  }
  return { state: 'Succeeded' };
}

/** Consumes the response faults for a submission that produced a record: a lost response and/or a crash after answering. */
export function takeResponseFaults(faults: FaultState, applied: FaultName[]): { loseResponse: boolean; crash: boolean } {
  const loseResponse = faults.loseResponses > 0;
  if (loseResponse) {
    faults.loseResponses--;
    applied.push('loseResponses');
  }
  const crash = faults.crashOnNextOperation;
  if (crash) {
    faults.crashOnNextOperation = false;
    applied.push('crash');
  }
  return { loseResponse, crash };
}

/** The refusal mode in force for runtime requests at `now`, if any. */
export function activeUnavailable(faults: FaultState, now: number): 'reject' | 'reset' | null {
  const fault = faults.unavailable;
  if (!fault) return null;
  if (fault.until !== null && Date.parse(fault.until) <= now) return null;
  return fault.mode;
}

/** Clears an `unavailable` fault whose duration has passed; true when the state changed. */
export function expireFaults(state: SimulatorState, context: FaultContext): boolean {
  const fault = state.faults.unavailable;
  if (fault?.until && Date.parse(fault.until) <= context.now) {
    state.faults.unavailable = null;
    appendLog(state, { type: 'fault', event: 'expired', fault: 'unavailable', detail: `until ${fault.until}` }, context.now, context.logEntries);
    return true;
  }
  return false;
}

/** The earliest time at which a fault expires by itself, if any. */
export function nextFaultExpiry(faults: FaultState): number | null {
  return faults.unavailable?.until ? Date.parse(faults.unavailable.until) : null;
}

/**
 * Applies an admin patch (each present key replaces that fault). Returns whether the caller must crash the
 * process right after answering (`crash: 'now'`).
 */
export function applyFaultPatch(state: SimulatorState, patch: ParsedFaultPatch, context: FaultContext): { crashNow: boolean } {
  const faults = state.faults;
  const log = (fault: FaultName, on: boolean, detail: string) =>
    appendLog(state, { type: 'fault', event: on ? 'set' : 'cleared', fault, detail }, context.now, context.logEntries);
  let crashNow = false;

  if (patch.loseResponses !== undefined) {
    faults.loseResponses = patch.loseResponses;
    log('loseResponses', patch.loseResponses > 0, `next ${patch.loseResponses} responses lost`);
  }
  if (patch.failOperations !== undefined) {
    const rule = patch.failOperations;
    faults.failOperations = rule ? { remaining: rule.count, kind: rule.kind ?? null, assetId: rule.assetId ?? null } : null;
    log('failOperations', rule !== null, rule ? `next ${rule.count} ${rule.kind ?? 'any-kind'} operations on ${rule.assetId ?? 'any asset'} fail` : 'off');
  }
  if (patch.latencyMs !== undefined) {
    faults.latencyMs = patch.latencyMs;
    log('latencyMs', patch.latencyMs > 0, `${patch.latencyMs} ms added`);
  }
  if (patch.hang !== undefined) {
    faults.hang = patch.hang;
    log('hang', patch.hang, patch.hang ? 'runtime requests held unanswered' : 'off');
  }
  if (patch.unavailable !== undefined) {
    const rule = patch.unavailable;
    faults.unavailable = rule ? { mode: rule.mode, until: rule.durationMs === undefined ? null : new Date(context.now + rule.durationMs).toISOString() } : null;
    log('unavailable', rule !== null, rule ? `mode ${rule.mode}${rule.durationMs === undefined ? ' until cleared' : ` for ${rule.durationMs} ms`}` : 'off');
  }
  if (patch.cleanupFailAssets !== undefined) {
    faults.cleanupFailAssets = [...new Set(patch.cleanupFailAssets)];
    log('cleanupFailAssets', faults.cleanupFailAssets.length > 0, faults.cleanupFailAssets.join(',') || 'none');
  }
  if (patch.crash !== undefined) {
    crashNow = patch.crash === 'now';
    faults.crashOnNextOperation = patch.crash === 'nextOperation';
    log('crash', patch.crash !== null, patch.crash ?? 'off');
  }
  return { crashNow };
}

/** Turns every fault off (logged per fault that was on). */
export function clearAllFaults(state: SimulatorState, context: FaultContext): void {
  const before = state.faults;
  const on: FaultName[] = [];
  if (before.loseResponses > 0) on.push('loseResponses');
  if (before.failOperations) on.push('failOperations');
  if (before.latencyMs > 0) on.push('latencyMs');
  if (before.hang) on.push('hang');
  if (before.unavailable) on.push('unavailable');
  if (before.cleanupFailAssets.length > 0) on.push('cleanupFailAssets');
  if (before.crashOnNextOperation) on.push('crash');
  state.faults = emptyFaults();
  for (const fault of on) appendLog(state, { type: 'fault', event: 'cleared', fault, detail: 'all faults cleared' }, context.now, context.logEntries);
}
