/**
 * Durable provider operations: our record is written (state Admitted) in the transaction that
 * decides the work, with a deterministic id the provider treats as an idempotency key. Driving an
 * operation submits it once; any unknown outcome (timeout, lost response, 5xx, provider away) is
 * resolved by looking the id up — re-sending the identical request under the same id only when the
 * provider has never seen it. New work is never submitted under a new id to "try again".
 */
import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { machineCapacity, providerOperations } from '@/db/schema/fleet';
import { incrementCounter } from '@/server/observability/metrics';
import type { CallOutcome, OperationRecord, OperationRequest, ProviderClient, SubmitResult } from '@/server/provider';
import { resolveSubmission } from '@/server/provider/resolve';

export type OperationKind = 'install' | 'power' | 'cleanup';

export interface OperationRow {
  id: string;
  kind: OperationKind;
  state: 'Admitted' | 'Submitted' | 'Succeeded' | 'Failed' | 'Unknown';
  attempts: number;
  request: OperationRequest;
  lastError: string | null;
  result: OperationRecord | null;
}

/**
 * Records an operation before it is sent (idempotent: an existing record with the id is returned).
 * The fencing token is the capacity's next sequence number, so tokens only grow per asset.
 */
export async function admitOperation(
  tx: DbOrTx,
  input: { id: string; kind: OperationKind; machineId: string; capacityId: string; deviceRef: string; bindingId: string; epoch: number; extra?: { imageDigest?: string; power?: 'on' | 'off' } },
): Promise<OperationRow> {
  const existing = await getOperationRow(tx, input.id);
  if (existing) return existing;
  const [{ seq }] = await tx
    .update(machineCapacity)
    .set({ fencingSeq: sql`${machineCapacity.fencingSeq} + 1` })
    .where(eq(machineCapacity.id, input.capacityId))
    .returning({ seq: machineCapacity.fencingSeq });
  const request = {
    id: input.id,
    kind: input.kind,
    assetId: input.deviceRef,
    bindingId: input.bindingId,
    epoch: input.epoch,
    fencingToken: seq,
    ...(input.kind === 'install' ? { imageDigest: input.extra?.imageDigest } : {}),
    ...(input.kind === 'power' ? { power: input.extra?.power ?? 'on' } : {}),
  } as OperationRequest;
  await tx.insert(providerOperations).values({
    id: input.id,
    kind: input.kind,
    machineId: input.machineId,
    capacityId: input.capacityId,
    deviceRef: input.deviceRef,
    bindingId: input.bindingId,
    epoch: input.epoch,
    fencingToken: seq,
    request,
  }).onConflictDoNothing();
  return (await getOperationRow(tx, input.id))!;
}

export async function getOperationRow(db: DbOrTx, id: string): Promise<OperationRow | undefined> {
  const [row] = await db
    .select({ id: providerOperations.id, kind: providerOperations.kind, state: providerOperations.state, attempts: providerOperations.attempts, request: providerOperations.request, lastError: providerOperations.lastError, result: providerOperations.result })
    .from(providerOperations)
    .where(eq(providerOperations.id, id));
  return row as OperationRow | undefined;
}

export type DriveResult =
  | { status: 'succeeded'; record: OperationRecord }
  | { status: 'failed'; code: string; message: string }
  | { status: 'running'; completesAt: Date | null }
  | { status: 'unknown'; reason: string; attempts: number };

async function save(db: DbOrTx, id: string, values: Partial<{ state: OperationRow['state']; lastError: string | null; result: OperationRecord | null; attempts: number }>) {
  await db
    .update(providerOperations)
    .set({ ...values, updatedAt: sql`now()` })
    .where(eq(providerOperations.id, id));
}

function fromRecord(record: OperationRecord): DriveResult {
  if (record.state === 'Succeeded') return { status: 'succeeded', record };
  if (record.state === 'Failed') return { status: 'failed', code: record.error?.code ?? 'Failed', message: record.error?.message ?? 'the provider failed the operation' };
  return { status: 'running', completesAt: record.completesAt ? new Date(record.completesAt) : null };
}

/**
 * Takes one step on an operation: submit it (first time) or resolve where it stands (after an
 * unknown outcome or while it runs), recording the state. Never throws for provider trouble.
 */
export async function driveOperation(db: DbOrTx, provider: ProviderClient, op: OperationRow): Promise<DriveResult> {
  if (op.state === 'Succeeded' && op.result) return { status: 'succeeded', record: op.result };
  if (op.state === 'Failed') return { status: 'failed', code: 'Failed', message: op.lastError ?? 'failed' };
  const outcome: CallOutcome<OperationRecord> =
    op.state === 'Admitted'
      ? mapSubmit(await provider.submit(op.request))
      : await resolveSubmission(provider, op.request);
  if (outcome.type === 'result') {
    const result = fromRecord(outcome.value);
    const state = result.status === 'succeeded' ? 'Succeeded' : result.status === 'failed' ? 'Failed' : 'Submitted';
    await save(db, op.id, { state, result: outcome.value, lastError: result.status === 'failed' ? `${result.code}: ${result.message}` : null });
    return result;
  }
  if (outcome.type === 'rejected') {
    await save(db, op.id, { state: 'Failed', lastError: `${outcome.error.code}: ${outcome.error.message}` });
    return { status: 'failed', code: outcome.error.code, message: outcome.error.message };
  }
  const attempts = op.attempts + 1;
  await save(db, op.id, { state: 'Unknown', attempts, lastError: `${outcome.reason}: ${outcome.message}` });
  await incrementCounter(db, 'meridian_provider_retries_total', { kind: op.kind, reason: outcome.reason });
  return { status: 'unknown', reason: outcome.reason, attempts };
}

function mapSubmit(outcome: CallOutcome<SubmitResult>): CallOutcome<OperationRecord> {
  return outcome.type === 'result' ? { type: 'result', value: outcome.value.operation } : outcome;
}

/** Capped exponential backoff with full jitter: 0.5 s doubling to a 30 s cap, randomized to spread retries. */
export function backoffMs(attempts: number): number {
  const cap = Number(process.env.PROVIDER_RETRY_CAP_MS ?? 30_000);
  const ceiling = Math.min(cap, 500 * 2 ** Math.min(attempts, 16));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}
