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

export function errorMessage(error: unknown): string {
  const e = error as ErrorLike | null;
  if (!e) return '';
  const zod = e.data?.fieldErrors && Object.entries(e.data.fieldErrors).find(([, v]) => v?.length);
  if (zod) return `${zod[0]}: ${zod[1]![0]}`;
  return e.data?.domainCode ? `${e.data.domainCode}: ${e.message}` : e.message;
}
