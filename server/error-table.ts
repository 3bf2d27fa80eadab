import type { ErrorCode } from './errors';

/**
 * tRPC's names of the codes the table uses. They are written out rather than imported so that this
 * module, shared by the tRPC and REST adapters, depends on neither; server/trpc/init.ts hands them
 * to `TRPCError`, whose own type checks each one.
 */
type TrpcCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'TOO_MANY_REQUESTS'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNPROCESSABLE_CONTENT'
  | 'SERVICE_UNAVAILABLE'
  | 'PRECONDITION_FAILED';

/**
 * The one table from domain error codes to transport codes. tRPC and the REST API both read it,
 * so a code means the same thing on every surface. `trpcHttp`: the HTTP status tRPC answers with
 * when it is not its code's own (tRPC names no 410 Gone), so both transports answer the same status.
 */
export const errorTable: Record<ErrorCode, { trpc: TrpcCode; http: number; trpcHttp?: number }> = {
  ValidationFailed: { trpc: 'BAD_REQUEST', http: 400 },
  Unauthenticated: { trpc: 'UNAUTHORIZED', http: 401 },
  Forbidden: { trpc: 'FORBIDDEN', http: 403 },
  NotFound: { trpc: 'NOT_FOUND', http: 404 },
  Conflict: { trpc: 'CONFLICT', http: 409 },
  RateLimited: { trpc: 'TOO_MANY_REQUESTS', http: 429 },
  PayloadTooLarge: { trpc: 'PAYLOAD_TOO_LARGE', http: 413 },
  InvalidCidr: { trpc: 'BAD_REQUEST', http: 400 },
  PrefixLengthRejected: { trpc: 'BAD_REQUEST', http: 400 },
  NoOfferingPool: { trpc: 'BAD_REQUEST', http: 400 },
  Overlap: { trpc: 'CONFLICT', http: 409 },
  Exhausted: { trpc: 'UNPROCESSABLE_CONTENT', http: 507 },
  ClaimExists: { trpc: 'CONFLICT', http: 409 },
  AllocationRetained: { trpc: 'CONFLICT', http: 409 },
  QuotaExceeded: { trpc: 'FORBIDDEN', http: 403 },
  PolicyFailed: { trpc: 'UNPROCESSABLE_CONTENT', http: 422 },
  Unavailable: { trpc: 'SERVICE_UNAVAILABLE', http: 503 },
  StaleEpoch: { trpc: 'CONFLICT', http: 409 },
  LocationUnavailable: { trpc: 'PRECONDITION_FAILED', http: 412 },
  NoCapacity: { trpc: 'CONFLICT', http: 409 },
  InvalidTransition: { trpc: 'CONFLICT', http: 409 },
  CheckMismatch: { trpc: 'CONFLICT', http: 409 },
  ProjectDeleting: { trpc: 'CONFLICT', http: 409 },
  /** Removing or demoting the last owner of an organization or project. */
  LastOwner: { trpc: 'CONFLICT', http: 409 },
  /** An invitation or password-reset link that was used, revoked, has expired or never existed: gone for good. */
  LinkUnusable: { trpc: 'PRECONDITION_FAILED', http: 410, trpcHttp: 410 },
  DatabaseUnavailable: { trpc: 'SERVICE_UNAVAILABLE', http: 503 },
};
