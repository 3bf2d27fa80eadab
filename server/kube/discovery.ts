import { verbsOf, type KindDeclaration } from './declare';

/**
 * Discovery of a control plane, from the declared kinds: the legacy documents (`/api`,
 * `/api/v1`, `/apis`, `/apis/{group}`, `/apis/{group}/{version}`) and aggregated discovery
 * (`apidiscovery.k8s.io/v2`, which clients since Kubernetes 1.26 ask for first on `/api` and
 * `/apis`).
 */

export const AGGREGATED_DISCOVERY_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

export interface CoreResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames: string[];
}

/** The core group's resources: namespaces only. */
export const coreResources: CoreResource[] = [
  { name: 'namespaces', singularName: 'namespace', namespaced: false, kind: 'Namespace', verbs: ['create', 'delete', 'get', 'list'], shortNames: ['ns'] },
];

/** The groups of the kinds, each with its versions and kinds, in declaration order. */
export function groupsOf(kinds: readonly KindDeclaration[]): { name: string; versions: { version: string; kinds: KindDeclaration[] }[] }[] {
  const groups: { name: string; versions: { version: string; kinds: KindDeclaration[] }[] }[] = [];
  for (const k of kinds) {
    let g = groups.find((x) => x.name === k.group);
    if (!g) groups.push((g = { name: k.group, versions: [] }));
    let v = g.versions.find((x) => x.version === k.version);
    if (!v) g.versions.push((v = { version: k.version, kinds: [] }));
    v.kinds.push(k);
  }
  return groups;
}

export function apiVersions() {
  return { kind: 'APIVersions', apiVersion: 'v1', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }] };
}

export function coreResourceList() {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: 'v1',
    resources: coreResources.map((r) => ({ ...r, storageVersionHash: '' })),
  };
}

function apiGroup(g: ReturnType<typeof groupsOf>[number]) {
  const versions = g.versions.map((v) => ({ groupVersion: `${g.name}/${v.version}`, version: v.version }));
  return { name: g.name, versions, preferredVersion: versions[0] };
}

export function apiGroupList(kinds: readonly KindDeclaration[]) {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groupsOf(kinds).map(apiGroup) };
}

export function apiGroupOf(kinds: readonly KindDeclaration[], group: string) {
  const g = groupsOf(kinds).find((x) => x.name === group);
  return g ? { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(g) } : undefined;
}

export function resourceList(kinds: readonly KindDeclaration[], group: string, version: string) {
  const v = groupsOf(kinds)
    .find((x) => x.name === group)
    ?.versions.find((x) => x.version === version);
  if (!v) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: `${group}/${version}`,
    resources: v.kinds.flatMap((k) => [
      {
        name: k.plural,
        singularName: k.singular,
        namespaced: k.namespaced,
        kind: k.kind,
        verbs: verbsOf(k),
        shortNames: k.shortNames,
        categories: k.categories,
      },
      { name: `${k.plural}/status`, singularName: '', namespaced: k.namespaced, kind: k.kind, verbs: ['get'] },
    ]),
  };
}

/** Aggregated discovery of `/apis` (the declared groups) or `/api` (the core group). */
export function aggregatedDiscovery(kinds: readonly KindDeclaration[], which: 'apis' | 'api') {
  const items =
    which === 'api'
      ? [
          {
            metadata: { name: '', creationTimestamp: null },
            versions: [
              {
                version: 'v1',
                resources: coreResources.map((r) => ({
                  resource: r.name,
                  responseKind: { group: '', version: 'v1', kind: r.kind },
                  scope: r.namespaced ? 'Namespaced' : 'Cluster',
                  singularResource: r.singularName,
                  verbs: r.verbs,
                  shortNames: r.shortNames,
                })),
                freshness: 'Current',
              },
            ],
          },
        ]
      : groupsOf(kinds).map((g) => ({
          metadata: { name: g.name, creationTimestamp: null },
          versions: g.versions.map((v) => ({
            version: v.version,
            resources: v.kinds.map((k) => ({
              resource: k.plural,
              responseKind: { group: k.group, version: k.version, kind: k.kind },
              scope: k.namespaced ? 'Namespaced' : 'Cluster',
              singularResource: k.singular,
              verbs: verbsOf(k),
              shortNames: k.shortNames,
              categories: k.categories,
              subresources: [{ subresource: 'status', responseKind: { group: k.group, version: k.version, kind: k.kind }, verbs: ['get'] }],
            })),
            freshness: 'Current',
          })),
        }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items };
}
