import { foreignKey, index, pgTable, smallint, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { cidr, ipAllocations, ipPools, networks } from './ipam';
import { projects } from './tenancy';

/** A Kubernetes cluster whose CNI delegates pod addresses to one network of the project. */
export const clusters = pgTable(
  'clusters',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    networkId: uuid('network_id')
      .notNull()
      .references(() => networks.id, { onDelete: 'restrict' }),
    description: text('description').notNull().default(''),
    /** Prefix length of the per-node address blocks carved from the network's pools. */
    nodeBlockPrefixV4: smallint('node_block_prefix_v4').notNull().default(26),
    nodeBlockPrefixV6: smallint('node_block_prefix_v6').notNull().default(120),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * When the cluster's deletion was asked for (its deletionTimestamp): from then on its ADDs and
     * block carves are refused and its blocks go back in batches; the row goes last.
     */
    deletionTimestamp: timestamp('deletion_timestamp', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('clusters_project_name').on(t.projectId, t.name),
    index('clusters_network').on(t.networkId),
    // The target of the leases' foreign key (cluster, project): see podLeases.
    uniqueIndex('clusters_id_project').on(t.id, t.projectId),
  ],
);

/**
 * A node's block of pod addresses: an `ip_pools` row of kind `NodeBlock` (carved from a network
 * pool as a `PoolCarve`). This table says which cluster and node hold it, so ADDs on one node lock
 * only that node's block.
 */
export const nodeBlocks = pgTable(
  'node_blocks',
  {
    poolId: uuid('pool_id')
      .primaryKey()
      .references(() => ipPools.id, { onDelete: 'cascade' }),
    clusterId: uuid('cluster_id')
      .notNull()
      .references(() => clusters.id, { onDelete: 'cascade' }),
    node: text('node').notNull(),
    family: smallint('family').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('node_blocks_cluster_node').on(t.clusterId, t.node, t.family)],
);

/**
 * A pod address lease, keyed by the CNI attachment (cluster, CNI network name, container id,
 * ifname) and family (a dual-stack attachment holds one lease per family). The address is a
 * `PodAddress` allocation inside a node block, so the exclusion constraint guards it too.
 */
export const podLeases = pgTable(
  'pod_leases',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id').notNull(),
    clusterId: uuid('cluster_id').notNull(),
    cniNetwork: text('cni_network').notNull(),
    containerId: text('container_id').notNull(),
    ifname: text('ifname').notNull(),
    family: smallint('family').notNull(),
    /** The node block: the allocation's pool (its foreign key stands for this one: see below). */
    poolId: uuid('pool_id').notNull(),
    allocationId: uuid('allocation_id')
      .notNull()
      .references(() => ipAllocations.id, { onDelete: 'cascade' }),
    address: cidr('address').notNull(),
    podNamespace: text('pod_namespace'),
    podName: text('pod_name'),
    node: text('node').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    checkedAt: timestamp('checked_at', { withTimezone: true }),
  },
  (t) => [
    // Two foreign-key checks per lease (a CNI ADD inserts one per pod address) instead of four: the
    // cluster with its project (which always agree), and the allocation, whose pool is the lease's
    // pool and whose deletion (with its pool's, its project's) deletes the lease.
    foreignKey({ name: 'pod_leases_cluster_scope_fk', columns: [t.clusterId, t.projectId], foreignColumns: [clusters.id, clusters.projectId] }).onDelete(
      'cascade',
    ),
    uniqueIndex('pod_leases_attachment').on(t.clusterId, t.cniNetwork, t.containerId, t.ifname, t.family),
    index('pod_leases_project').on(t.projectId, t.createdAt),
    // Node first: a lease looked up by its attachment key can only use the unique index above,
    // whatever the statistics say (with cluster_id first the planner could scan a cluster's leases).
    index('pod_leases_node_cluster').on(t.node, t.clusterId),
    // Deleting an allocation deletes its lease (the foreign key's cascade) through this.
    index('pod_leases_allocation').on(t.allocationId),
  ],
);
