import type { DbOrTx } from '@/db/client';
import { listEvents, type AuditEvent, type EventFilter } from './events';

export const AUDIT_CSV_COLUMNS = ['time', 'project', 'actor_type', 'actor', 'action', 'object_type', 'object_id', 'object_name', 'reason'] as const;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break. A value a
 * spreadsheet would run as a formula (starting with =, +, -, @, tab or carriage return) is prefixed
 * with an apostrophe, so that opening an export never executes text someone put in a reason.
 */
export function csvField(value: string | null | undefined): string {
  let text = value ?? '';
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function auditCsvRow(e: AuditEvent): string {
  const at = e.at instanceof Date ? e.at.toISOString() : String(e.at);
  return (
    [at, e.projectSlug ?? e.projectId, e.actorType, e.actorLabel, e.action, e.objectType, e.objectId, e.objectName, e.reason].map(csvField).join(',') + '\r\n'
  );
}

/**
 * The whole filtered audit log as CSV lines (header first), newest first, read page by page with
 * the same keyset pagination as the console, so memory stays flat however many events match.
 */
export async function* auditCsv(db: DbOrTx, filter: Omit<EventFilter, 'cursor' | 'limit'>, signal?: AbortSignal): AsyncGenerator<string> {
  yield AUDIT_CSV_COLUMNS.join(',') + '\r\n';
  let cursor: string | undefined;
  do {
    if (signal?.aborted) return;
    const page = await listEvents(db, { ...filter, cursor, limit: 1000 });
    yield page.items.map(auditCsvRow).join('');
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
}
