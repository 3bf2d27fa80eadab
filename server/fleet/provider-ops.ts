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
import { env } from '@/server/env';
import { incrementCounter } from '@/server/observability/metrics';
import { z } from 'zod';
import { query } from '@/db/query';
import { OperationKindSchema, OperationRecordSchema, OperationRequestSchema } from '@/lib/provider-wire';
import type { CallOutcome, OperationRecord, ProviderClient, SubmitResult } from '@/server/provider';
import { resolveSubmission } from '@/server/provider/resolve';

export type OperationKind = 'install' | 'power' | 'cleanup';

/** Our record of a provider operation, as the statements below return it (raw rows are parsed with it). */
const OperationRowSchema = z.object({
  id: z.string(),
  kind: OperationKindSchema,
  state: z.enum(['Admitted', 'Submitted', 'Succeeded', 'Failed', 'Unknown']),
  attempts: z.number(),
  request: OperationRequestSchema,
  lastError: z.string().nullable(),
  result: OperationRecordSchema.nullable(),
});
export type OperationRow = z.infer<typeof OperationRowSchema>;

/**
 * Records an operation before it is sent (idempotent: an existing record with the id is returned).
 * The fencing token is the capacity's next sequence number, so tokens only grow per asset. A new
 * record is one statement: the sequence is advanced only when no record with the id exists.
 */
export async function admitOperation(
  tx: DbOrTx,
  input: {
    id: string;
    kind: OperationKind;
    machineId: string | null;
    capacityId: string;
    deviceRef: string;
    bindingId: string;
    epoch: number;
    extra?: { imageDigest?: string; power?: 'on' | 'off' };
  },
): Promise<OperationRow> {
  const request = {
    id: input.id,
    kind: input.kind,
    assetId: input.deviceRef,
    bindingId: input.bindingId,
    epoch: input.epoch,
    ...(input.kind === 'install' ? { imageDigest: input.extra?.imageDigest } : {}),
    ...(input.kind === 'power' ? { power: input.extra?.power ?? 'on' } : {}),
  };
  const [admitted] = await query(
    tx,
    sql`
    with seq as (
      update ${machineCapacity} set fencing_seq = fencing_seq + 1
      where id = ${input.capacityId} and not exists (select 1 from ${providerOperations} where id = ${input.id})
      returning fencing_seq
    )
    insert into ${providerOperations} (id, kind, machine_id, capacity_id, device_ref, binding_id, epoch, fencing_token, request)
    select ${input.id}, ${input.kind}, ${input.machineId}, ${input.capacityId}, ${input.deviceRef}, ${input.bindingId}, ${input.epoch}, seq.fencing_seq,
           ${JSON.stringify(request)}::jsonb || jsonb_build_object('fencingToken', seq.fencing_seq)
    from seq
    on conflict do nothing
    returning id, kind, state, attempts, request, last_error as "lastError", result`,
    OperationRowSchema,
  );
  if (admitted) return admitted;
  return (await getOperationRow(tx, input.id))!;
}

export async function getOperationRow(db: DbOrTx, id: string): Promise<OperationRow | undefined> {
  const [row] = await db
    .select({
      id: providerOperations.id,
      kind: providerOperations.kind,
      state: providerOperations.state,
      attempts: providerOperations.attempts,
      request: providerOperations.request,
      lastError: providerOperations.lastError,
      result: providerOperations.result,
    })
    .from(providerOperations)
    .where(eq(providerOperations.id, id));
  return row as OperationRow | undefined;
}

export type DriveResult =
  | { status: 'succeeded'; record: OperationRecord }
  | { status: 'failed'; code: string; message: string }
  | { status: 'running'; completesAt: Date | null }
  | { status: 'unknown'; reason: string; attempts: number };

async function save(
  db: DbOrTx,
  id: string,
  values: Partial<{ state: OperationRow['state']; lastError: string | null; result: OperationRecord | null; attempts: number }>,
) {
  await db
    .update(providerOperations)
    .set({ ...values, updatedAt: sql`now()` })
    .where(eq(providerOperations.id, id))
    .returning({ id: providerOperations.id });
}

function fromRecord(record: OperationRecord): DriveResult {
  if (record.state === 'Succeeded') return { status: 'succeeded', record };
  if (record.state === 'Failed')
    return { status: 'failed', code: record.error?.code ?? 'Failed', message: record.error?.message ?? 'the provider failed the operation' };
  return { status: 'running', completesAt: record.completesAt ? new Date(record.completesAt) : null };
}

/** What one call to the provider found, and what to record about it (see `recordOperation`). */
export interface OperationCall {
  result: DriveResult;
  record: { state: OperationRow['state']; lastError: string | null; result?: OperationRecord; attempts?: number; retryReason?: string };
}

/**
 * Submits an operation (first time) or resolves where it stands (after an unknown outcome or
 * while it runs). Writes nothing: the caller records the call with `recordOperation` — alone, or
 * in the transaction that acts on the result. Never throws for provider trouble.
 */
export async function callOperation(provider: ProviderClient, op: OperationRow): Promise<OperationCall> {
  if (op.state === 'Succeeded' && op.result)
    return { result: { status: 'succeeded', record: op.result }, record: { state: 'Succeeded', lastError: null, result: op.result } };
  if (op.state === 'Failed') {
    return { result: { status: 'failed', code: 'Failed', message: op.lastError ?? 'failed' }, record: { state: 'Failed', lastError: op.lastError } };
  }
  const outcome: CallOutcome<OperationRecord> =
    op.state === 'Admitted' ? mapSubmit(await provider.submit(op.request)) : await resolveSubmission(provider, op.request);
  if (outcome.type === 'result') {
    const result = fromRecord(outcome.value);
    const state = result.status === 'succeeded' ? 'Succeeded' : result.status === 'failed' ? 'Failed' : 'Submitted';
    return { result, record: { state, result: outcome.value, lastError: result.status === 'failed' ? `${result.code}: ${result.message}` : null } };
  }
  if (outcome.type === 'rejected') {
    return {
      result: { status: 'failed', code: outcome.error.code, message: outcome.error.message },
      record: { state: 'Failed', lastError: `${outcome.error.code}: ${outcome.error.message}` },
    };
  }
  const attempts = op.attempts + 1;
  return {
    result: { status: 'unknown', reason: outcome.reason, attempts },
    record: { state: 'Unknown', attempts, lastError: `${outcome.reason}: ${outcome.message}`, retryReason: outcome.reason },
  };
}

/** Records what a call found on our operation row (and counts a retry), in the caller's transaction. */
export async function recordOperation(db: DbOrTx, op: OperationRow, call: OperationCall): Promise<void> {
  const { retryReason, ...values } = call.record;
  if (op.state === values.state && (op.state === 'Succeeded' || op.state === 'Failed')) return;
  await save(db, op.id, values);
  if (retryReason) await incrementCounter(db, 'meridian_provider_retries_total', { kind: op.kind, reason: retryReason });
}

/** Takes one step on an operation and records it: `callOperation`, then `recordOperation`. */
export async function driveOperation(db: DbOrTx, provider: ProviderClient, op: OperationRow): Promise<DriveResult> {
  const call = await callOperation(provider, op);
  await recordOperation(db, op, call);
  return call.result;
}

function mapSubmit(outcome: CallOutcome<SubmitResult>): CallOutcome<OperationRecord> {
  return outcome.type === 'result' ? { type: 'result', value: outcome.value.operation } : outcome;
}

export type CleanupVerification = { type: 'verified' } | { type: 'unknown'; reason: string } | { type: 'dirty'; why: string };

/**
 * Asks the provider whether a cleanup really happened: the asset must report the epoch closed,
 * wiped, and no binding. `unknown` when the provider could not be asked (retry later).
 */
export async function verifyCleanup(provider: ProviderClient, deviceRef: string, epoch: number): Promise<CleanupVerification> {
  const asset = await provider.getAsset(deviceRef);
  if (asset.type === 'unknown') return { type: 'unknown', reason: asset.reason };
  if (asset.type !== 'result') return { type: 'dirty', why: `cleanup could not be verified: ${asset.error.code}` };
  const { closedThroughEpoch, cleanedAt, bindingId } = asset.value;
  if (closedThroughEpoch >= epoch && cleanedAt !== null && bindingId === null) return { type: 'verified' };
  return { type: 'dirty', why: `cleanup reported success but the asset shows epoch ${asset.value.epoch} closed through ${closedThroughEpoch}` };
}

/** Capped exponential backoff with full jitter: 0.5 s doubling to a 30 s cap, randomized to spread retries. */
export function backoffMs(attempts: number): number {
  const cap = env().PROVIDER_RETRY_CAP_MS;
  const ceiling = Math.min(cap, 500 * 2 ** Math.min(attempts, 16));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}
