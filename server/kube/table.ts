import type { KindDeclaration } from './declare';
import type { KubeObject } from './objects';

/**
 * Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`): the declared printer
 * columns of a kind between NAME and AGE, as kube-apiserver serves a CRD's
 * additionalPrinterColumns. `includeObject` says what each row carries (PartialObjectMetadata by
 * default, the whole object, or nothing).
 */

/** Whether the Accept header asks for a Table first. */
export function wantsTable(accept: string | null): boolean {
  if (!accept) return false;
  const first = accept.split(',')[0].replace(/\s+/g, '');
  return first.includes('as=Table') && first.includes('g=meta.k8s.io');
}

/** How long ago, as kubectl shows ages: 45s, 5m30s, 3h, 2d4h, 400d. */
export function humanAge(since: Date, now = new Date()): string {
  const s = Math.max(0, Math.floor((now.getTime() - since.getTime()) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (d < 365 * 2) return `${d}d`;
  return `${Math.floor(d / 365)}y${d % 365}d`;
}

function rowObject(o: { apiVersion: string; kind: string; metadata: Record<string, unknown> }, include: string) {
  if (include === 'None') return undefined;
  if (include === 'Object') return o;
  const { managedFields: _managed, ...metadata } = o.metadata;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata };
}

export interface TableColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** A Table of objects of `k` (or, with `columns` and `cells`, of anything shaped like one: namespaces). */
export function table(
  rows: KubeObject[] | { apiVersion: string; kind: string; metadata: Record<string, unknown> }[],
  options: {
    columns: TableColumn[];
    cells: (o: never) => unknown[];
    includeObject: string;
    resourceVersion: string;
    continue?: string;
    remainingItemCount?: number;
  },
) {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: {
      resourceVersion: options.resourceVersion,
      ...(options.continue ? { continue: options.continue } : {}),
      ...(options.remainingItemCount !== undefined ? { remainingItemCount: options.remainingItemCount } : {}),
    },
    columnDefinitions: options.columns,
    rows: rows.map((o) => ({ cells: options.cells(o as never), object: rowObject(o, options.includeObject) })),
  };
}

const nameColumn: TableColumn = { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 };
const ageColumn: TableColumn = { name: 'Age', type: 'date', format: '', description: 'When the object was created.', priority: 0 };

/** The columns of a kind: NAME, its printer columns, AGE. */
export function kindColumns(k: KindDeclaration): TableColumn[] {
  return [
    nameColumn,
    ...k.printerColumns.map((c) => ({ name: c.name, type: c.type, format: '', description: c.description, priority: c.priority ?? 0 })),
    ageColumn,
  ];
}

export function kindCells(k: KindDeclaration): (o: KubeObject) => unknown[] {
  return (o) => [
    o.metadata.name,
    ...k.printerColumns.map((c) => c.value(o) ?? null),
    o.metadata.creationTimestamp ? humanAge(new Date(o.metadata.creationTimestamp)) : '<unknown>',
  ];
}

export const namespaceColumns: TableColumn[] = [
  nameColumn,
  { name: 'Status', type: 'string', format: '', description: 'The phase of the namespace.', priority: 0 },
  ageColumn,
];
