import { isDeepStrictEqual } from 'node:util';
import jsonPatch, { type Operation } from 'fast-json-patch';
import yaml from 'js-yaml';
import { z, ZodError } from 'zod';
import { isDomainError } from '@/server/errors';
import { apiVersionOf, kindKey, type KindContext, type KindDeclaration, type StoredObject } from './declare';
import { apply, recordUpdate, type Managed } from './managed-fields';
import { badRequest, conflict, invalid, KubeError, notFound, alreadyExists, type Cause, type Subject } from './status';
import {
  DEFAULT_META,
  DEFAULT_NAMESPACE,
  deleteObjectMeta,
  objectsBeingDeleted,
  getNamespace,
  objectMetas,
  writeObjectMeta,
  type ManagedFieldsEntry,
  type ObjectMeta,
} from './store';

/**
 * What the Kubernetes API does with objects of a declared kind (declare.ts), whatever the kind:
 * it composes each domain object with its metadata (store.ts), and runs get, list, create, update
 * (PUT), patch (merge, JSON, strategic as merge, server-side apply) and delete with their
 * preconditions, immutable fields, field validation, managed fields and dry runs — the part of
 * k8s.io/apiserver's generic registry this API needs. Domain objects are only written through the
 * kind's storage functions.
 */

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid: string | null;
    resourceVersion: string;
    generation: number;
    creationTimestamp: string | null;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    managedFields?: ManagedFieldsEntry[];
  };
  spec: Record<string, unknown>;
  status: Record<string, unknown>;
}

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** One request's context: the project and actor, the namespace addressed, and the request's options. */
export interface RequestContext extends KindContext {
  dryRun: boolean;
  fieldValidation: FieldValidation;
  /** The field manager of a write (`fieldManager`, else derived from the user agent). */
  manager: string;
  /** `Warning:` headers of the answer (unknown fields under fieldValidation=Warn). */
  warnings: string[];
}

const seconds = (d: Date | null) => (d ? d.toISOString().replace(/\.\d{3}Z$/, 'Z') : null);

export function subjectOf(k: KindDeclaration, name?: string): Subject {
  return { name, group: k.group, kind: k.kind, resource: k.group ? `${k.plural}.${k.group}` : k.plural };
}

/** The object a client sees: the domain's spec and status with the API's metadata. */
export function compose(k: KindDeclaration, stored: StoredObject, meta: ObjectMeta): KubeObject {
  const deletion = deletionOf(k, stored, meta);
  return {
    apiVersion: apiVersionOf(k),
    kind: k.kind,
    metadata: {
      name: stored.name,
      ...(k.namespaced ? { namespace: stored.namespace ?? meta.namespace } : {}),
      uid: stored.uid,
      resourceVersion: meta.resourceVersion,
      generation: meta.generation,
      creationTimestamp: seconds(stored.createdAt),
      ...(deletion ? { deletionTimestamp: seconds(deletion.timestamp) ?? undefined, deletionGracePeriodSeconds: 0 } : {}),
      ...(Object.keys(meta.labels).length ? { labels: meta.labels } : {}),
      ...(Object.keys(meta.annotations).length ? { annotations: meta.annotations } : {}),
      ...((deletion?.finalizers ?? meta.finalizers).length ? { finalizers: deletion?.finalizers ?? meta.finalizers } : {}),
      ...(meta.managedFields.length ? { managedFields: meta.managedFields } : {}),
    },
    spec: stored.spec,
    status: stored.status,
  };
}

const managedView = (o: { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: Record<string, unknown> }): Managed => ({
  metadata: { labels: o.metadata.labels ?? {}, annotations: o.metadata.annotations ?? {} },
  spec: o.spec,
});

// ---- Reads --------------------------------------------------------------------------------------

/** Whose metadata rows an object's are: its project's, or the platform's (null) for a platform kind. */
const metaScope = (k: KindDeclaration, ctx: KindContext) => ((k.plane ?? 'project') === 'platform' ? null : ctx.projectId);

/** The context of a storage call on an object of `namespace` (`default` when the path names none). */
export function inNamespace<C extends KindContext>(k: KindDeclaration, ctx: C, namespace: string | undefined): C {
  return k.namespaced ? { ...ctx, namespace: namespace ?? DEFAULT_NAMESPACE } : ctx;
}

async function currentOf(k: KindDeclaration, ctx: KindContext, namespace: string | undefined, name: string) {
  const stored = await k.storage.get(inNamespace(k, ctx, namespace), name);
  if (!stored) {
    await forgetFinishedDeletions(k, ctx, new Set());
    return undefined;
  }
  const meta = (await objectMetas(ctx.db, metaScope(k, ctx), kindKey(k), [stored.uid])).get(stored.uid) ?? DEFAULT_META;
  if (k.namespaced && namespace !== undefined && (stored.namespace ?? meta.namespace) !== namespace) return undefined;
  return { stored, meta, object: compose(k, stored, meta) };
}

export async function getObject(k: KindDeclaration, ctx: KindContext, namespace: string | undefined, name: string): Promise<KubeObject> {
  const current = await currentOf(k, ctx, namespace, name);
  if (!current) throw notFound({ ...subjectOf(k), name });
  return current.object;
}

/** A label selector (`app=web,tier!=db,env in (a,b),!legacy,team`), as a test of an object's labels. */
export function parseLabelSelector(text: string): (labels: Record<string, string>) => boolean {
  const tests: ((l: Record<string, string>) => boolean)[] = [];
  // Split on commas outside parentheses.
  const terms = text.match(/(?:[^,(]|\([^)]*\))+/g) ?? [];
  for (const raw of terms) {
    const term = raw.trim();
    if (!term) continue;
    let m: RegExpExecArray | null;
    if ((m = /^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term))) {
      const [, key, op, list] = m;
      const values = list.split(',').map((v) => v.trim());
      tests.push(op === 'in' ? (l) => key in l && values.includes(l[key]) : (l) => !(key in l) || !values.includes(l[key]));
    } else if ((m = /^([\w./-]+)\s*(==|=|!=)\s*([\w./-]*)$/.exec(term))) {
      const [, key, op, value] = m;
      tests.push(op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value);
    } else if ((m = /^!([\w./-]+)$/.exec(term))) {
      const key = m[1];
      tests.push((l) => !(key in l));
    } else if ((m = /^([\w./-]+)$/.exec(term))) {
      const key = m[1];
      tests.push((l) => key in l);
    } else throw badRequest(`unable to parse requirement: ${JSON.stringify(term)}`);
  }
  return (labels) => tests.every((t) => t(labels));
}

/** A field selector over the kind's declared fields plus metadata.name and metadata.namespace. */
export function parseFieldSelector(k: KindDeclaration, text: string): (o: KubeObject) => boolean {
  const tests: ((o: KubeObject) => boolean)[] = [];
  for (const raw of text.split(',')) {
    const term = raw.trim();
    if (!term) continue;
    const m = /^([\w.]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw badRequest(`invalid selector: '${term}'; can't understand '${term}'`);
    const [, field, op, value] = m;
    const read: ((o: KubeObject) => string | undefined) | undefined =
      field === 'metadata.name'
        ? (o) => o.metadata.name
        : field === 'metadata.namespace' && k.namespaced
          ? (o) => o.metadata.namespace
          : k.fieldSelectors[field];
    if (!read)
      throw badRequest(
        `"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"${Object.keys(k.fieldSelectors)
          .map((f) => `, "${f}"`)
          .join('')}`,
      );
    tests.push(op === '!=' ? (o) => read(o) !== value : (o) => read(o) === value);
  }
  return (o) => tests.every((t) => t(o));
}

/** How long a `continue` token is good for (kube-apiserver's is etcd's compaction interval, 5 minutes). */
export const CONTINUE_TTL_MS = 5 * 60 * 1000;

const continueToken = z.object({ ns: z.string(), name: z.string(), rv: z.string(), at: z.number() });

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion: string;
}

/** The key of a `continue` token (400 when it is not one of ours, 410 Expired when too old). */
function readContinue(text: string): { namespace: string; name: string } {
  let token: z.infer<typeof continueToken>;
  try {
    token = continueToken.parse(JSON.parse(Buffer.from(text, 'base64url').toString('utf8')));
  } catch {
    throw new KubeError(400, 'BadRequest', 'the continue token is not valid');
  }
  if (Date.now() - token.at > CONTINUE_TTL_MS) {
    throw new KubeError(
      410,
      'Expired',
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
    );
  }
  return { namespace: token.ns, name: token.name };
}

const keyOf = (o: KubeObject) => ({ namespace: o.metadata.namespace ?? '', name: o.metadata.name });
const after = (a: { namespace: string; name: string }, b: { namespace: string; name: string }) =>
  a.namespace > b.namespace || (a.namespace === b.namespace && a.name > b.name);

/** The most objects a storage is asked for at once while a page of matching objects fills. */
const BATCH = 500;

/**
 * A list: filtered by namespace and selectors, in (namespace, name) order, in pages (`limit`,
 * `continue`). A storage that pages in its database (`namespacedStorage`) is read in key order
 * from the page's start, batch after batch, until the page holds `limit` matches and one more is
 * known to exist: no list reads the whole table. Other storages are read whole and paged here.
 */
export async function listObjects(k: KindDeclaration, ctx: KindContext, namespace: string | undefined, options: ListOptions) {
  const byLabels = options.labelSelector ? parseLabelSelector(options.labelSelector) : () => true;
  const byFields = options.fieldSelector ? parseFieldSelector(k, options.fieldSelector) : () => true;
  const start = options.continue ? readContinue(options.continue) : undefined;
  const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
  const matches = (o: KubeObject) => (namespace === undefined || o.metadata.namespace === namespace) && byLabels(o.metadata.labels ?? {}) && byFields(o);
  const composeAll = async (stored: StoredObject[]) => {
    const metas = await objectMetas(
      ctx.db,
      metaScope(k, ctx),
      kindKey(k),
      stored.map((s) => s.uid),
    );
    return stored.map((s) => compose(k, s, metas.get(s.uid) ?? DEFAULT_META));
  };
  const found: KubeObject[] = [];
  let exhausted = false;
  if (k.storage.namespacedStorage) {
    let cursor = start;
    while (found.length <= limit) {
      const size = Math.min(BATCH, Number.isFinite(limit) ? Math.max(limit + 1 - found.length, 50) : BATCH);
      const batch = await k.storage.list(ctx, { namespace, after: cursor, limit: size });
      found.push(...(await composeAll(batch)).filter(matches));
      if (batch.length < size) {
        exhausted = true;
        break;
      }
      const last = batch[batch.length - 1];
      cursor = { namespace: last.namespace ?? DEFAULT_NAMESPACE, name: last.name };
    }
  } else {
    const stored = await k.storage.list(ctx, { namespace, limit: Infinity });
    await forgetFinishedDeletions(k, ctx, new Set(stored.map((o) => o.uid)));
    const all = (await composeAll(stored))
      .filter(matches)
      .filter((o) => !start || after(keyOf(o), start))
      .sort((a, b) => (after(keyOf(a), keyOf(b)) ? 1 : after(keyOf(b), keyOf(a)) ? -1 : 0));
    found.push(...all);
    exhausted = true;
  }
  const items = found.slice(0, limit);
  const more = found.length > limit;
  const last = items[items.length - 1];
  return {
    items,
    continue: more
      ? Buffer.from(JSON.stringify({ ns: keyOf(last).namespace, name: last.metadata.name, rv: options.resourceVersion, at: Date.now() })).toString('base64url')
      : undefined,
    // Known exactly only when the storage was read to its end.
    remainingItemCount: more && exhausted ? found.length - limit : undefined,
  };
}

/**
 * Forgets the metadata of objects whose deletion was under way and that the domain has finished
 * (a machine Released, a cluster gone): each one marked as being deleted and not among `seen` is
 * looked up in its storage, and forgotten when it is no longer there.
 */
async function forgetFinishedDeletions(k: KindDeclaration, ctx: KindContext, seen: Set<string>) {
  for (const marked of await objectsBeingDeleted(ctx.db, metaScope(k, ctx), kindKey(k))) {
    if (seen.has(marked.uid)) continue;
    const now = await k.storage.get(inNamespace(k, ctx, marked.namespace), marked.name);
    if (!now || now.uid !== marked.uid) await deleteObjectMeta(ctx.db, marked.uid);
  }
}

// ---- What a client sends ------------------------------------------------------------------------

const stringMap = z.record(z.string(), z.string());
const qualifiedName = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const metadataInput = z.object({
  name: z.string().optional(),
  generateName: z.string().optional(),
  namespace: z.string().optional(),
  uid: z.string().nullable().optional(),
  resourceVersion: z.string().optional(),
  labels: stringMap.nullable().optional(),
  annotations: stringMap.nullable().optional(),
  finalizers: z.array(z.string()).nullable().optional(),
});

/** What an incoming object means: its metadata as sent and its spec, validated. */
export interface DecodedObject {
  metadata: z.infer<typeof metadataInput>;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  finalizers: string[];
  spec: Record<string, unknown>;
}

const KNOWN_TOP = new Set(['apiVersion', 'kind', 'metadata', 'spec', 'status']);

/** Fields of `value` the strict `schema` does not know, as dotted paths under `prefix`; the value without them. */
function dropUnknown(schema: z.ZodType, value: unknown, prefix: string): { value: unknown; unknown: string[] } {
  const found: string[] = [];
  const current = structuredClone(value);
  for (let round = 0; round < 20; round++) {
    const result = schema.safeParse(current);
    if (result.success) break;
    const unrecognized = result.error.issues.filter((i) => i.code === 'unrecognized_keys');
    if (unrecognized.length === 0) break;
    for (const issue of unrecognized) {
      let at: unknown = current;
      for (const p of issue.path) at = (at as Record<string | number, unknown>)[p as string | number];
      for (const key of issue.keys) {
        found.push([prefix, ...issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))), key].join('.').replace(/\.\[/g, '['));
        delete (at as Record<string, unknown>)[key];
      }
    }
  }
  return { value: current, unknown: found };
}

function checkLabels(map: Record<string, string>, field: string, causes: Cause[], values: boolean) {
  for (const [key, value] of Object.entries(map)) {
    if (!qualifiedName.test(key) || key.length > 316)
      causes.push({
        reason: 'FieldValueInvalid',
        field: `${field}`,
        message: `Invalid value: "${key}": name part must consist of alphanumeric characters, '-', '_' or '.'`,
      });
    if (values && (!labelValue.test(value) || value.length > 63))
      causes.push({
        reason: 'FieldValueInvalid',
        field: `${field}`,
        message: `Invalid value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', at most 63 characters`,
      });
  }
}

/**
 * An object a client sent (create, update, a patched object): its apiVersion and kind checked,
 * unknown fields handled as `fieldValidation` says (Strict: 400; Warn: dropped with a warning;
 * Ignore: dropped), the spec validated with the kind's schema (422 naming the fields). Status is
 * the system's: ignored.
 */
export function decodeObject(k: KindDeclaration, raw: unknown, ctx: Pick<RequestContext, 'fieldValidation' | 'warnings'>, name?: string): DecodedObject {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badRequest('the body must be an object');
  const body = raw as Record<string, unknown>;
  if (body.apiVersion !== undefined && body.apiVersion !== apiVersionOf(k))
    throw badRequest(`the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${apiVersionOf(k)})`);
  if (body.kind !== undefined && body.kind !== k.kind)
    throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${k.kind})`);
  const unknown = Object.keys(body).filter((key) => !KNOWN_TOP.has(key));
  const metadata = metadataInput.safeParse(body.metadata ?? {});
  if (!metadata.success)
    throw invalid(
      subjectOf(k, name),
      metadata.error.issues.map((i) => ({ reason: 'FieldValueInvalid', field: `metadata.${i.path.join('.')}`, message: i.message })),
    );
  const spec = dropUnknown(k.spec, body.spec ?? {}, 'spec');
  unknown.push(...spec.unknown);
  if (unknown.length > 0) {
    if (ctx.fieldValidation === 'Strict') throw badRequest(`strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(', ')}`);
    if (ctx.fieldValidation === 'Warn') ctx.warnings.push(...unknown.map((f) => `unknown field "${f}"`));
  }
  const parsed = k.spec.safeParse(spec.value);
  const causes: Cause[] = [];
  if (!parsed.success) {
    for (const i of parsed.error.issues) {
      const field = ['spec', ...i.path.map(String)].join('.');
      causes.push({
        reason: i.code === 'invalid_type' && i.input === undefined ? 'FieldValueRequired' : 'FieldValueInvalid',
        field,
        message: i.input === undefined ? 'Required value' : `Invalid value: ${i.message}`,
      });
    }
  }
  const labels = metadata.data.labels ?? {};
  const annotations = metadata.data.annotations ?? {};
  checkLabels(labels, 'metadata.labels', causes, true);
  checkLabels(annotations, 'metadata.annotations', causes, false);
  if (causes.length > 0) throw invalid(subjectOf(k, name ?? metadata.data.name), causes);
  // The system's finalizer is shown, never stored: a client sending it back (GET, then PUT) keeps nothing of it.
  const finalizers = [...new Set(metadata.data.finalizers ?? [])].filter((f) => f !== k.finalizer);
  return { metadata: metadata.data, labels, annotations, finalizers, spec: parsed.data as Record<string, unknown> };
}

// ---- Writes -------------------------------------------------------------------------------------

/** The domain's refusal of a name already taken, as Kubernetes words it. */
function asAlreadyExists(k: KindDeclaration, name: string, e: unknown): unknown {
  if (isDomainError(e) && (e.code === 'Conflict' || e.code === 'ClaimExists' || e.code === 'AllocationRetained') && e.field === 'name') {
    return alreadyExists({ ...subjectOf(k), name }, e.code === 'Conflict' ? undefined : `${subjectOf(k).resource} "${name}" already exists: ${e.message}`);
  }
  return e;
}

async function requireNamespace(ctx: KindContext, namespace: string) {
  if (!(await getNamespace(ctx.db, ctx.projectId, namespace))) {
    throw new KubeError(404, 'NotFound', `namespaces "${namespace}" not found`, { name: namespace, kind: 'namespaces' });
  }
}

/** Creates an object; `managedFields` given by a server-side apply, else the create's manager owns what it set. */
export async function createObject(
  k: KindDeclaration,
  ctx: RequestContext,
  namespace: string | undefined,
  decoded: DecodedObject,
  managedFields?: ManagedFieldsEntry[],
): Promise<KubeObject> {
  const name = decoded.metadata.name;
  const create = k.storage.create;
  if (!create) {
    throw new KubeError(405, 'MethodNotAllowed', `${subjectOf(k).resource} are made by the system; they cannot be created`, { kind: k.plural, group: k.group });
  }
  if (!name && !k.generatedName)
    throw invalid(subjectOf(k), [{ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' }]);
  if (k.namespaced && decoded.metadata.namespace && decoded.metadata.namespace !== namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const ns = k.namespaced ? (namespace ?? 'default') : 'default';
  if (k.namespaced) await requireNamespace(ctx, ns);
  let stored: StoredObject;
  try {
    stored = await create(inNamespace(k, ctx, ns), { name: name ?? '', spec: decoded.spec, labels: decoded.labels }, { dryRun: ctx.dryRun });
  } catch (e) {
    throw asAlreadyExists(k, name ?? '', e);
  }
  const view = { metadata: { labels: decoded.labels, annotations: decoded.annotations }, spec: decoded.spec };
  const meta = {
    namespace: ns,
    labels: decoded.labels,
    annotations: decoded.annotations,
    finalizers: decoded.finalizers,
    managedFields: managedFields ?? recordUpdate(undefined, view, [], { manager: ctx.manager, apiVersion: apiVersionOf(k) }),
    generation: 1,
    deletionTimestamp: null,
  };
  const resourceVersion = ctx.dryRun
    ? ''
    : await writeObjectMeta(ctx.db, { uid: stored.uid, projectId: metaScope(k, ctx), kind: kindKey(k), name: stored.name, meta });
  return compose(k, stored, { ...meta, resourceVersion });
}

const sameEntries = (a: ManagedFieldsEntry[], b: ManagedFieldsEntry[]) =>
  isDeepStrictEqual(
    a.map(({ time: _t, ...rest }) => rest),
    b.map(({ time: _t, ...rest }) => rest),
  );

/**
 * Writes `decoded` over the current object (PUT, or the result of a patch): preconditions
 * (resourceVersion, uid: 409), immutable fields (422 "field is immutable"), the spec through the
 * kind's update, labels through its relabel, and the metadata with a new resource version. An
 * update that changes nothing writes nothing and keeps the resource version.
 */
async function writeOver(
  k: KindDeclaration,
  ctx: RequestContext,
  current: { stored: StoredObject; meta: ObjectMeta; object: KubeObject },
  decoded: DecodedObject,
  managedFields: ManagedFieldsEntry[] | undefined,
): Promise<KubeObject> {
  const name = current.stored.name;
  const subject = { ...subjectOf(k), name };
  if (decoded.metadata.name !== undefined && decoded.metadata.name !== name) {
    throw badRequest(`the name of the object (${decoded.metadata.name}) does not match the name on the URL (${name})`);
  }
  if (decoded.metadata.resourceVersion && decoded.metadata.resourceVersion !== current.meta.resourceVersion) {
    throw conflict(subject, 'the object has been modified; please apply your changes to the latest version and try again');
  }
  if (decoded.metadata.uid && decoded.metadata.uid !== current.stored.uid) {
    throw conflict(subject, `Precondition failed: UID in precondition: ${decoded.metadata.uid}, UID in object meta: ${current.stored.uid}`);
  }
  const causes: Cause[] = [];
  for (const f of k.immutable) {
    const next = f.value(decoded.spec);
    if (next === undefined || next === null) continue;
    const was = f.value(current.stored.spec);
    if (!isDeepStrictEqual(next, was))
      causes.push({ reason: 'FieldValueInvalid', field: f.path, message: `Invalid value: ${JSON.stringify(next)}: field is immutable` });
  }
  const deleting = deletionOf(k, current.stored, current.meta) !== undefined;
  const added = decoded.finalizers.filter((f) => !current.meta.finalizers.includes(f));
  if (deleting && added.length) {
    causes.push({
      reason: 'FieldValueForbidden',
      field: 'metadata.finalizers',
      message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
    });
  }
  if (causes.length) throw invalid(subject, causes);
  const namespace = current.stored.namespace ?? current.meta.namespace;
  const storageCtx = inNamespace(k, ctx, namespace);
  const specChanged = k.storage.update !== undefined && (await k.storage.update(storageCtx, current.stored, decoded.spec, { dryRun: ctx.dryRun })).changed;
  const labelsChanged = !isDeepStrictEqual(decoded.labels, current.meta.labels);
  if (labelsChanged && k.storage.relabel && !ctx.dryRun) await k.storage.relabel(storageCtx, name, decoded.labels);
  const nextManaged =
    managedFields ??
    recordUpdate(
      managedView(current.object),
      { metadata: { labels: decoded.labels, annotations: decoded.annotations }, spec: decoded.spec },
      current.meta.managedFields,
      {
        manager: ctx.manager,
        apiVersion: apiVersionOf(k),
      },
    );
  const meta = {
    namespace,
    labels: decoded.labels,
    annotations: decoded.annotations,
    finalizers: decoded.finalizers,
    managedFields: nextManaged,
    generation: current.meta.generation + (specChanged ? 1 : 0),
    deletionTimestamp: current.meta.deletionTimestamp,
  };
  const unchanged =
    !specChanged &&
    !labelsChanged &&
    isDeepStrictEqual(meta.annotations, current.meta.annotations) &&
    isDeepStrictEqual(meta.finalizers, current.meta.finalizers) &&
    sameEntries(meta.managedFields, current.meta.managedFields);
  if (unchanged) return current.object;
  const stored = specChanged && !ctx.dryRun ? ((await k.storage.get(storageCtx, name)) ?? current.stored) : current.stored;
  const resourceVersion = ctx.dryRun
    ? current.meta.resourceVersion
    : await writeObjectMeta(ctx.db, { uid: stored.uid, projectId: metaScope(k, ctx), kind: kindKey(k), name, meta });
  const written = compose(k, specChanged && ctx.dryRun ? { ...stored, spec: { ...stored.spec, ...decoded.spec } } : stored, { ...meta, resourceVersion });
  // The last finalizer of a held deletion removed: the domain's deletion goes on now.
  if (meta.deletionTimestamp && meta.finalizers.length === 0)
    return (await proceedWithDeletion(k, ctx, { ...current, stored, meta: { ...meta, resourceVersion } })) ?? written;
  return written;
}

/** PUT: the whole object. */
export async function updateObject(k: KindDeclaration, ctx: RequestContext, namespace: string | undefined, name: string, body: unknown): Promise<KubeObject> {
  const current = await currentOf(k, ctx, namespace, name);
  if (!current) throw notFound({ ...subjectOf(k), name });
  return writeOver(k, ctx, current, decodeObject(k, body, ctx, name), undefined);
}

export const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
] as const;
export type PatchType = (typeof PATCH_TYPES)[number];

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/**
 * A strategic merge patch as a merge patch: every list of these kinds is atomic (no patch merge
 * keys in their schema), where the two agree; the directives (`$patch`, `$retainKeys`,
 * `$setElementOrder/…`, `$deleteFromPrimitiveList/…`) are dropped.
 */
function withoutDirectives(patch: unknown): unknown {
  if (Array.isArray(patch)) return patch.map(withoutDirectives);
  if (typeof patch !== 'object' || patch === null) return patch;
  return Object.fromEntries(
    Object.entries(patch)
      .filter(([key]) => !key.startsWith('$'))
      .map(([key, value]) => [key, withoutDirectives(value)]),
  );
}

function parsePatchBody(type: PatchType, body: Buffer): unknown {
  const text = body.toString('utf8');
  try {
    return type === 'application/apply-patch+yaml' ? yaml.load(text) : JSON.parse(text);
  } catch (e) {
    throw badRequest(
      `the patch is not valid ${type === 'application/apply-patch+yaml' ? 'YAML' : 'JSON'}: ${e instanceof Error ? e.message.split('\n')[0] : ''}`,
    );
  }
}

/** PATCH: merge, JSON, strategic (as merge) or server-side apply (which creates the object when it does not exist). */
export async function patchObject(
  k: KindDeclaration,
  ctx: RequestContext,
  namespace: string | undefined,
  name: string,
  type: PatchType,
  body: Buffer,
  options: { force: boolean },
): Promise<{ object: KubeObject; created: boolean }> {
  const patch = parsePatchBody(type, body);
  const current = await currentOf(k, ctx, namespace, name);
  if (type === 'application/apply-patch+yaml') {
    const config = decodeObject(k, patch, ctx, name);
    if (!config.metadata.name) config.metadata.name = name;
    const configView = { metadata: { labels: config.labels, annotations: config.annotations }, spec: config.spec };
    const applyOptions = { manager: ctx.manager, force: options.force, apiVersion: apiVersionOf(k) };
    if (!current) {
      if (config.metadata.name !== name) throw badRequest(`the name of the object (${config.metadata.name}) does not match the name on the URL (${name})`);
      const { managedFields } = apply(undefined, [], configView, applyOptions);
      return { object: await createObject(k, ctx, namespace, config, managedFields), created: true };
    }
    const merged = apply(managedView(current.object), current.meta.managedFields, configView, applyOptions);
    const decoded: DecodedObject = {
      metadata: { ...config.metadata, resourceVersion: config.metadata.resourceVersion },
      labels: merged.object.metadata?.labels ?? {},
      annotations: merged.object.metadata?.annotations ?? {},
      finalizers: config.metadata.finalizers ?? current.meta.finalizers,
      spec: (merged.object.spec ?? {}) as Record<string, unknown>,
    };
    // The merged spec is validated as any write is (a field the apply removed may be required).
    const checked = decodeObject(
      k,
      { metadata: { labels: decoded.labels, annotations: decoded.annotations }, spec: decoded.spec },
      { fieldValidation: 'Ignore', warnings: [] },
      name,
    );
    return { object: await writeOver(k, ctx, current, { ...decoded, spec: checked.spec }, merged.managedFields), created: false };
  }
  if (!current) throw notFound({ ...subjectOf(k), name });
  let patched: unknown;
  if (type === 'application/json-patch+json') {
    if (!Array.isArray(patch)) throw badRequest('a JSON patch is an array of operations');
    try {
      patched = jsonPatch.applyPatch(structuredClone(current.object), patch as Operation[], true, false).newDocument;
    } catch (e) {
      throw new KubeError(422, 'Invalid', `the JSON patch could not be applied: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
    }
  } else {
    patched = mergePatch(current.object, type === 'application/strategic-merge-patch+json' ? withoutDirectives(patch) : patch);
  }
  return { object: await writeOver(k, ctx, current, decodeObject(k, patched, ctx, name), undefined), created: false };
}

/**
 * PUT or PATCH of the status subresource, for a kind whose storage lets someone but the system
 * write status (`storage.updateStatus`: an operator deciding a quota increase request). The new
 * status is the body's (PUT) or the current object's with the patch applied (merge, strategic as
 * merge, JSON patch); a stale `metadata.resourceVersion` is a 409; spec and metadata are not
 * written. Server-side apply of status is not served (415 names what is).
 */
export async function updateStatusObject(
  k: KindDeclaration,
  ctx: RequestContext,
  namespace: string | undefined,
  name: string,
  type: PatchType | 'PUT',
  body: Buffer,
): Promise<KubeObject> {
  const updateStatus = k.storage.updateStatus;
  if (!updateStatus) throw new KubeError(405, 'MethodNotAllowed', `${subjectOf(k).resource} "${name}" status is written by the system`);
  if (type === 'application/apply-patch+yaml') {
    throw new KubeError(
      415,
      'UnsupportedMediaType',
      'server-side apply is not served on the status subresource - accepted media types include: application/merge-patch+json, application/json-patch+json, application/strategic-merge-patch+json, and PUT of the object',
    );
  }
  const current = await currentOf(k, ctx, namespace, name);
  if (!current) throw notFound({ ...subjectOf(k), name });
  const patch = type === 'PUT' ? parsePatchBody('application/merge-patch+json', body) : parsePatchBody(type, body);
  let next: unknown;
  if (type === 'PUT') next = patch;
  else if (type === 'application/json-patch+json') {
    if (!Array.isArray(patch)) throw badRequest('a JSON patch is an array of operations');
    try {
      next = jsonPatch.applyPatch(structuredClone(current.object), patch as Operation[], true, false).newDocument;
    } catch (e) {
      throw new KubeError(422, 'Invalid', `the JSON patch could not be applied: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
    }
  } else next = mergePatch(current.object, type === 'application/strategic-merge-patch+json' ? withoutDirectives(patch) : patch);
  const parsed = z
    .object({ metadata: z.object({ resourceVersion: z.string().optional() }).optional(), status: z.record(z.string(), z.unknown()).optional() })
    .safeParse(next);
  if (!parsed.success || !parsed.data.status) throw badRequest('the object has no status to write');
  const expected = type === 'PUT' ? parsed.data.metadata?.resourceVersion : undefined;
  if (expected && expected !== current.object.metadata.resourceVersion) {
    throw conflict({ ...subjectOf(k), name }, 'the object has been modified; please apply your changes to the latest version and try again');
  }
  const scoped = inNamespace(k, ctx, namespace);
  const { changed } = await updateStatus(scoped, current.stored, parsed.data.status, { dryRun: ctx.dryRun });
  if (!changed) return current.object;
  if (ctx.dryRun) return { ...current.object, status: { ...current.object.status, ...parsed.data.status } };
  // A status written is a change of the object: a new resource version.
  const meta = { ...current.meta, namespace: current.stored.namespace ?? current.meta.namespace };
  await writeObjectMeta(ctx.db, { uid: current.stored.uid, projectId: metaScope(k, ctx), kind: kindKey(k), name, meta });
  return getObject(k, ctx, namespace, name);
}

const deleteOptions = z.object({
  preconditions: z.object({ uid: z.string().nullable().optional(), resourceVersion: z.string().nullable().optional() }).nullable().optional(),
  dryRun: z.array(z.string()).optional(),
  propagationPolicy: z.string().optional(),
  gracePeriodSeconds: z.number().optional(),
});

/** DeleteOptions of a DELETE's body (preconditions, dryRun), when there is one. */
export function readDeleteOptions(body: Buffer) {
  if (body.length === 0) return {};
  try {
    return deleteOptions.parse(JSON.parse(body.toString('utf8')));
  } catch (e) {
    throw badRequest(`the DeleteOptions are not valid: ${e instanceof ZodError ? e.issues[0]?.message : 'not JSON'}`);
  }
}

/**
 * What an object shows of its deletion: when it was asked for (held by the API's finalizers, or
 * under way in the domain) and the finalizers still holding it (the clients', then the system's).
 */
function deletionOf(k: KindDeclaration, stored: StoredObject, meta: ObjectMeta): { timestamp: Date; finalizers: string[] } | undefined {
  const inDomain = stored.deletionRequestedAt ?? null;
  const timestamp = meta.deletionTimestamp ?? inDomain;
  if (!timestamp) return undefined;
  return { timestamp, finalizers: [...meta.finalizers, ...(inDomain && k.finalizer ? [k.finalizer] : [])] };
}

/**
 * The domain's deletion of an object no finalizer holds any more: the kind's storage deletes it
 * (or starts a deletion that takes time). Answers the object while it still exists (its deletion
 * in progress), undefined once it is gone (its metadata forgotten).
 */
async function proceedWithDeletion(
  k: KindDeclaration,
  ctx: RequestContext,
  current: { stored: StoredObject; meta: ObjectMeta },
): Promise<KubeObject | undefined> {
  const name = current.stored.name;
  if (!k.storage.delete) {
    throw new KubeError(405, 'MethodNotAllowed', `${subjectOf(k).resource} are removed by the system; they cannot be deleted`, {
      kind: k.plural,
      group: k.group,
    });
  }
  const storageCtx = inNamespace(k, ctx, current.stored.namespace ?? current.meta.namespace);
  await k.storage.delete(storageCtx, name, { dryRun: ctx.dryRun });
  if (ctx.dryRun) {
    // The decision ran and was rolled back: the object as the deletion would leave it.
    return k.finalizer ? compose(k, { ...current.stored, deletionRequestedAt: current.stored.deletionRequestedAt ?? new Date() }, current.meta) : undefined;
  }
  const after = await k.storage.get(storageCtx, name);
  if (!after || after.uid !== current.stored.uid) {
    await deleteObjectMeta(ctx.db, current.stored.uid);
    return undefined;
  }
  // Still there: its metadata is marked as being deleted (forgotten once the domain is done: forgetFinishedDeletions).
  if (current.meta.deletionTimestamp) return compose(k, after, current.meta);
  const meta = { ...current.meta, deletionTimestamp: after.deletionRequestedAt ?? new Date() };
  const resourceVersion = await writeObjectMeta(ctx.db, { uid: after.uid, projectId: metaScope(k, ctx), kind: kindKey(k), name, meta });
  return compose(k, after, { ...meta, resourceVersion });
}

/**
 * DELETE with preconditions. Finalizers set through the API hold it: the object is kept with
 * `deletionTimestamp` until an update removes the last one. Otherwise the domain deletes it: the
 * answer is the object as it was when it is gone at once, and the object with its
 * `deletionTimestamp` and the kind's finalizer while the domain's deletion takes time.
 */
export async function deleteObject(
  k: KindDeclaration,
  ctx: RequestContext,
  namespace: string | undefined,
  name: string,
  preconditions: { uid?: string | null; resourceVersion?: string | null } = {},
): Promise<{ object: KubeObject; gone: boolean }> {
  const current = await currentOf(k, ctx, namespace, name);
  const subject = { ...subjectOf(k), name };
  if (!current) throw notFound(subject);
  if (preconditions.uid && preconditions.uid !== current.stored.uid) {
    throw conflict(subject, `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${current.stored.uid}`);
  }
  if (preconditions.resourceVersion && preconditions.resourceVersion !== current.meta.resourceVersion) {
    throw conflict(
      subject,
      `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${current.meta.resourceVersion}`,
    );
  }
  if (current.meta.finalizers.length > 0) {
    if (current.meta.deletionTimestamp) return { object: current.object, gone: false };
    const meta = { ...current.meta, deletionTimestamp: new Date() };
    const resourceVersion = ctx.dryRun
      ? current.meta.resourceVersion
      : await writeObjectMeta(ctx.db, { uid: current.stored.uid, projectId: metaScope(k, ctx), kind: kindKey(k), name, meta });
    return { object: compose(k, current.stored, { ...meta, resourceVersion }), gone: false };
  }
  const inProgress = await proceedWithDeletion(k, ctx, current);
  return inProgress ? { object: inProgress, gone: false } : { object: current.object, gone: true };
}
