import { and, asc, eq, inArray, isNotNull, isNull, ne, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { kubeNamespaces, kubeObjects } from '@/db/schema';
import { DomainError, pgCode } from '@/server/errors';

/**
 * The Kubernetes API's own metadata of domain objects (db/schema/kube.ts): namespace, labels,
 * annotations, finalizers, managed fields, generation and resource version, one row per object
 * written through the API. An object without a row is in `default` with empty metadata and the
 * resource version `1`.
 */

export interface ObjectMeta {
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  finalizers: string[];
  managedFields: ManagedFieldsEntry[];
  generation: number;
  resourceVersion: string;
  /** Set when a DELETE is held by the object's finalizers (the domain's deletion waits for them). */
  deletionTimestamp: Date | null;
}

/** One entry of `metadata.managedFields` (server-side apply), as Kubernetes writes it. */
export const managedFieldsEntry = z.object({
  manager: z.string(),
  operation: z.enum(['Apply', 'Update']),
  apiVersion: z.string(),
  time: z.string(),
  fieldsType: z.literal('FieldsV1'),
  fieldsV1: z.record(z.string(), z.unknown()),
  subresource: z.string().optional(),
});
export type ManagedFieldsEntry = z.infer<typeof managedFieldsEntry>;

const stringMap = z.record(z.string(), z.string());

/** An object never written through the API. */
export const DEFAULT_META: ObjectMeta = {
  namespace: 'default',
  labels: {},
  annotations: {},
  finalizers: [],
  managedFields: [],
  generation: 1,
  resourceVersion: '1',
  deletionTimestamp: null,
};

const metaColumns = {
  uid: kubeObjects.uid,
  name: kubeObjects.name,
  namespace: kubeObjects.namespace,
  labels: kubeObjects.labels,
  annotations: kubeObjects.annotations,
  finalizers: kubeObjects.finalizers,
  managedFields: kubeObjects.managedFields,
  generation: kubeObjects.generation,
  resourceVersion: kubeObjects.resourceVersion,
  deletionTimestamp: kubeObjects.deletionTimestamp,
};

const metaRow = z.object({
  uid: z.string(),
  name: z.string(),
  namespace: z.string(),
  labels: stringMap,
  annotations: stringMap,
  finalizers: z.array(z.string()),
  managedFields: z.array(managedFieldsEntry),
  generation: z.number(),
  resourceVersion: z.number(),
  deletionTimestamp: z.date().nullable(),
});

function toMeta(row: z.infer<typeof metaRow>): ObjectMeta {
  return { ...row, resourceVersion: String(row.resourceVersion) };
}

/** The rows of a project (or, null, the platform's: objects of the platform control plane). */
const scopeIs = (projectId: string | null) => (projectId === null ? isNull(kubeObjects.projectId) : eq(kubeObjects.projectId, projectId));

/**
 * The metadata of the objects `uids` of one kind, by uid (absent: never written through the API).
 * `projectId` null is the platform plane, whose operators also see projects' objects (the queue of
 * every project's increase requests): it reads each object's metadata wherever it was written (a
 * uid is one object's, whichever plane wrote it).
 */
export async function objectMetas(db: DbOrTx, projectId: string | null, kind: string, uids: string[]): Promise<Map<string, ObjectMeta & { name: string }>> {
  if (uids.length === 0) return new Map();
  const rows = await db
    .select(metaColumns)
    .from(kubeObjects)
    .where(and(projectId === null ? undefined : scopeIs(projectId), eq(kubeObjects.kind, kind), inArray(kubeObjects.uid, uids)));
  return new Map(rows.map((r) => metaRow.parse(r)).map((r) => [r.uid, { ...toMeta(r), name: r.name }]));
}

/**
 * Writes an object's metadata with a new resource version (returned). A row left by an earlier
 * object of the same name and namespace (deleted through REST v1 or the console) is replaced.
 */
export async function writeObjectMeta(
  db: DbOrTx,
  row: { uid: string; projectId: string | null; kind: string; name: string; meta: Omit<ObjectMeta, 'resourceVersion'> },
): Promise<string> {
  const { meta } = row;
  await db
    .delete(kubeObjects)
    .where(
      and(
        scopeIs(row.projectId),
        eq(kubeObjects.kind, row.kind),
        eq(kubeObjects.namespace, meta.namespace),
        eq(kubeObjects.name, row.name),
        ne(kubeObjects.uid, row.uid),
      ),
    );
  const values = {
    namespace: meta.namespace,
    name: row.name,
    labels: meta.labels,
    annotations: meta.annotations,
    finalizers: meta.finalizers,
    managedFields: meta.managedFields,
    generation: meta.generation,
    deletionTimestamp: meta.deletionTimestamp,
    resourceVersion: sql`nextval('kube_resource_version')`,
  };
  const [written] = await db
    .insert(kubeObjects)
    .values({ uid: row.uid, projectId: row.projectId, kind: row.kind, ...values })
    .onConflictDoUpdate({ target: kubeObjects.uid, set: values })
    .returning({ resourceVersion: kubeObjects.resourceVersion });
  return String(written.resourceVersion);
}

/** Forgets an object's metadata (the object is deleted). */
export async function deleteObjectMeta(db: DbOrTx, uid: string): Promise<void> {
  await db.delete(kubeObjects).where(eq(kubeObjects.uid, uid));
}

/** The objects of a kind whose deletion through the API is held or under way (few: those being deleted now). */
export async function objectsBeingDeleted(db: DbOrTx, projectId: string | null, kind: string): Promise<{ uid: string; name: string; namespace: string }[]> {
  return db
    .select({ uid: kubeObjects.uid, name: kubeObjects.name, namespace: kubeObjects.namespace })
    .from(kubeObjects)
    .where(
      and(
        projectId === null ? isNull(kubeObjects.projectId) : eq(kubeObjects.projectId, projectId),
        eq(kubeObjects.kind, kind),
        isNotNull(kubeObjects.deletionTimestamp),
      ),
    );
}

/** The store's resource version now (a list's `metadata.resourceVersion`). */
export async function currentResourceVersion(db: DbOrTx): Promise<string> {
  const [row] = await db.execute(sql`select last_value from kube_resource_version`);
  return String(z.object({ last_value: z.coerce.number() }).parse(row).last_value);
}

// ---- Namespaces ---------------------------------------------------------------------------------

export interface NamespaceView {
  name: string;
  uid: string | null;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  resourceVersion: string;
  createdAt: Date | null;
}

/** Every project has `default`, without a row. */
export const DEFAULT_NAMESPACE = 'default';

const namespaceRow = z.object({
  name: z.string(),
  uid: z.string(),
  labels: stringMap,
  annotations: stringMap,
  resourceVersion: z.number(),
  createdAt: z.date(),
});

const namespaceColumns = {
  name: kubeNamespaces.name,
  uid: kubeNamespaces.uid,
  labels: kubeNamespaces.labels,
  annotations: kubeNamespaces.annotations,
  resourceVersion: kubeNamespaces.resourceVersion,
  createdAt: kubeNamespaces.createdAt,
};

function namespaceView(r: z.infer<typeof namespaceRow>): NamespaceView {
  return { ...r, resourceVersion: String(r.resourceVersion) };
}

const defaultNamespace = (projectCreatedAt: Date | null): NamespaceView => ({
  name: DEFAULT_NAMESPACE,
  uid: null,
  labels: {},
  annotations: {},
  resourceVersion: '1',
  createdAt: projectCreatedAt,
});

/** The project's namespaces by name, `default` among them. */
export async function listNamespaces(db: DbOrTx, projectId: string): Promise<NamespaceView[]> {
  const rows = await db.select(namespaceColumns).from(kubeNamespaces).where(eq(kubeNamespaces.projectId, projectId)).orderBy(asc(kubeNamespaces.name));
  return [defaultNamespace(null), ...rows.map((r) => namespaceView(namespaceRow.parse(r)))].sort((a, b) => a.name.localeCompare(b.name));
}

/** A namespace of the project, or undefined. */
export async function getNamespace(db: DbOrTx, projectId: string, name: string): Promise<NamespaceView | undefined> {
  if (name === DEFAULT_NAMESPACE) return defaultNamespace(null);
  const [row] = await db
    .select(namespaceColumns)
    .from(kubeNamespaces)
    .where(and(eq(kubeNamespaces.projectId, projectId), eq(kubeNamespaces.name, name)));
  return row ? namespaceView(namespaceRow.parse(row)) : undefined;
}

/** Creates a namespace (Conflict when it exists). */
export async function createNamespace(
  db: DbOrTx,
  projectId: string,
  input: { name: string; labels: Record<string, string>; annotations: Record<string, string> },
): Promise<NamespaceView> {
  if (input.name === DEFAULT_NAMESPACE) throw new DomainError('Conflict', `namespace "${input.name}" already exists`, 'name');
  try {
    const [row] = await db
      .insert(kubeNamespaces)
      .values({ projectId, name: input.name, labels: input.labels, annotations: input.annotations })
      .returning(namespaceColumns);
    return namespaceView(namespaceRow.parse(row));
  } catch (e) {
    if (pgCode(e) === '23505') throw new DomainError('Conflict', `namespace "${input.name}" already exists`, 'name');
    throw e;
  }
}

/** Deletes an empty namespace (Conflict while objects live in it; `default` cannot go). */
export async function deleteNamespace(db: DbOrTx, projectId: string, name: string): Promise<void> {
  if (name === DEFAULT_NAMESPACE) throw new DomainError('Forbidden', 'namespace "default" cannot be deleted');
  const [inUse] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(kubeObjects)
    .where(and(eq(kubeObjects.projectId, projectId), eq(kubeObjects.namespace, name)));
  if (z.number().parse(inUse.n) > 0) throw new DomainError('Conflict', `namespace "${name}" still holds ${inUse.n} object(s); delete them first`, 'name');
  const deleted = await db
    .delete(kubeNamespaces)
    .where(and(eq(kubeNamespaces.projectId, projectId), eq(kubeNamespaces.name, name)))
    .returning({ name: kubeNamespaces.name });
  if (deleted.length === 0) throw new DomainError('NotFound', `namespace "${name}" not found`, 'name');
}
