import { fieldError } from '@/components/ui/errors';

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
