/**
 * Change notifications: a PostgreSQL NOTIFY on one channel, sent in the transaction that makes the
 * change, so it is delivered at commit and never for a rolled-back change. The payload carries ids
 * and the owning project only — never names, reasons or any other content: a listener that needs
 * more reads it through the usual, scoped queries. Identical notifications in one transaction are
 * collapsed by PostgreSQL.
 *
 * Domain code emits them (server/fleet/changes.ts); the live-update adapter (server/live) listens
 * and streams them to the browsers.
 */
import { sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '@/db/client';

export const CHANGES_CHANNEL = 'meridian_changes';

/** What changed: a machine (phase, reason, deletion), an allocation, a provider operation, a capacity. */
export const changeKinds = ['machine', 'allocation', 'operation', 'capacity'] as const;
export type ChangeKind = (typeof changeKinds)[number];

/** One change as it travels: `k` kind, `id` the object, `p` its project (null: fleet-wide, operators only). */
export interface Change {
  k: ChangeKind;
  id: string;
  p: string | null;
}

/** Parses a notification payload (anything else on the channel is ignored, never trusted). */
export const changeSchema = z.object({ k: z.enum(changeKinds), id: z.string().min(1).max(200), p: z.uuid().nullable() });

/**
 * A `pg_notify(…)` expression for a change whose project is given as SQL (a column or subquery),
 * for use inside a statement that already runs — e.g. in `RETURNING`, so the notification is sent
 * only for rows the statement really changed, at no extra round trip.
 */
export function notifyExpression(kind: ChangeKind, id: SQL | string, project: SQL | string | null): SQL {
  return sql`pg_notify(${CHANGES_CHANNEL}, json_build_object('k', ${kind}::text, 'id', ${id}::text, 'p', ${project}::uuid)::text)`;
}

/** Sends change notifications in the caller's transaction (one statement for any number of them). */
export async function notifyChanges(tx: DbOrTx, changes: Change[]): Promise<void> {
  if (changes.length === 0) return;
  const calls = changes.map((c) => sql`pg_notify(${CHANGES_CHANNEL}, ${JSON.stringify({ k: c.k, id: c.id, p: c.p })})`);
  await tx.execute(sql`select ${sql.join(calls, sql`, `)}`);
}
