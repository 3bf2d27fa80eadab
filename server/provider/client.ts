/**
 * The provider port: what the control plane may ask of a bare-metal provider, and how every answer is
 * classified. The simulator's HTTP client implements it; a real provider would implement the same.
 *
 * ## Outcome contract (read before calling)
 *
 * Every call resolves (never throws for provider or transport trouble) to one of:
 *
 * - `result`: the provider answered definitely with a value.
 * - `rejected`: the provider answered definitely that it did nothing (4xx with a code:
 *   `StaleEpoch`, `StaleFencingToken`, `IdempotencyConflict`, `InvalidRequest`, `NotFound`, `Unauthorized`, …).
 * - `unknown`: nothing definite is known — timeout, connection refused or reset, a lost response,
 *   503 `Unavailable`, any 5xx, or a malformed response. **The effect may or may not have happened.**
 *
 * An `unknown` outcome of `submit`/`install`/`power`/`cleanup` is resolved by `getOperation(id)` with
 * the same operation id — never by submitting new work under a new id. If the lookup answers `NotFound`,
 * the request may be re-sent with the *same id and identical body* (ids are idempotency keys, so this can
 * never apply the effect twice). Only a definite `rejected` outcome proves that nothing was done.
 */
import type {
  ApiErrorCode,
  AssetList,
  AssetState,
  CleanupRequest,
  FaultPatch,
  FaultsView,
  Health,
  InstallRequest,
  LogEntry,
  LogPage,
  OperationKind,
  OperationList,
  OperationRecord,
  OperationRequest,
  OperationState,
  PowerRequest,
  StoreStats,
} from '@/lib/provider-wire';

/** Why an outcome is unknown; useful for metrics and backoff, never a reason to resubmit under a new id. */
export type UnknownReason =
  'timeout' | 'aborted' | 'connection-refused' | 'connection-lost' | 'transport' | 'unavailable' | 'server-error' | 'malformed-response';

export interface ProviderRejection {
  status: number;
  code: ApiErrorCode;
  message: string;
  /** The request field at fault, for validation errors. */
  field?: string;
}

export type CallOutcome<T> =
  { type: 'result'; value: T } | { type: 'rejected'; error: ProviderRejection } | { type: 'unknown'; reason: UnknownReason; message: string; status?: number };

export interface SubmitResult {
  operation: OperationRecord;
  /** True when the id was already known and the retained record was returned (no new effect). */
  replayed: boolean;
}

export interface CallOptions {
  /** Deadline for this call in milliseconds (covers connecting, the request and reading the body). */
  timeoutMs?: number;
  /** Caller cancellation; an aborted call is an `unknown` outcome with reason `aborted`. */
  signal?: AbortSignal;
}

/** Request bodies without the `kind` discriminator, for the per-kind helpers. */
export type InstallInput = Omit<InstallRequest, 'kind'>;
export type PowerInput = Omit<PowerRequest, 'kind'>;
export type CleanupInput = Omit<CleanupRequest, 'kind'>;

/** What a client's transport did so far: connections opened (on TLS, each one handshake) and TLS file reloads. */
export interface TransportStats {
  connections: number;
  reloads: number;
}

/** The runtime port used by the control plane (worker jobs). */
export interface ProviderClient {
  /** Connections opened and credential reloads so far (an HTTP implementation's figures). */
  transportStats?(): TransportStats;
  /** Closes kept-alive connections and stops watching credential files. */
  close?(): void;
  /** Submit an operation; idempotent per `request.id`. See the outcome contract above for `unknown`. */
  submit(request: OperationRequest, options?: CallOptions): Promise<CallOutcome<SubmitResult>>;
  /** Install `imageDigest` on the asset (leaves it powered on). */
  install(request: InstallInput, options?: CallOptions): Promise<CallOutcome<SubmitResult>>;
  /** Set the asset's power state. */
  power(request: PowerInput, options?: CallOptions): Promise<CallOutcome<SubmitResult>>;
  /** Wipe the asset and close the epoch: no operation of this or an older epoch will take effect afterwards. */
  cleanup(request: CleanupInput, options?: CallOptions): Promise<CallOutcome<SubmitResult>>;
  /** Look an operation up by id; `rejected` with code `NotFound` when the provider has no such operation. */
  getOperation(id: string, options?: CallOptions): Promise<CallOutcome<OperationRecord>>;
  /** Read an asset's state; `rejected` with code `NotFound` when the provider has never seen it. */
  getAsset(id: string, options?: CallOptions): Promise<CallOutcome<AssetState>>;
  /** Reachability and liveness (no authentication needed). */
  health(options?: CallOptions): Promise<CallOutcome<Health>>;
}

export interface ListOptions extends CallOptions {
  limit?: number;
}

/** Fault injection and inspection, used by the QA console (admin token; never the runtime token). */
export interface ProviderAdminClient {
  listAssets(options?: ListOptions): Promise<CallOutcome<AssetList>>;
  /** Create an asset explicitly (assets are also created implicitly by their first operation). */
  createAsset(id: string, options?: CallOptions): Promise<CallOutcome<AssetState>>;
  getAsset(id: string, options?: CallOptions): Promise<CallOutcome<AssetState>>;
  /** Newest first; optionally only one asset's or one state's operations. */
  listOperations(options?: ListOptions & { assetId?: string; state?: OperationState; kind?: OperationKind }): Promise<CallOutcome<OperationList>>;
  getOperation(id: string, options?: CallOptions): Promise<CallOutcome<OperationRecord>>;
  getFaults(options?: CallOptions): Promise<CallOutcome<FaultsView>>;
  /** Set or clear faults; absent keys are unchanged. */
  setFaults(patch: FaultPatch, options?: CallOptions): Promise<CallOutcome<FaultsView>>;
  clearFaults(options?: CallOptions): Promise<CallOutcome<FaultsView>>;
  /** Log entries in ascending `seq`: those after `afterSeq`, or the newest `limit` when `afterSeq` is absent. */
  getLog(options?: ListOptions & { afterSeq?: number }): Promise<CallOutcome<LogPage>>;
  /**
   * Follow the log live (server-sent events): yields entries after `afterSeq` once they are durable.
   * Ends when `signal` aborts or the connection drops; no deadline applies to the stream itself.
   */
  streamLog(options: { afterSeq?: number; signal?: AbortSignal }): AsyncIterable<LogEntry>;
  /** Durable-store and size figures since the simulator started. */
  getStats(options?: CallOptions): Promise<CallOutcome<StoreStats>>;
}

/** Thrown by {@link unwrap} for a non-result outcome. */
export class ProviderCallError extends Error {
  readonly outcome: Exclude<CallOutcome<unknown>, { type: 'result' }>;
  constructor(outcome: Exclude<CallOutcome<unknown>, { type: 'result' }>) {
    super(
      outcome.type === 'rejected'
        ? `provider rejected the call: ${outcome.error.code}: ${outcome.error.message}`
        : `provider outcome unknown (${outcome.reason}): ${outcome.message}`,
    );
    this.name = 'ProviderCallError';
    this.outcome = outcome;
  }
}

/** The value of a `result` outcome; throws {@link ProviderCallError} otherwise. Convenient for inspection calls. */
export function unwrap<T>(outcome: CallOutcome<T>): T {
  if (outcome.type === 'result') return outcome.value;
  throw new ProviderCallError(outcome);
}

/** True when the outcome is the definite rejection `code`. */
export function isRejectedWith(outcome: CallOutcome<unknown>, code: ApiErrorCode): boolean {
  return outcome.type === 'rejected' && outcome.error.code === code;
}
