/**
 * Wire format of the bare-metal provider API (runtime and admin), as zod schemas.
 *
 * This module is the single definition of the contract between the control plane and a provider:
 * the simulator (simulator/, a program of its own) validates requests and the HTTP client
 * (server/provider) validates responses with these schemas, and the web console may import them
 * (pure zod, no Node imports) to type what it shows. A shared library module: it imports nothing of ours.
 */
import { z } from 'zod';

/** Identifier of an asset (a bare-metal device), e.g. `dev-fra1-0042`. */
export const AssetIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'must be 1-128 characters of A-Z a-z 0-9 . _ : - (starting alphanumeric)');

/** Operation ids are idempotency keys chosen by the caller (deterministic on the control-plane side). */
export const OperationIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/, 'must be 1-200 characters of A-Z a-z 0-9 . _ : - (starting alphanumeric)');

export const BindingIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/, 'must be 1-200 characters of A-Z a-z 0-9 . _ : - (starting alphanumeric)');

/** An image reference pinned by digest. */
export const ImageDigestSchema = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must match sha256:<64 lowercase hex digits>');

/** Epochs start at 1: an asset that was never bound is at epoch 0, and a new binding must advance it. */
export const EpochSchema = z.int().min(1).max(Number.MAX_SAFE_INTEGER);
export const FencingTokenSchema = z.int().min(0).max(Number.MAX_SAFE_INTEGER);

export const OperationKindSchema = z.enum(['install', 'power', 'cleanup']);
export type OperationKind = z.infer<typeof OperationKindSchema>;

export const PowerStateSchema = z.enum(['on', 'off']);

export const OperationStateSchema = z.enum(['Running', 'Succeeded', 'Failed']);
export type OperationState = z.infer<typeof OperationStateSchema>;

const fencedEffect = {
  id: OperationIdSchema,
  assetId: AssetIdSchema,
  bindingId: BindingIdSchema,
  epoch: EpochSchema,
  fencingToken: FencingTokenSchema,
};

export const InstallRequestSchema = z.strictObject({ ...fencedEffect, kind: z.literal('install'), imageDigest: ImageDigestSchema });
export const PowerRequestSchema = z.strictObject({ ...fencedEffect, kind: z.literal('power'), power: PowerStateSchema });
export const CleanupRequestSchema = z.strictObject({ ...fencedEffect, kind: z.literal('cleanup') });

/** Body of `POST /v1/operations`. Unknown fields are rejected so that the idempotency fingerprint covers the whole body. */
export const OperationRequestSchema = z.discriminatedUnion('kind', [InstallRequestSchema, PowerRequestSchema, CleanupRequestSchema]);
export type InstallRequest = z.infer<typeof InstallRequestSchema>;
export type PowerRequest = z.infer<typeof PowerRequestSchema>;
export type CleanupRequest = z.infer<typeof CleanupRequestSchema>;
export type OperationRequest = z.infer<typeof OperationRequestSchema>;

/**
 * Codes carried by a Failed operation record (`error.code`):
 * - `InjectedFailure`: the `failOperations` fault failed it;
 * - `CleanupFailed`: the `cleanupFailAssets` fault failed a cleanup (the epoch stays open, the asset is not wiped);
 * - `StaleEpoch` / `StaleFencingToken`: admitted, but fenced when its effect was due (e.g. cleanup closed its epoch meanwhile).
 */
export const OperationFailureCodeSchema = z.enum(['InjectedFailure', 'CleanupFailed', 'StaleEpoch', 'StaleFencingToken']);

export const OperationRecordSchema = z.object({
  id: OperationIdSchema,
  kind: OperationKindSchema,
  assetId: AssetIdSchema,
  bindingId: BindingIdSchema,
  epoch: EpochSchema,
  fencingToken: FencingTokenSchema,
  imageDigest: ImageDigestSchema.optional(),
  power: PowerStateSchema.optional(),
  state: OperationStateSchema,
  error: z.object({ code: OperationFailureCodeSchema, message: z.string() }).optional(),
  submittedAt: z.iso.datetime(),
  /** When a Running operation is due to finish (schedule a check then; nothing needs to poll before). */
  completesAt: z.iso.datetime().optional(),
  completedAt: z.iso.datetime().optional(),
  /** The SPIFFE ID of the workload that submitted the operation (absent on records kept from before mutual TLS). */
  caller: z.string().optional(),
});
export type OperationRecord = z.infer<typeof OperationRecordSchema>;

export const AssetStateSchema = z.object({
  id: AssetIdSchema,
  /** Highest epoch admitted on this asset (0: never bound). */
  epoch: z.int().min(0),
  /** Binding holding `epoch`; null when never bound or after a successful cleanup. */
  bindingId: BindingIdSchema.nullable(),
  /** Highest fencing token seen within `epoch`. */
  fencingToken: z.int().min(0),
  /** Every epoch ≤ this value has been closed by a cleanup: no operation of those epochs is admitted or takes effect. */
  closedThroughEpoch: z.int().min(0),
  installedImageDigest: ImageDigestSchema.nullable(),
  installedAt: z.iso.datetime().nullable(),
  power: PowerStateSchema,
  cleanedAt: z.iso.datetime().nullable(),
  /** Number of operations whose effect was applied to this asset (failed and fenced ones do not count). */
  effectCount: z.int().min(0),
  lastOperationId: OperationIdSchema.nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type AssetState = z.infer<typeof AssetStateSchema>;

export const HealthSchema = z.object({ status: z.literal('ok'), schemaVersion: z.number(), uptimeMs: z.number() });
export type Health = z.infer<typeof HealthSchema>;

/**
 * Error codes of HTTP error responses. 4xx codes are definite rejections (nothing was done);
 * `Unavailable` (503) and `Internal` (500) say nothing definite about the effect.
 */
export const ApiErrorCodeSchema = z.enum([
  'InvalidRequest',
  'InvalidJson',
  'PayloadTooLarge',
  'Unauthorized',
  'ClientCertificateRequired',
  'ClientCertificateRejected',
  'UntrustedIdentity',
  'TargetNotAuthorized',
  'NotFound',
  'MethodNotAllowed',
  'IdempotencyConflict',
  'StaleEpoch',
  'StaleFencingToken',
  'Unavailable',
  'Internal',
]);
export type ApiErrorCode = z.infer<typeof ApiErrorCodeSchema>;

export const ErrorBodySchema = z.object({
  error: z.object({ code: ApiErrorCodeSchema, message: z.string(), field: z.string().optional() }),
});

// ---------------------------------------------------------------------------------------------
// Admin API (faults and inspection)
// ---------------------------------------------------------------------------------------------

export const FaultNameSchema = z.enum(['loseResponses', 'failOperations', 'latencyMs', 'hang', 'unavailable', 'cleanupFailAssets', 'crash']);
export type FaultName = z.infer<typeof FaultNameSchema>;

/** The durable fault switches. Counted faults (`loseResponses`, `failOperations`) count down as operations consume them. */
export const FaultStateSchema = z.object({
  /** The next N operation submissions that produce a record have their response dropped (the effect is durable). */
  loseResponses: z.int().min(0),
  /** The next `remaining` new operations matching the filters fail with `InjectedFailure`. */
  failOperations: z.object({ remaining: z.int().min(1), kind: OperationKindSchema.nullable(), assetId: AssetIdSchema.nullable() }).nullable(),
  /** Added to every runtime request before it is processed. */
  latencyMs: z.int().min(0),
  /** Runtime requests are held without an answer until hang is cleared (then their connections are reset, unprocessed). */
  hang: z.boolean(),
  /** Runtime requests are refused: `reject` answers 503 Unavailable, `reset` closes the connection. `until` null: until cleared. */
  unavailable: z.object({ mode: z.enum(['reject', 'reset']), until: z.iso.datetime().nullable() }).nullable(),
  /** Cleanups of these assets fail with `CleanupFailed` (not consumed). */
  cleanupFailAssets: z.array(AssetIdSchema),
  /** The next operation submission that yields a record (new or replayed) is answered, then the process exits with code 70. */
  crashOnNextOperation: z.boolean(),
});
export type FaultState = z.infer<typeof FaultStateSchema>;

/** In-memory counters since start (not durable): how the time-based faults affected requests. */
export const FaultStatsSchema = z.object({
  heldRequests: z.int().min(0),
  refusedRequests: z.int().min(0),
  delayedRequests: z.int().min(0),
});
export type FaultStats = z.infer<typeof FaultStatsSchema>;

export const FaultsViewSchema = z.object({ faults: FaultStateSchema, stats: FaultStatsSchema });
export type FaultsView = z.infer<typeof FaultsViewSchema>;

/**
 * Body of `POST /admin/faults`: each present key replaces that fault, absent keys are unchanged,
 * `null` / `0` / `false` / `[]` clears it.
 */
export const FaultPatchSchema = z.strictObject({
  loseResponses: z.int().min(0).max(1_000_000).optional(),
  failOperations: z
    .strictObject({ count: z.int().min(1).max(1_000_000), kind: OperationKindSchema.optional(), assetId: AssetIdSchema.optional() })
    .nullable()
    .optional(),
  latencyMs: z.int().min(0).max(600_000).optional(),
  hang: z.boolean().optional(),
  unavailable: z
    .strictObject({ mode: z.enum(['reject', 'reset']).default('reject'), durationMs: z.int().min(1).max(86_400_000).optional() })
    .nullable()
    .optional(),
  cleanupFailAssets: z.array(AssetIdSchema).max(10_000).optional(),
  /** `now`: exit right after answering this request; `nextOperation`: arm `crashOnNextOperation`; null disarms. */
  crash: z.enum(['now', 'nextOperation']).nullable().optional(),
});
export type FaultPatch = z.input<typeof FaultPatchSchema>;

export const LogEntrySchema = z.object({
  seq: z.int().min(1),
  at: z.iso.datetime(),
  type: z.enum(['operation', 'fault', 'asset', 'access']),
  /**
   * operation: `submitted` | `completed` | `replayed` | `rejected`;
   * fault: `set` | `cleared` | `expired`; asset: `created`; access: `refused` (a runtime request
   * without an acceptable client certificate or identity, or not authorized for its target).
   */
  event: z.string(),
  operationId: OperationIdSchema.optional(),
  kind: OperationKindSchema.optional(),
  assetId: AssetIdSchema.optional(),
  bindingId: BindingIdSchema.optional(),
  epoch: z.int().optional(),
  fencingToken: z.int().optional(),
  /** Operation state after the event, or `Rejected` for a refused submission. */
  result: z.enum(['Running', 'Succeeded', 'Failed', 'Rejected']).optional(),
  errorCode: z.string().optional(),
  /** Faults that acted on this operation (counted ones were consumed by it). */
  faultsApplied: z.array(FaultNameSchema).optional(),
  fault: FaultNameSchema.optional(),
  detail: z.string().optional(),
  /** The caller's SPIFFE ID, when its certificate carried one. */
  identity: z.string().optional(),
});
export type LogEntry = z.infer<typeof LogEntrySchema>;

export const AssetListSchema = z.object({ items: z.array(AssetStateSchema), total: z.int().min(0) });
export type AssetList = z.infer<typeof AssetListSchema>;
export const OperationListSchema = z.object({ items: z.array(OperationRecordSchema), total: z.int().min(0) });
export type OperationList = z.infer<typeof OperationListSchema>;
export const LogPageSchema = z.object({ items: z.array(LogEntrySchema), lastSeq: z.int().min(0) });
export type LogPage = z.infer<typeof LogPageSchema>;

/** Durable-store figures since start (`GET /admin/stats`): group commit makes `changes / writes` > 1 under load. */
export const StoreStatsSchema = z.object({
  stateFile: z.string(),
  writes: z.int().min(0),
  changes: z.int().min(0),
  bytesLastWrite: z.int().min(0),
  totalSerializeMs: z.number().min(0),
  totalWriteMs: z.number().min(0),
  assets: z.int().min(0),
  operations: z.int().min(0),
  running: z.int().min(0),
  uptimeMs: z.number().min(0),
});
export type StoreStats = z.infer<typeof StoreStatsSchema>;

export const CreateAssetRequestSchema = z.strictObject({ id: AssetIdSchema });
