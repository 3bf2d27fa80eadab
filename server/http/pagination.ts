import { z } from 'zod';
import { DomainError } from '@/server/errors';
import { refuseUnstorableText } from './untrusted-text';

/** Opaque list continuation tokens (`?continue=`): the next offset, base64url-encoded. */
export function encodeContinue(offset: number | null): string | null {
  return offset === null ? null : Buffer.from(`o:${offset}`).toString('base64url');
}

export function decodeContinue(token: string | null | undefined): number {
  if (!token) return 0;
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const m = /^o:(\d{1,9})$/.exec(text);
  if (!m) throw new DomainError('ValidationFailed', 'continue: is not a token returned by this API', 'continue');
  return Number(m[1]);
}

/** The paging parameters of a list's query: `limit` (1 to `max`, default `defaultLimit`) and `continue`. */
export function pageQuery(max: number, defaultLimit: number) {
  return {
    limit: z.coerce.number().int().min(1).max(max).default(defaultLimit).describe('page size'),
    continue: z.string().max(100).optional().describe('token from the previous page'),
  };
}

/** Parses query parameters with a zod schema (values arrive as strings; use z.coerce). */
export function parseQuery<S extends z.ZodType>(params: URLSearchParams, schema: S): z.infer<S> {
  const raw: Record<string, string> = {};
  for (const [k, v] of params) raw[k] = v;
  refuseUnstorableText(raw, 'query');
  return schema.parse(raw);
}
