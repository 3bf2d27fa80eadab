import { codeSentence, fieldSentence } from './messages';
import { withResourceWords } from './resource-names';

/** Reading tRPC errors in forms: the field-level message for one input, or the overall message. */
interface ErrorLike {
  message: string;
  data?: { field?: string | null; fieldErrors?: Record<string, string[] | undefined> | null; domainCode?: string | null } | null;
}

export function fieldError(error: unknown, field: string): string | null {
  const e = error as ErrorLike | null;
  if (!e?.data) return null;
  const zod = e.data.fieldErrors?.[field]?.[0];
  if (zod) return zod;
  if (e.data.field === field) return e.message;
  return null;
}

/**
 * The overall message of a failed call, as a sentence: a validation problem names its field in
 * words ("Description must have at most 500 characters."); a refusal says what to do; other domain
 * errors open with their code's sentence (`Not enough quota. Requested 1 IP claims …`; components/ui/messages.ts).
 */
export function errorMessage(error: unknown): string {
  const e = error as (ErrorLike & { data?: { code?: string | null } | null }) | null;
  if (!e) return '';
  const zod = e.data?.fieldErrors && Object.entries(e.data.fieldErrors).find(([, v]) => v?.length);
  if (zod) return fieldSentence(`${zod[0]}: ${zod[1]![0]}`);
  if (e.data?.code === 'UNAUTHORIZED') return 'Your session has ended. Sign in again to continue.';
  if (e.data?.code === 'FORBIDDEN' && !e.data.domainCode) return `Not allowed: ${withResourceWords(e.message)}.`;
  // API type names (`ipam.miloapis.com/ipclaims`) read as what they count ("IP claims").
  const message = withResourceWords(e.message);
  if (e.data?.domainCode === 'ValidationFailed') return fieldSentence(message);
  return e.data?.domainCode ? codeSentence(e.data.domainCode, message) : message;
}

/**
 * The server's message for one field, without the field path some domain messages start with
 * ("cidrs.0.cidr: host bits set…"): shown under the input, the path is noise.
 */
export function fieldMessage(error: unknown, field: string): string | null {
  const message = fieldError(error, field);
  return message?.startsWith(`${field}: `) ? message.slice(field.length + 2) : message;
}

/** Marks an input invalid and points it at the message `Field` renders (`<id>-error`). */
export function invalidProps(message: string | null, id: string) {
  return message ? { 'aria-invalid': true as const, 'aria-describedby': `${id}-error` } : {};
}
