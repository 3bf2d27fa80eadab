import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { createCluster, deleteCluster, listClusters } from '@/server/cni/clusters';
import { clusterCreateInput } from '@/server/cni/schemas';
import { listLeases } from '@/server/cni/leases';
import { declareKind, ownRow, type KindContext, type StoredObject } from '../declare';
import { clusterName } from './lookup';
import { inRolledBackTransaction } from '../dry-run';

/** The CNI kinds of the Kubernetes API: Cluster and PodLease (ipam.miloapis.com/v1alpha1), over the domain functions REST v1 calls. */

const GROUP = 'ipam.miloapis.com';
const VERSION = 'v1alpha1';

/** Held by a cluster while its deletion (its leases and node blocks released in steps by the worker) is under way. */
const CLUSTER_RELEASE_FINALIZER = 'ipam.miloapis.com/release-leases';

// ---- Cluster ------------------------------------------------------------------------------------

const clusterSpec = z.strictObject({
  network: clusterCreateInput.shape.network.describe('The network its pods and node blocks take addresses from. Immutable.'),
  description: clusterCreateInput.shape.description.describe('What the cluster is for. Immutable.'),
  nodeBlockPrefixV4: clusterCreateInput.shape.nodeBlockPrefixV4.describe('The prefix length of the IPv4 block each node is carved (default 26). Immutable.'),
  nodeBlockPrefixV6: clusterCreateInput.shape.nodeBlockPrefixV6.describe('The prefix length of the IPv6 block each node is carved (default 120). Immutable.'),
});

const clusterStatus = z.object({
  leases: z.number().int().describe('Pod leases held'),
  nodes: z.number().int().describe('Nodes holding leases'),
  blocks: z.number().int().describe('Node blocks carved'),
});

type ClusterRow = Awaited<ReturnType<typeof listClusters>>[number];

function storedCluster(c: ClusterRow): StoredObject {
  return {
    uid: c.id,
    name: c.name,
    createdAt: c.createdAt,
    spec: {
      network: c.network,
      ...(c.description ? { description: c.description } : {}),
      nodeBlockPrefixV4: c.nodeBlockPrefixV4,
      nodeBlockPrefixV6: c.nodeBlockPrefixV6,
    },
    status: { leases: c.leases, nodes: c.nodes, blocks: c.blocks },
    deletionRequestedAt: c.deletionTimestamp,
  };
}

const everyCluster = async ({ db, projectId }: KindContext) => (await listClusters(db, projectId)).map(storedCluster);
const immutableSpec = (path: keyof z.infer<typeof clusterSpec>) => ({ path: `spec.${path}`, value: (spec: Record<string, unknown>) => spec[path] });

/**
 * A Kubernetes cluster whose CNI plugin leases pod addresses from a network. Created here without
 * a token (the cluster-scoped token its nodes use is issued by REST v1 or the console); deleting
 * it releases every lease and node block, in steps the worker finishes for a large cluster.
 */
export const clusterKind = declareKind({
  group: GROUP,
  version: VERSION,
  kind: 'Cluster',
  plural: 'clusters',
  singular: 'cluster',
  shortNames: ['cl'],
  categories: ['meridian', 'cni'],
  namespaced: true,
  description: 'A Kubernetes cluster whose CNI plugin leases pod addresses from a network; deleting it releases its leases and node blocks.',
  spec: clusterSpec,
  status: clusterStatus,
  immutable: [immutableSpec('network'), immutableSpec('description'), immutableSpec('nodeBlockPrefixV4'), immutableSpec('nodeBlockPrefixV6')],
  printerColumns: [
    { name: 'Network', type: 'string', description: 'The network', value: (o) => o.spec.network },
    { name: 'Leases', type: 'integer', description: 'Pod leases held', value: (o) => o.status.leases },
    { name: 'Nodes', type: 'integer', description: 'Nodes holding leases', value: (o) => o.status.nodes },
    { name: 'Blocks', type: 'integer', description: 'Node blocks carved', value: (o) => o.status.blocks, priority: 1 },
  ],
  fieldSelectors: { 'spec.network': (o) => String(o.spec.network) },
  fieldPath: (field) => (field === 'name' || field === 'cluster' ? 'metadata.name' : `spec.${field}`),
  finalizer: CLUSTER_RELEASE_FINALIZER,
  watch: [{ table: 'clusters', object: (r) => ownRow(r), exists: () => true }],
  storage: {
    get: async (ctx, name) => (await everyCluster(ctx)).find((c) => c.name === name),
    list: everyCluster,
    async create({ db, projectId, actor }, { name, spec }, { dryRun }) {
      const create = async (tx: DbOrTx) => {
        await createCluster(tx, projectId, { name, ...spec }, actor);
        const [made] = (await listClusters(tx, projectId)).filter((c) => c.name === name);
        return storedCluster(made);
      };
      return dryRun ? inRolledBackTransaction(db, create) : create(db);
    },
    async delete({ db, projectId, actor }, name, { dryRun }) {
      const remove = (tx: DbOrTx) => deleteCluster(tx, projectId, name, actor);
      await (dryRun ? inRolledBackTransaction(db, remove) : remove(db));
    },
  },
});

// ---- PodLease -----------------------------------------------------------------------------------

const leaseSpec = z.strictObject({
  cluster: z.string().describe('The cluster holding the lease'),
  address: z.string().describe('The pod address'),
  family: z.enum(['IPv4', 'IPv6']).describe('Its family'),
  node: z.string().describe('The node the pod runs on'),
  podNamespace: z.string().nullable().describe("The pod's namespace in its cluster"),
  podName: z.string().nullable().describe("The pod's name"),
  containerId: z.string().describe('The container (sandbox) the CNI plugin was called for'),
  ifname: z.string().describe('The interface in the container'),
  cniNetwork: z.string().describe('The CNI network name'),
});

const leaseStatus = z.object({ checkedAt: z.string().nullable().describe('When the CNI plugin last checked it') });

/** A lease's name: its cluster and address, `k1.10.0.3.7` (`k1.fd00--7` for IPv6: a name holds no colon). */
const leaseName = (cluster: string, address: string) => `${cluster}.${address.replaceAll(':', '-')}`;

type LeaseRow = Awaited<ReturnType<typeof listLeases>>['items'][number];

function storedLease(l: LeaseRow): StoredObject {
  return {
    uid: l.id,
    name: leaseName(l.cluster, l.address),
    createdAt: l.createdAt,
    spec: {
      cluster: l.cluster,
      address: l.address,
      family: l.family === 6 ? 'IPv6' : 'IPv4',
      node: l.node,
      podNamespace: l.podNamespace,
      podName: l.podName,
      containerId: l.containerId,
      ifname: l.ifname,
      cniNetwork: l.cniNetwork,
    },
    status: { checkedAt: l.checkedAt ? l.checkedAt.toISOString() : null },
  };
}

/**
 * A pod's address leased by a cluster's CNI plugin: read-only here (the plugin's ADD and DEL write
 * them; deleting the cluster releases them).
 */
export const podLeaseKind = declareKind({
  group: GROUP,
  version: VERSION,
  kind: 'PodLease',
  plural: 'podleases',
  singular: 'podlease',
  shortNames: ['pl'],
  categories: ['meridian', 'cni'],
  namespaced: true,
  description: "A pod's address leased by a cluster's CNI plugin, named <cluster>.<address>; written by the plugin only.",
  spec: leaseSpec,
  status: leaseStatus,
  immutable: [],
  printerColumns: [
    { name: 'Cluster', type: 'string', description: 'The cluster', value: (o) => o.spec.cluster },
    { name: 'Address', type: 'string', description: 'The pod address', value: (o) => o.spec.address },
    { name: 'Node', type: 'string', description: 'The node', value: (o) => o.spec.node },
    {
      name: 'Pod',
      type: 'string',
      description: 'namespace/name of the pod',
      value: (o) => (o.spec.podName ? `${o.spec.podNamespace ?? ''}/${o.spec.podName}` : ''),
    },
    { name: 'Container', type: 'string', description: 'The container', value: (o) => o.spec.containerId, priority: 1 },
  ],
  fieldSelectors: {
    'spec.cluster': (o) => String(o.spec.cluster),
    'spec.node': (o) => String(o.spec.node),
    'spec.podNamespace': (o) => String(o.spec.podNamespace ?? ''),
  },
  readOnly: true,
  watch: [
    {
      table: 'pod_leases',
      object: async (r, db) => {
        const cluster = r.cluster_id ? await clusterName(db, r.cluster_id) : null;
        return r.project_id && r.id && r.address && cluster
          ? { projectId: r.project_id, uid: r.id, name: leaseName(cluster, r.address.replace(/\/\d+$/, '')) }
          : null;
      },
      exists: () => true,
    },
  ],
  storage: {
    async get({ db, projectId }, name) {
      const dot = name.indexOf('.');
      if (dot <= 0) return undefined;
      const cluster = name.slice(0, dot);
      const address = name.slice(dot + 1);
      // An IPv6 address had its colons written as dashes; an IPv4 one has none.
      const candidates = address.includes('-') ? [address.replaceAll('-', ':')] : [address];
      for (const search of candidates) {
        const { items } = await listLeases(db, projectId, { cluster, search, limit: 10, offset: 0 });
        const found = items.find((l) => leaseName(l.cluster, l.address) === name);
        if (found) return storedLease(found);
      }
      return undefined;
    },
    async list({ db, projectId }) {
      const out: StoredObject[] = [];
      for (let offset: number | null = 0; offset !== null;) {
        const page: Awaited<ReturnType<typeof listLeases>> = await listLeases(db, projectId, { limit: 1000, offset });
        out.push(...page.items.map(storedLease));
        offset = page.nextOffset;
      }
      return out;
    },
  },
});
