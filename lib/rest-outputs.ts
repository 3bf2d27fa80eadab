import { z } from 'zod';

/**
 * Building blocks of the routes' declared outputs: the JSON a route answers with on success (any
 * 2xx with a body), as zod schemas. The OpenAPI document shows them as each route's response
 * schema; the in-process REST caller of the test suites (test/rest.ts) checks every successful
 * answer against its route's, so a declaration cannot drift from what the handler sends. Objects
 * are open (a field added to an answer is not a break); every field declared is checked.
 */

/** A point in time as JSON carries it: RFC 3339 (a `Date` serializes as `2026-01-02T03:04:05.678Z`). */
export const timestamp = z.iso.datetime({ offset: true }).describe('RFC 3339 timestamp');

/** The opaque token of the next page, or null on the last page. */
export const continueToken = z.string().nullable().describe('pass as ?continue= for the next page; null on the last page');

/** A Kubernetes-style condition. */
export const condition = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().nullable(),
  message: z.string().nullable(),
});

/** `{ apiVersion, kind, metadata, spec, status }` of one kind. */
export function resourceOutput<M extends z.ZodRawShape, S extends z.ZodRawShape, T extends z.ZodRawShape>(
  apiVersion: string,
  kind: string,
  shape: { metadata: M; spec: S; status: T },
) {
  return z.object({
    apiVersion: z.literal(apiVersion),
    kind: z.literal(kind),
    metadata: z.object(shape.metadata),
    spec: z.object(shape.spec),
    status: z.object(shape.status),
  });
}

/** A list of `item`s: `{ apiVersion?, kind, items, metadata?: { continue, total? } }` (a list without pages has no `continue`). */
export function listOutput(kind: string, item: z.ZodType, metadata: z.ZodRawShape = {}) {
  return z.object({
    apiVersion: z.literal('v1').optional(),
    kind: z.literal(kind),
    items: z.array(item),
    metadata: z.object({ continue: continueToken.optional(), total: z.number().int().nonnegative().optional(), ...metadata }).optional(),
  });
}

/** The answer of a delete: `{ kind: 'Status', status: 'Success', details: { name, kind?, … } }`. */
export function statusOutput(kind?: string, details: z.ZodRawShape = {}) {
  return z.object({
    apiVersion: z.literal('v1').optional(),
    kind: z.literal('Status'),
    status: z.literal('Success'),
    details: z.object({ name: z.string(), ...(kind ? { kind: z.literal(kind) } : {}), ...details }),
  });
}
