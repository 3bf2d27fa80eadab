import { fieldMessage } from '@/components/ui/errors';
import { fieldSentence } from '@/components/ui/messages';

interface ErrorData {
  message: string;
  data?: { field?: string | null; domainCode?: string | null; fieldErrors?: Record<string, string[] | undefined> | null } | null;
}

/** Fields the IP claims made for interfaces report on (the claim's, not the machine's). */
const interfaceFields = new Set(['interfaces', 'network', 'family', 'families', 'addressClasses', 'prefixLength', 'pool', 'address']);

/**
 * An error from creating the interfaces' IP claims: reported by IPAM with the claim's field names
 * (`family`, `prefixLength`, or `name` for a clashing claim), so it belongs under Interfaces, not
 * under the machine's fields of the same name.
 */
export function interfaceError(error: unknown): string | null {
  const e = error as ErrorData | null;
  if (!e?.data) return null;
  const zod = e.data.fieldErrors?.interfaces?.[0];
  if (zod) return fieldSentence(zod, 'Interfaces');
  const code = e.data.domainCode;
  if (
    (e.data.field && interfaceFields.has(e.data.field)) ||
    code === 'ClaimExists' ||
    code === 'Exhausted' ||
    code === 'NoOfferingPool' ||
    /\bnetwork "/.test(e.message)
  ) {
    return code ? `${code}: ${fieldSentence(e.message)}` : fieldSentence(e.message);
  }
  return null;
}

/** The message for one of the machine's own fields, unless the error belongs to the interfaces. */
export function machineFieldError(error: unknown, field: string): string | null {
  return interfaceError(error) ? null : fieldMessage(error, field);
}
