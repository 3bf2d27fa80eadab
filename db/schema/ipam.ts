import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  customType,
  foreignKey,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { projects, users } from './tenancy';

/** PostgreSQL `cidr`: network address + prefix length, host bits zero (PostgreSQL enforces it). */
export const cidr = customType<{ data: string; driverData: string }>({ dataType: () => 'cidr' });

/** A tenant VPC. Its address space is its root pools. */
export const networks = pgTable(
  'networks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** The Kubernetes API's namespace (REST v1 and the console work in `default`); names are unique per namespace. */
    namespace: text('namespace').notNull().default('default'),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('networks_project_namespace_name').on(t.projectId, t.namespace, t.name)],
);

/**
 * An address pool: a network's root CIDR (`parentPoolId` null) or a child carved from a parent
 * (the carve is a `PoolCarve` allocation in the parent). Roots of one project never overlap
 * (exclusion constraint in the migrations).
 *
 * `capacity` and `allocated` are maintained in the transaction of every change, as exact decimals
 * (IPv6 counts overflow 64 bits): capacity = the allocatable addresses, i.e. the CIDR's addresses
 * minus the leading/trailing reservations (a CHECK holds capacity + reservations = the CIDR's size);
 * allocated = sum of the sizes of the pool's live allocations. The API's figures derive from
 * these: its `capacity` is the CIDR's size, `reserved` the two reservations, `available` capacity
 * minus allocated.
 */
export const ipPools = pgTable(
  'ip_pools',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    networkId: uuid('network_id')
      .notNull()
      .references(() => networks.id, { onDelete: 'cascade' }),
    parentPoolId: uuid('parent_pool_id'),
    name: text('name').notNull(),
    /** `Root`, `Child`, or `NodeBlock` (a node's block of pod addresses, CNI path). */
    kind: text('kind').notNull().default('Root'),
    cidr: cidr('cidr').notNull(),
    family: smallint('family').notNull(),
    minPrefixLength: smallint('min_prefix_length').notNull(),
    maxPrefixLength: smallint('max_prefix_length').notNull(),
    defaultPrefixLength: smallint('default_prefix_length').notNull(),
    /** `FirstFit` or `BestFit`. */
    strategy: text('strategy').notNull().default('FirstFit'),
    /**
     * A child pool that claims and pod blocks naming no pool may use (before the root pools). Child
     * pools are carved for a purpose: without this mark, only a claim that names one lands in it.
     */
    isDefault: boolean('is_default').notNull().default(false),
    /** Addresses held back at the start and the end of the CIDR (exact: an IPv6 reservation may exceed 2^64). */
    reserveLeading: numeric('reserve_leading', { precision: 40, scale: 0 }).notNull().default('0'),
    reserveTrailing: numeric('reserve_trailing', { precision: 40, scale: 0 }).notNull().default('0'),
    capacity: numeric('capacity', { precision: 40, scale: 0 }).notNull(),
    allocated: numeric('allocated', { precision: 40, scale: 0 }).notNull().default('0'),
    /** Live allocation count (claims, carves, pod addresses) for lists, maintained like `allocated`. */
    allocationCount: integer('allocation_count').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('ip_pools_network_name').on(t.networkId, t.name),
    index('ip_pools_parent').on(t.parentPoolId),
    index('ip_pools_project').on(t.projectId),
    // A network's root pools (their families), read by every CNI ADD and claim.
    index('ip_pools_network_roots')
      .on(t.networkId, t.family)
      .where(sql`parent_pool_id is null`),
    // The target of the allocations' one foreign key (pool, project, network): see ipAllocations.
    uniqueIndex('ip_pools_id_scope').on(t.id, t.projectId, t.networkId),
    // A child pool or node block goes with its parent.
    foreignKey({ name: 'ip_pools_parent_fk', columns: [t.parentPoolId], foreignColumns: [t.id] }).onDelete('cascade'),
    check('ip_pools_counters_sane', sql`${t.allocated} >= 0 and ${t.allocated} <= ${t.capacity}`),
    check('ip_pools_family', sql`${t.family} in (4, 6)`),
    // Every address of the CIDR is capacity or reserved, so "capacity = allocated + reserved + free"
    // cannot drift whatever writes a pool row (the CNI's node blocks are written in SQL).
    check(
      'ip_pools_reservations_fit',
      sql`${t.reserveLeading} >= 0 and ${t.reserveTrailing} >= 0 and ${t.capacity} + ${t.reserveLeading} + ${t.reserveTrailing} = trunc(power(2::numeric, (case ${t.family} when 4 then 32 else 128 end) - masklen(${t.cidr})))`,
    ),
    // Root pools of one project never overlap: an exclusion constraint, written in migration 0004
    // (drizzle cannot declare one), as are those of ip_allocations and ip_free_blocks.
  ],
);

/**
 * The buddy allocator's free list: the canonical set of maximal aligned free blocks of each pool.
 * Allocation takes one block and writes back the remainder; release merges buddies. Choosing a
 * block is an index probe, so its cost does not grow with fragmentation.
 */
export const ipFreeBlocks = pgTable(
  'ip_free_blocks',
  {
    poolId: uuid('pool_id')
      .notNull()
      .references(() => ipPools.id, { onDelete: 'cascade' }),
    cidr: cidr('cidr').notNull(),
    prefixLength: smallint('prefix_length').notNull(),
  },
  (t) => [uniqueIndex('ip_free_blocks_pk').on(t.poolId, t.cidr), index('ip_free_blocks_by_size').on(t.poolId, t.prefixLength, t.cidr)],
);

/**
 * A tenant's request for a block. `name` is unique per project and namespace and is the idempotency key; `specHash`
 * fingerprints the spec so a replay with a different spec is a conflict.
 */
export const ipClaims = pgTable(
  'ip_claims',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    networkId: uuid('network_id')
      .notNull()
      .references(() => networks.id, { onDelete: 'cascade' }),
    poolId: uuid('pool_id')
      .notNull()
      .references(() => ipPools.id, { onDelete: 'cascade' }),
    /** The Kubernetes API's namespace (REST v1 and the console work in `default`); the claim's network is in the same namespace. */
    namespace: text('namespace').notNull().default('default'),
    name: text('name').notNull(),
    family: smallint('family').notNull(),
    prefixLength: smallint('prefix_length').notNull(),
    /** The exact CIDR asked for, when the claim pinned one. */
    requestedCidr: cidr('requested_cidr'),
    /** `Delete` or `Retain`. */
    reclaimPolicy: text('reclaim_policy').notNull().default('Delete'),
    /** How long a retained allocation is kept after the claim is deleted. */
    retentionSeconds: integer('retention_seconds').notNull().default(604800),
    ownerRef: jsonb('owner_ref'),
    labels: jsonb('labels')
      .$type<Record<string, string>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    specHash: text('spec_hash').notNull(),
    allocationId: uuid('allocation_id').notNull(),
    allocatedCidr: cidr('allocated_cidr').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('ip_claims_project_namespace_name').on(t.projectId, t.namespace, t.name),
    index('ip_claims_network').on(t.networkId, t.createdAt),
    index('ip_claims_pool').on(t.poolId),
  ],
);

/**
 * Every carved range, in exactly one pool: `Claim`, `Reservation`, `PoolCarve` (a child pool or
 * node block) or `PodAddress`. An exclusion constraint (migrations) makes overlapping rows in one
 * pool impossible; since a child pool is a carve in its parent, uniqueness holds across the tree.
 * A retained allocation outlives its claim (`claimId` null, `retainedName` and `retainedUntil` set).
 */
export const ipAllocations = pgTable(
  'ip_allocations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    poolId: uuid('pool_id').notNull(),
    projectId: uuid('project_id').notNull(),
    networkId: uuid('network_id').notNull(),
    cidr: cidr('cidr').notNull(),
    kind: text('kind').notNull(),
    claimId: uuid('claim_id'),
    /** For `PoolCarve`: the child pool this range became. */
    childPoolId: uuid('child_pool_id'),
    /** Number of addresses, exact. */
    size: numeric('size', { precision: 40, scale: 0 }).notNull(),
    /** The deleted claim's name, `<namespace>.<name>` outside `default` (server/ipam/claims.ts qualifiedName). */
    retainedName: text('retained_name'),
    retainedUntil: timestamp('retained_until', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // One foreign key for the pool and the project and network it belongs to: one check per row
    // inserted instead of three (a CNI ADD inserts one per pod address), and the three always agree.
    // Deleting a project or network deletes its pools, and with them their allocations.
    foreignKey({
      name: 'ip_allocations_pool_scope_fk',
      columns: [t.poolId, t.projectId, t.networkId],
      foreignColumns: [ipPools.id, ipPools.projectId, ipPools.networkId],
    }).onDelete('cascade'),
    index('ip_allocations_pool_cidr').on(t.poolId, t.cidr),
    // Pod addresses and carves have no claim: only claimed rows are indexed.
    index('ip_allocations_claim')
      .on(t.claimId)
      .where(sql`${t.claimId} is not null`),
    uniqueIndex('ip_allocations_retained_name')
      .on(t.projectId, t.retainedName)
      .where(sql`${t.retainedName} is not null`),
  ],
);
