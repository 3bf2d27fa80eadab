import { DomainError } from '@/server/errors';

/**
 * Text PostgreSQL cannot store: U+0000 (refused in `text` and `jsonb`, 22021/22P05) and unpaired
 * UTF-16 surrogates such as `"\ud800"` (refused in `jsonb`; silently replaced in `text`). Either
 * would surface as a 500 from whichever statement first touches it — possibly an audit event
 * written after the real work — so request input is refused at the edge instead, naming the field.
 */
// eslint-disable-next-line no-control-regex -- NUL is one of the characters PostgreSQL cannot store
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function storable(s: string): boolean {
  return !UNSTORABLE.test(s);
}

/**
 * The dotted path of the first string or object key PostgreSQL could not store, in a parsed JSON
 * value (`''` for the value itself), or `null` when there is none. Iterative: a body may nest
 * thousands deep.
 */
export function unstorableTextPath(value: unknown): string | null {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (!storable(v)) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], path ? `${path}.${i}` : String(i)]);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i];
        const childPath = path ? `${path}.${k}` : k;
        if (!storable(k)) return childPath;
        stack.push([child, childPath]);
      }
    }
  }
  return null;
}

/** Throws a 400 `ValidationFailed` naming the field when `value` holds text PostgreSQL cannot store. */
export function refuseUnstorableText(value: unknown, root: string): void {
  const path = unstorableTextPath(value);
  if (path === null) return;
  const field = path || root;
  throw new DomainError('ValidationFailed', `${field}: must not contain NUL (\\u0000) characters or unpaired surrogates`, field);
}
