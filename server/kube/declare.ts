import type { z } from 'zod';
import type { Db } from '@/db/client';
import type { ModuleName } from '@/lib/env-schema';
import type { Actor } from '@/server/audit/events';
import type { ProjectRole } from '@/server/tenancy/roles';

/**
 * How a kind is declared for the Kubernetes API (one declaration per kind, in server/kube/kinds/):
 * its names, scope, the schema of its spec and status (validation, OpenAPI, `kubectl explain`),
 * its immutable fields, printer columns, field selectors, and the domain functions it stores
 * through — the shape of k8s.io/apiserver's `rest.Storage` with its strategy. The API server
 * (server.ts), discovery (discovery.ts), OpenAPI (openapi.ts) and Table output (table.ts) read
 * nothing else. Metadata (namespace, labels, annotations, finalizers, managed fields, generation,
 * resource version) is the API's own (store.ts): a storage sees names, specs and statuses only.
 */

/** What a storage call gets: the project, who acts, and the database. */
export interface KindContext {
  db: Db;
  /** The project of the control plane (empty on the platform plane). */
  projectId: string;
  /** Its slug, as the REST shapes name it (`consumerRef.name`). */
  projectSlug?: string;
  actor: Actor;
  /**
   * The namespace addressed, for a storage whose domain keeps namespaces (`namespacedStorage`):
   * the object's on get, create, update and delete (`default` when the path names none).
   */
  namespace?: string;
}

/** Where a page of a list starts and how long it is (a storage that pages in its database). */
export interface ListPage {
  /** One namespace's objects; undefined: every namespace's. */
  namespace: string | undefined;
  /** The page starts after this key, in (namespace, name) order. */
  after?: { namespace: string; name: string };
  limit: number;
}

/** A domain object as the Kubernetes API sees it, before its metadata is added. */
export interface StoredObject {
  /** The domain's id: `metadata.uid`. */
  uid: string;
  /** The domain's namespace (a `namespacedStorage`'s objects); else the API's metadata says. */
  namespace?: string;
  name: string;
  /** When it was made; null where the domain does not keep it. */
  createdAt: Date | null;
  spec: Record<string, unknown>;
  status: Record<string, unknown>;
  /**
   * When the domain's deletion of it was asked for, while that deletion takes time (a machine
   * being cleaned up): the API shows `metadata.deletionTimestamp` and the kind's `finalizer` until
   * the storage no longer returns the object.
   */
  deletionRequestedAt?: Date | null;
}

/** What a create is given: the name, the validated spec and the object's labels. */
export interface CreateInput<Spec> {
  name: string;
  spec: Spec;
  labels: Record<string, string>;
}

/** A field that cannot change once set: its path and how two specs are compared there (absent in the new spec: unchanged, as a default fills it). */
export interface ImmutableField {
  path: string;
  value: (spec: Record<string, unknown>) => unknown;
}

/** A column of `kubectl get` (Table output), as a CRD's additionalPrinterColumns declares it. */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  description: string;
  /** What the cell shows, read from the whole object. */
  value: (object: { spec: Record<string, unknown>; status: Record<string, unknown> }) => unknown;
  /** 0: always shown; 1: with `-o wide` only. */
  priority?: 0 | 1;
}

export interface KindDeclaration<Spec extends Record<string, unknown> = Record<string, unknown>> {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  namespaced: boolean;
  description: string;
  /** The spec a client sends and gets (unknown fields found against it: fieldValidation). */
  spec: z.ZodType<Spec>;
  /** The status the system writes (the status subresource: read-only to users). */
  status: z.ZodType;
  immutable: ImmutableField[];
  printerColumns: PrinterColumn[];
  /** Field selectors beyond metadata.name and metadata.namespace: `spec.network`, `status.phase`. */
  fieldSelectors: Record<string, (object: { spec: Record<string, unknown>; status: Record<string, unknown> }) => string | undefined>;
  /** Where a domain error's field lies in the object (`network` → `spec.network`); default: `name` is metadata.name, anything else is under spec. */
  fieldPath?: (domainField: string) => string;
  /** The module whose switch (MERIDIAN_DISABLED_MODULES) takes the kind out of the API; unset: its group's first label, when that names a module. */
  module?: ModuleName;
  /**
   * The finalizer the system holds while the domain's deletion of an object takes time
   * (`metal.datumapis.com/cleanup`): shown in `metadata.finalizers` with `deletionTimestamp`, never
   * stored, and not removable by clients (it goes when the domain has finished).
   */
  finalizer?: string;
  /** Served for reading only (`get`, `list`): what the system alone writes, such as a cluster's pod leases. */
  readOnly?: boolean;
  /**
   * Where the kind is served: a project's control plane (default) or the platform control plane
   * (operators; platform-wide objects, no project: server.ts PLATFORM_PLANE).
   */
  plane?: 'project' | 'platform';
  /** The role to read (viewer unless said) and to write (editor unless said); `operator`: an operator token only. */
  readRole?: ProjectRole | 'operator';
  writeRole?: ProjectRole | 'operator';
  /** The role to write the status subresource (`storage.updateStatus`); default: writeRole. */
  statusWriteRole?: ProjectRole | 'operator';
  /** The domain names its objects (an id): a create needs no `metadata.name` and answers the name given. */
  generatedName?: boolean;
  storage: {
    /**
     * True when the domain's table carries the namespace (names unique per namespace): the storage
     * reads `ctx.namespace` and answers each object's `namespace`, and `list` honours its page (in
     * (namespace, name) order, done in SQL). Otherwise the API keeps the namespace in its metadata,
     * and `list` returns every object of the project, by name (the API filters and pages).
     */
    namespacedStorage?: boolean;
    get(ctx: KindContext, name: string): Promise<StoredObject | undefined>;
    list(ctx: KindContext, page: ListPage): Promise<StoredObject[]>;
    /**
     * Creates it (or, with `dryRun`, decides everything and writes nothing). A name already taken
     * throws the domain's coded error. Absent: the system makes these objects (no `create` verb).
     */
    create?(ctx: KindContext, input: CreateInput<Spec>, options: { dryRun: boolean }): Promise<StoredObject>;
    /** Writes what may change of the spec (immutable fields are already checked); absent: nothing of the spec can change. */
    update?(ctx: KindContext, current: StoredObject, next: Spec, options: { dryRun: boolean }): Promise<{ changed: boolean }>;
    /**
     * Writes what may change of the status (the status subresource's PUT and PATCH), where a
     * caller holding `statusWriteRole` decides it rather than the system: an operator approving a
     * quota increase request. Absent: status is the system's alone (405).
     */
    updateStatus?(ctx: KindContext, current: StoredObject, next: Record<string, unknown>, options: { dryRun: boolean }): Promise<{ changed: boolean }>;
    /** Tells the domain the object's labels changed, where the domain keeps them too (an IP claim's labels feed its quota). */
    relabel?(ctx: KindContext, name: string, labels: Record<string, string>): Promise<void>;
    /**
     * Deletes it, or starts a deletion that takes time (the object is then still returned, with
     * `deletionRequestedAt`). Asked again while in progress: nothing more happens.
     */
    delete?(ctx: KindContext, name: string, options: { dryRun: boolean }): Promise<void>;
  };
}

/** Declares a kind (typed by its spec). */
export function declareKind<Spec extends Record<string, unknown>>(declaration: KindDeclaration<Spec>): KindDeclaration {
  return declaration as unknown as KindDeclaration;
}

/** The verbs of a kind, as discovery names them: every kind's metadata can be updated and patched. */
export const verbsOf = (k: KindDeclaration) =>
  k.readOnly ? ['get', 'list'] : [...(k.storage.create ? ['create'] : []), ...(k.storage.delete ? ['delete'] : []), 'get', 'list', 'patch', 'update'];

/** The project-plane kinds, or the platform plane's. */
export const kindsOfPlane = (kinds: readonly KindDeclaration[], plane: 'project' | 'platform') => kinds.filter((k) => (k.plane ?? 'project') === plane);

/** `ipam.miloapis.com/v1alpha1`. */
export const apiVersionOf = (k: Pick<KindDeclaration, 'group' | 'version'>) => (k.group ? `${k.group}/${k.version}` : k.version);
/** The kind's key in the metadata table: `ipam.miloapis.com/IPClaim`. */
export const kindKey = (k: Pick<KindDeclaration, 'group' | 'kind'>) => `${k.group}/${k.kind}`;
