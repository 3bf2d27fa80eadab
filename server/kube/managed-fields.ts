import { isDeepStrictEqual } from 'node:util';
import type { ManagedFieldsEntry } from './store';

/**
 * Field ownership (`metadata.managedFields`) and server-side apply, as Kubernetes defines them
 * (structured-merge-diff): every field of an object that a client set is owned by a field
 * manager; an apply sets the fields of its configuration, answers a conflict when another manager
 * owns one of them with another value (unless forced, which takes the field over), and removes the
 * fields it applied before and no longer applies when nobody else owns them. Updates (create,
 * PUT, merge and JSON patches) give their manager the fields they changed.
 *
 * What is tracked: `metadata.labels` and `metadata.annotations` key by key, and `spec` down to its
 * leaves; lists are atomic (one field), as `x-kubernetes-list-type: atomic` in the OpenAPI says.
 */

/** A field: its path from the object's root (`['spec', 'network']`). */
export type FieldPath = string[];

/** The managed fields of an object (absent parts: none). */
export interface Managed {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const key = (path: FieldPath) => JSON.stringify(path);
const unkey = (k: string): FieldPath => JSON.parse(k) as FieldPath;

function leaves(value: unknown, path: FieldPath, out: Set<string>) {
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) if (v !== undefined) leaves(v, [...path, k], out);
  } else out.add(key(path));
}

/** The fields an object (or an applied configuration) sets. */
export function fieldsOf(object: Managed): Set<string> {
  const out = new Set<string>();
  for (const map of ['labels', 'annotations'] as const) {
    for (const k of Object.keys(object.metadata?.[map] ?? {})) out.add(key(['metadata', map, k]));
  }
  if (isPlainObject(object.spec)) for (const [k, v] of Object.entries(object.spec)) if (v !== undefined && v !== null) leaves(v, ['spec', k], out);
  return out;
}

export function valueAt(object: unknown, path: FieldPath): unknown {
  let at: unknown = object;
  for (const p of path) {
    if (!isPlainObject(at)) return undefined;
    at = at[p];
  }
  return at;
}

function setAt(object: Record<string, unknown>, path: FieldPath, value: unknown) {
  let at = object;
  for (const p of path.slice(0, -1)) {
    if (!isPlainObject(at[p])) at[p] = {};
    at = at[p] as Record<string, unknown>;
  }
  at[path[path.length - 1]] = structuredClone(value);
}

function removeAt(object: Record<string, unknown>, path: FieldPath) {
  const parent = valueAt(object, path.slice(0, -1));
  if (isPlainObject(parent)) delete parent[path[path.length - 1]];
}

/** `{"f:spec":{"f:network":{}}}` of a set of fields. */
export function encodeFieldsV1(fields: Set<string>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const k of [...fields].sort()) {
    let at = root;
    for (const p of unkey(k)) at = (at[`f:${p}`] ??= {}) as Record<string, unknown>;
  }
  return root;
}

/** The set of fields of a `fieldsV1`. */
export function decodeFieldsV1(fieldsV1: Record<string, unknown>): Set<string> {
  const out = new Set<string>();
  const walk = (node: Record<string, unknown>, path: FieldPath) => {
    const children = Object.keys(node).filter((k) => k.startsWith('f:'));
    if (children.length === 0 && path.length > 0) out.add(key(path));
    for (const c of children) walk((node[c] as Record<string, unknown>) ?? {}, [...path, c.slice(2)]);
  };
  walk(fieldsV1, []);
  return out;
}

/** `.spec.network`, `.metadata.labels.app`: a field as Kubernetes names it in a conflict. */
export const fieldName = (k: string) => '.' + unkey(k).join('.');

export interface Conflict {
  manager: string;
  field: string;
}

/** Thrown by `apply` when other managers own fields it would change. */
export class ApplyConflict extends Error {
  constructor(
    readonly conflicts: Conflict[],
    readonly apiVersion: string,
  ) {
    super(
      `Apply failed with ${conflicts.length} conflict${conflicts.length === 1 ? '' : 's'}: ` +
        conflicts.map((c) => `conflict with "${c.manager}" using ${apiVersion}: ${c.field}`).join('\n'),
    );
  }
}

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

function withEntry(entries: ManagedFieldsEntry[], manager: string, operation: 'Apply' | 'Update', apiVersion: string, fields: Set<string>) {
  const others = entries.filter((e) => !(e.manager === manager && e.operation === operation && e.subresource === undefined));
  return fields.size === 0
    ? others
    : [...others, { manager, operation, apiVersion, time: now(), fieldsType: 'FieldsV1' as const, fieldsV1: encodeFieldsV1(fields) }];
}

/**
 * Server-side apply of `config` by `manager` onto `current` (undefined: the object does not exist
 * yet): the merged object (its metadata.labels/annotations and spec) and the new managed fields.
 * Throws ApplyConflict unless `force`.
 */
export function apply(
  current: Managed | undefined,
  entries: ManagedFieldsEntry[],
  config: Managed,
  options: { manager: string; force: boolean; apiVersion: string },
): { object: Managed; managedFields: ManagedFieldsEntry[] } {
  const applied = fieldsOf(config);
  const owned = entries.map((e) => ({ entry: e, fields: decodeFieldsV1(e.fieldsV1) }));
  const mine = owned.find((o) => o.entry.manager === options.manager && o.entry.operation === 'Apply');
  const conflicts: Conflict[] = [];
  for (const o of owned) {
    if (o === mine) continue;
    for (const f of applied) {
      if (o.fields.has(f) && !isDeepStrictEqual(valueAt(current, unkey(f)), valueAt(config, unkey(f)))) {
        conflicts.push({ manager: o.entry.manager, field: fieldName(f) });
        if (options.force) o.fields.delete(f);
      }
    }
  }
  if (conflicts.length > 0 && !options.force) throw new ApplyConflict(conflicts, options.apiVersion);
  const object = structuredClone(current ?? {}) as Record<string, unknown>;
  const ownedByOthers = new Set(owned.filter((o) => o !== mine).flatMap((o) => [...o.fields]));
  for (const f of mine?.fields ?? []) if (!applied.has(f) && !ownedByOthers.has(f)) removeAt(object, unkey(f));
  for (const f of applied) setAt(object, unkey(f), valueAt(config, unkey(f)));
  let next = owned
    .filter((o) => o !== mine)
    .flatMap((o) =>
      o.fields.size === 0
        ? []
        : [{ ...o.entry, fieldsV1: o.fields.size === decodeFieldsV1(o.entry.fieldsV1).size ? o.entry.fieldsV1 : encodeFieldsV1(o.fields) }],
    );
  next = withEntry(next, options.manager, 'Apply', options.apiVersion, applied);
  return { object: object as Managed, managedFields: next };
}

/**
 * The managed fields after an update by `manager` from `before` (undefined: a create) to `after`:
 * the fields it changed (set anew or to another value) become its own and no longer anyone
 * else's; fields it removed are nobody's.
 */
export function recordUpdate(
  before: Managed | undefined,
  after: Managed,
  entries: ManagedFieldsEntry[],
  options: { manager: string; apiVersion: string },
): ManagedFieldsEntry[] {
  const old = before ? fieldsOf(before) : new Set<string>();
  const now_ = fieldsOf(after);
  const changed = new Set([...now_].filter((f) => !old.has(f) || !isDeepStrictEqual(valueAt(before, unkey(f)), valueAt(after, unkey(f)))));
  const removed = new Set([...old].filter((f) => !now_.has(f)));
  if (changed.size === 0 && removed.size === 0) return entries;
  const next: ManagedFieldsEntry[] = [];
  let mineFields = new Set<string>();
  for (const e of entries) {
    const fields = decodeFieldsV1(e.fieldsV1);
    if (e.manager === options.manager && e.operation === 'Update' && e.subresource === undefined) {
      mineFields = fields;
      continue;
    }
    let touched = false;
    for (const f of [...changed, ...removed]) if (fields.delete(f)) touched = true;
    if (fields.size > 0) next.push(touched ? { ...e, fieldsV1: encodeFieldsV1(fields) } : e);
  }
  for (const f of removed) mineFields.delete(f);
  for (const f of changed) mineFields.add(f);
  return withEntry(next, options.manager, 'Update', options.apiVersion, mineFields);
}
