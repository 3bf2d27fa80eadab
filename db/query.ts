import type { SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from './client';

/**
 * Runs a raw statement and parses its rows with `row` (zod): the one way raw rows become typed
 * values, so a column renamed or retyped in SQL fails here, naming the field, instead of flowing on
 * as a wrong shape.
 */
export async function query<T extends z.ZodType>(db: DbOrTx, statement: SQL, row: T): Promise<z.output<T>[]> {
  const rows = await db.execute(statement);
  return z.array(row).parse(Array.from(rows));
}

/**
 * A timestamp column of a raw statement, parsed to a Date: drizzle's postgres-js driver hands those
 * over as PostgreSQL's text (`2026-01-02 03:04:05.678+00`), not as the Dates typed columns give.
 */
export const timestampColumn = z.union([z.string(), z.date()]).transform((v) => (v instanceof Date ? v : new Date(v)));
