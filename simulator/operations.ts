/**
 * Operations on assets: idempotent submission, fencing, simulated duration, effects and retention.
 * Pure logic over the in-memory {@link SimulatorState}; the caller makes each mutation durable before answering.
 *
 * Fencing rules (checked when an operation is admitted, and again when its effect is due):
 * - an epoch ≤ the asset's `closedThroughEpoch` is closed: `StaleEpoch`;
 * - an epoch lower than the asset's current epoch: `StaleEpoch`;
 * - the current epoch but another binding: `StaleEpoch` (a new binding must advance the epoch);
 * - the current epoch, same binding, a fencing token lower than the highest seen: `StaleFencingToken`;
 * - a higher epoch is admitted and becomes current, with its binding and token.
 *
 * Cleanup closes its epoch at admission when it is going to succeed, so nothing of that epoch or an older one
 * is admitted afterwards, and operations of the released binding still running are fenced (Failed,
 * `StaleEpoch`) when their effect comes due. A failed operation has no effect; in particular a failed cleanup
 * leaves the epoch open so the same binding can retry it.
 *
 * Results are decided at submission (faults are consumed then) and stored with `completesAt`, so a Running
 * operation finishes the same way whenever — and after however many restarts — it is observed.
 */
import type { AssetState, FaultName, OperationRequest } from '../lib/provider-wire';
import { planOperationResult, takeResponseFaults } from './faults';
import { appendLog, type LogEntryInput, type SimulatorState, type StoredOperation } from './state';

export interface OperationContext {
  now: number;
  /** Simulated duration of an operation (0: completes at submission). */
  operationMs: number;
  retainOperations: number;
  logEntries: number;
}

export type RejectionCode = 'IdempotencyConflict' | 'StaleEpoch' | 'StaleFencingToken';

export type SubmitOutcome =
  | { type: 'accepted'; operation: StoredOperation; replayed: boolean; loseResponse: boolean; crash: boolean }
  | { type: 'rejected'; code: RejectionCode; message: string };

type Fence = { code: 'StaleEpoch' | 'StaleFencingToken'; message: string } | null;

interface FencedCall {
  kind: OperationRequest['kind'];
  assetId: string;
  bindingId: string;
  epoch: number;
  fencingToken: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

function log(state: SimulatorState, entry: LogEntryInput, context: OperationContext): void {
  appendLog(state, entry, context.now, context.logEntries);
}

function operationLogFields(call: FencedCall & { id: string }) {
  return {
    operationId: call.id,
    kind: call.kind,
    assetId: call.assetId,
    bindingId: call.bindingId,
    epoch: call.epoch,
    fencingToken: call.fencingToken,
  };
}

/** Epoch/binding/token checks shared by admission and completion. */
function fenceWithinEpochs(asset: AssetState, call: FencedCall): Fence {
  if (call.epoch < asset.epoch) {
    return { code: 'StaleEpoch', message: `epoch ${call.epoch} is older than asset ${asset.id}'s current epoch ${asset.epoch}` };
  }
  if (call.epoch === asset.epoch) {
    if (asset.bindingId !== null && call.bindingId !== asset.bindingId) {
      return {
        code: 'StaleEpoch',
        message: `epoch ${call.epoch} of asset ${asset.id} belongs to binding ${asset.bindingId}; a new binding must advance the epoch`,
      };
    }
    if (call.fencingToken < asset.fencingToken) {
      return {
        code: 'StaleFencingToken',
        message: `fencing token ${call.fencingToken} is lower than ${asset.fencingToken}, the highest seen in epoch ${call.epoch} of asset ${asset.id}`,
      };
    }
  }
  return null;
}

/** May an operation with these credentials be admitted on the asset now? */
export function admissionFence(asset: AssetState, call: FencedCall): Fence {
  if (call.epoch <= asset.closedThroughEpoch) {
    return {
      code: 'StaleEpoch',
      message: `epoch ${call.epoch} of asset ${asset.id} is closed (cleanup closed every epoch ≤ ${asset.closedThroughEpoch})`,
    };
  }
  return fenceWithinEpochs(asset, call);
}

/** May an admitted operation still apply its effect? A cleanup is not fenced by the closure it made itself. */
function completionFence(asset: AssetState, operation: StoredOperation): Fence {
  if (operation.kind === 'cleanup' && operation.epoch === asset.closedThroughEpoch) return fenceWithinEpochs(asset, operation);
  return admissionFence(asset, operation);
}

function sameRequest(operation: StoredOperation, request: OperationRequest): boolean {
  return (
    operation.kind === request.kind &&
    operation.assetId === request.assetId &&
    operation.bindingId === request.bindingId &&
    operation.epoch === request.epoch &&
    operation.fencingToken === request.fencingToken &&
    (operation.imageDigest ?? null) === (request.kind === 'install' ? request.imageDigest : null) &&
    (operation.power ?? null) === (request.kind === 'power' ? request.power : null)
  );
}

/** Creates an asset that was never seen (epoch 0, unbound, powered off); returns the existing one otherwise. */
export function ensureAsset(state: SimulatorState, id: string, context: { now: number; logEntries: number }): { asset: AssetState; created: boolean } {
  const existing = state.assets.get(id);
  if (existing) return { asset: existing, created: false };
  const at = iso(context.now);
  const asset: AssetState = {
    id,
    epoch: 0,
    bindingId: null,
    fencingToken: 0,
    closedThroughEpoch: 0,
    installedImageDigest: null,
    installedAt: null,
    power: 'off',
    cleanedAt: null,
    effectCount: 0,
    lastOperationId: null,
    createdAt: at,
    updatedAt: at,
  };
  state.assets.set(id, asset);
  appendLog(state, { type: 'asset', event: 'created', assetId: id }, context.now, context.logEntries);
  return { asset, created: true };
}

function applyEffect(asset: AssetState, operation: StoredOperation, at: string): void {
  switch (operation.kind) {
    case 'install':
      asset.installedImageDigest = operation.imageDigest ?? null;
      asset.installedAt = at;
      asset.power = 'on';
      break;
    case 'power':
      asset.power = operation.power ?? asset.power;
      break;
    case 'cleanup':
      asset.installedImageDigest = null;
      asset.installedAt = null;
      asset.power = 'off';
      asset.cleanedAt = at;
      asset.bindingId = null;
      break;
  }
  asset.effectCount++;
  asset.lastOperationId = operation.id;
  asset.updatedAt = at;
}

/** Finishes an operation with its planned result, unless fencing forbids the effect by now. */
function finishOperation(state: SimulatorState, operation: StoredOperation, atMs: number): void {
  const planned = operation.planned ?? { state: 'Succeeded' as const };
  const asset = state.assets.get(operation.assetId);
  if (!asset) throw new Error(`operation ${operation.id} refers to missing asset ${operation.assetId}`);
  const at = iso(atMs);
  let result = planned;
  if (planned.state === 'Succeeded') {
    const fence = completionFence(asset, operation);
    if (fence) result = { state: 'Failed', error: { code: fence.code, message: `fenced when its effect was due: ${fence.message}` } };
    else applyEffect(asset, operation, at);
  }
  operation.state = result.state;
  if (result.error) operation.error = result.error;
  operation.completedAt = at;
  delete operation.planned;
  state.running.delete(operation.id);
}

/**
 * Submits an operation. Replays of a known id with an identical body return the retained record (and add no
 * effect); a different body under a known id is an `IdempotencyConflict`. Rejections change nothing but the log.
 */
export function submitOperation(state: SimulatorState, request: OperationRequest, context: OperationContext, caller?: string): SubmitOutcome {
  const existing = state.operations.get(request.id);
  if (existing) {
    if (!sameRequest(existing, request)) {
      const message = `operation id ${request.id} is already used by a different request (${existing.kind} on ${existing.assetId}, epoch ${existing.epoch})`;
      log(state, { type: 'operation', event: 'rejected', ...operationLogFields(request), result: 'Rejected', errorCode: 'IdempotencyConflict' }, context);
      return { type: 'rejected', code: 'IdempotencyConflict', message };
    }
    const applied: FaultName[] = [];
    const { loseResponse, crash } = takeResponseFaults(state.faults, applied);
    log(
      state,
      { type: 'operation', event: 'replayed', ...operationLogFields(existing), result: existing.state, ...(applied.length ? { faultsApplied: applied } : {}) },
      context,
    );
    return { type: 'accepted', operation: existing, replayed: true, loseResponse, crash };
  }

  const known = state.assets.get(request.assetId);
  const fence = known ? admissionFence(known, request) : null;
  if (fence) {
    log(state, { type: 'operation', event: 'rejected', ...operationLogFields(request), result: 'Rejected', errorCode: fence.code }, context);
    return { type: 'rejected', code: fence.code, message: fence.message };
  }

  const { asset } = ensureAsset(state, request.assetId, context);
  if (request.epoch > asset.epoch) {
    asset.epoch = request.epoch;
    asset.bindingId = request.bindingId;
    asset.fencingToken = request.fencingToken;
  } else {
    asset.fencingToken = Math.max(asset.fencingToken, request.fencingToken);
  }
  asset.updatedAt = iso(context.now);

  const applied: FaultName[] = [];
  const planned = planOperationResult(state.faults, request, applied);
  if (request.kind === 'cleanup' && planned.state === 'Succeeded') asset.closedThroughEpoch = request.epoch;

  const operation: StoredOperation = {
    id: request.id,
    kind: request.kind,
    assetId: request.assetId,
    bindingId: request.bindingId,
    epoch: request.epoch,
    fencingToken: request.fencingToken,
    ...(request.kind === 'install' ? { imageDigest: request.imageDigest } : {}),
    ...(request.kind === 'power' ? { power: request.power } : {}),
    state: 'Running',
    submittedAt: iso(context.now),
    ...(caller ? { caller } : {}),
    planned,
  };
  state.operations.set(operation.id, operation);
  if (context.operationMs > 0) {
    operation.completesAt = iso(context.now + context.operationMs);
    state.running.add(operation.id);
  } else {
    finishOperation(state, operation, context.now);
  }

  const { loseResponse, crash } = takeResponseFaults(state.faults, applied);
  log(
    state,
    {
      type: 'operation',
      event: 'submitted',
      ...operationLogFields(operation),
      result: operation.state,
      ...(operation.error ? { errorCode: operation.error.code } : {}),
      ...(applied.length ? { faultsApplied: applied } : {}),
    },
    context,
  );
  pruneOperations(state, context);
  return { type: 'accepted', operation, replayed: false, loseResponse, crash };
}

/** Finishes every Running operation due by `context.now`, in completion order (ties: submission order). */
export function completeDueOperations(state: SimulatorState, context: OperationContext): number {
  const due: StoredOperation[] = [];
  for (const id of state.running) {
    const operation = state.operations.get(id);
    if (operation?.completesAt && Date.parse(operation.completesAt) <= context.now) due.push(operation);
  }
  due.sort((a, b) => Date.parse(a.completesAt ?? '') - Date.parse(b.completesAt ?? ''));
  for (const operation of due) {
    finishOperation(state, operation, Date.parse(operation.completesAt ?? ''));
    log(
      state,
      {
        type: 'operation',
        event: 'completed',
        ...operationLogFields(operation),
        result: operation.state,
        ...(operation.error ? { errorCode: operation.error.code } : {}),
      },
      context,
    );
  }
  return due.length;
}

/** The earliest `completesAt` of a Running operation, if any. */
export function nextCompletion(state: SimulatorState): number | null {
  let earliest: number | null = null;
  for (const id of state.running) {
    const at = Date.parse(state.operations.get(id)?.completesAt ?? '');
    if (Number.isFinite(at) && (earliest === null || at < earliest)) earliest = at;
  }
  return earliest;
}

/**
 * Retention rule. An operation record is dropped only when all of these hold:
 *  1. it is terminal (not Running);
 *  2. a newer epoch has been admitted on its asset (operation epoch < asset epoch) — its binding is over, and
 *     the control plane only binds anew after it verified that binding's cleanup, so nobody needs to look it
 *     up again; a replay of it is answered `StaleEpoch` and can never apply its effect a second time;
 *  3. it is not among the newest `retainOperations` records.
 * Every record of an asset's current epoch — including the cleanup that closed it, whose outcome a caller may
 * still be resolving — is kept however many there are: a replay of a forgotten one could pass fencing and
 * apply its effect twice, and a lookup must not answer 404 for work that happened. A dropped id is forgotten
 * (lookup 404, replay StaleEpoch). Pruning runs when the count exceeds the limit by 10 % (at least 50), so
 * its cost is amortized.
 */
export function pruneOperations(state: SimulatorState, context: OperationContext): number {
  const limit = context.retainOperations;
  const slack = Math.max(50, Math.floor(limit / 10));
  if (state.operations.size <= Math.max(limit + slack, state.nextPruneAt)) return 0;
  let excess = state.operations.size - limit;
  let removed = 0;
  for (const operation of state.operations.values()) {
    if (excess === 0) break;
    if (operation.state === 'Running') continue;
    const asset = state.assets.get(operation.assetId);
    const superseded = !asset || operation.epoch < asset.epoch;
    if (!superseded) continue;
    state.operations.delete(operation.id);
    excess--;
    removed++;
  }
  // When open epochs hold more than the limit, wait for another `slack` records before scanning again.
  state.nextPruneAt = state.operations.size + slack;
  return removed;
}
