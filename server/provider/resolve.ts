import type { CallOptions, CallOutcome, ProviderClient } from './client';
import type { OperationRecord, OperationRequest } from '@/lib/provider-wire';

/**
 * Resolves an `unknown` submission outcome the only safe way: look the operation up by its id; if the provider
 * has no such operation, re-send the *identical* request under the *same* id (an idempotent replay can never
 * apply the effect twice, even if the first attempt is still in flight).
 *
 * Returns the operation record, a definite rejection (e.g. `StaleEpoch` when the binding's epoch was closed
 * meanwhile), or `unknown` again — then retry later with capped backoff; never submit under a new id.
 */
export async function resolveSubmission(client: ProviderClient, request: OperationRequest, options?: CallOptions): Promise<CallOutcome<OperationRecord>> {
  const lookup = await client.getOperation(request.id, options);
  if (lookup.type !== 'rejected' || lookup.error.code !== 'NotFound') return lookup;
  const resubmitted = await client.submit(request, options);
  return resubmitted.type === 'result' ? { type: 'result', value: resubmitted.value.operation } : resubmitted;
}
