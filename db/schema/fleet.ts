import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { projects, users } from './tenancy';

/** A place machines live. Usable only when Ready and exactly one `machines` availability says Available. */
export const locations = pgTable('locations', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull().unique(),
  displayName: text('display_name').notNull(),
  ready: boolean('ready').notNull().default(true),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Availability of a service in a location, as published by the location authority. More than one
 * record for (location, service) is possible on purpose: ambiguity fails closed.
 */
export const serviceAvailability = pgTable(
  'service_availability',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    locationId: uuid('location_id')
      .notNull()
      .references(() => locations.id, { onDelete: 'cascade' }),
    service: text('service').notNull(),
    /** `Available`, `Unavailable` or `Deleting`. */
    status: text('status').notNull(),
    reason: text('reason'),
    observedAt: timestamp('observed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('service_availability_location').on(t.locationId, t.service)],
);

export const machineClasses = pgTable('machine_classes', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull().unique(),
  cores: integer('cores').notNull(),
  memoryGib: integer('memory_gib').notNull(),
  arch: text('arch').notNull(),
  /** Requests for this class wait for an operator's approval. */
  requiresApproval: boolean('requires_approval').notNull().default(false),
});

/** What gets installed: an image pinned by digest (a tag alone is refused). */
export const machineProfiles = pgTable('machine_profiles', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull().unique(),
  imageRef: text('image_ref').notNull(),
  /** `sha256:<64 hex>`, taken from `imageRef`. */
  imageDigest: text('image_digest').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * A provider's machine. `deviceRef` never changes (a trigger refuses updates). `assetEpoch` only
 * grows: each new binding advances it, so work fenced to an older binding cannot touch the asset.
 */
export const machineCapacity = pgTable(
  'machine_capacity',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    deviceRef: text('device_ref').notNull().unique(),
    classId: uuid('class_id')
      .notNull()
      .references(() => machineClasses.id),
    locationId: uuid('location_id')
      .notNull()
      .references(() => locations.id),
    /** `Healthy`, `Degraded` or `Unhealthy`. */
    health: text('health').notNull().default('Healthy'),
    /** The provider's availability evidence and when it was observed. */
    available: boolean('available').notNull().default(true),
    observedAt: timestamp('observed_at', { withTimezone: true }).notNull().defaultNow(),
    /** `Available`, `Bound`, `Cleaning`, `Quarantined` or `Retired`. */
    state: text('state').notNull().default('Available'),
    stateReason: text('state_reason'),
    assetEpoch: bigint('asset_epoch', { mode: 'number' }).notNull().default(0),
    /** Monotonic per capacity: every provider operation carries the next value. */
    fencingSeq: bigint('fencing_seq', { mode: 'number' }).notNull().default(0),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('machine_capacity_pick').on(t.classId, t.locationId, t.state),
    check('machine_capacity_state', sql`${t.state} in ('Available','Bound','Cleaning','Quarantined','Retired')`),
  ],
);

/**
 * A tenant's machine request and its lifecycle (phases in server/fleet/phases.ts). Rows stay after
 * `Released` (their timeline is the machine's history); only live machines hold their name.
 */
export const machines = pgTable(
  'machines',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    classId: uuid('class_id')
      .notNull()
      .references(() => machineClasses.id),
    profileId: uuid('profile_id')
      .notNull()
      .references(() => machineProfiles.id),
    locationId: uuid('location_id')
      .notNull()
      .references(() => locations.id),
    desiredPower: text('desired_power').notNull().default('on'),
    /** Requested interfaces: `[{ network, families, addressClasses }]`, and the IP claims made for them. */
    interfaces: jsonb('interfaces')
      .notNull()
      .default(sql`'[]'::jsonb`),
    phase: text('phase').notNull(),
    phaseReason: text('phase_reason'),
    requiresApproval: boolean('requires_approval').notNull().default(false),
    approvedBy: uuid('approved_by').references(() => users.id, { onDelete: 'set null' }),
    approvedAt: timestamp('approved_at', { withTimezone: true }),
    deletionRequestedAt: timestamp('deletion_requested_at', { withTimezone: true }),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    phaseChangedAt: timestamp('phase_changed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // A name belongs to one live machine at a time; a Released machine keeps its row (its history)
    // but gives the name up, so the same name can be requested again.
    uniqueIndex('machines_live_name')
      .on(t.projectId, t.name)
      .where(sql`${t.phase} <> 'Released'`),
    index('machines_project_name').on(t.projectId, t.name, t.createdAt),
    index('machines_phase').on(t.phase, t.classId, t.locationId, t.createdAt),
  ],
);

/**
 * The binding of a machine to a capacity. Created by the system only; its spec never changes;
 * `Released` is terminal. At most one live binding per capacity and per machine (partial unique
 * indexes), whatever the application does.
 */
export const machineAllocations = pgTable(
  'machine_allocations',
  {
    /** The binding id the provider sees. */
    id: uuid('id').primaryKey().defaultRandom(),
    machineId: uuid('machine_id')
      .notNull()
      .references(() => machines.id, { onDelete: 'cascade' }),
    capacityId: uuid('capacity_id')
      .notNull()
      .references(() => machineCapacity.id),
    epoch: bigint('epoch', { mode: 'number' }).notNull(),
    /** `Preparing`, `Committed`, `Releasing`, `Released`. */
    status: text('status').notNull(),
    releaseReason: text('release_reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    releasedAt: timestamp('released_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('machine_allocations_live_capacity')
      .on(t.capacityId)
      .where(sql`${t.status} <> 'Released'`),
    uniqueIndex('machine_allocations_live_machine')
      .on(t.machineId)
      .where(sql`${t.status} <> 'Released'`),
  ],
);

/** One installation of an image on a binding; a reinstall points at its predecessor. */
export const installations = pgTable('installations', {
  id: uuid('id').primaryKey().defaultRandom(),
  machineId: uuid('machine_id')
    .notNull()
    .references(() => machines.id, { onDelete: 'cascade' }),
  allocationId: uuid('allocation_id')
    .notNull()
    .references(() => machineAllocations.id, { onDelete: 'cascade' }),
  imageDigest: text('image_digest').notNull(),
  predecessorId: uuid('predecessor_id'),
  operationId: text('operation_id').notNull(),
  /** `Pending`, `Succeeded`, `Failed`. */
  status: text('status').notNull().default('Pending'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  completedAt: timestamp('completed_at', { withTimezone: true }),
});

/**
 * Our durable record of a provider operation, written before the call. The id is deterministic
 * (the provider's idempotency key). `Unknown` outcomes are resolved by looking the id up.
 * `machineId` is null for the cleanup that returns quarantined capacity to the pool.
 */
export const providerOperations = pgTable(
  'provider_operations',
  {
    id: text('id').primaryKey(),
    kind: text('kind').notNull(),
    machineId: uuid('machine_id').references(() => machines.id, { onDelete: 'set null' }),
    capacityId: uuid('capacity_id')
      .notNull()
      .references(() => machineCapacity.id),
    deviceRef: text('device_ref').notNull(),
    bindingId: uuid('binding_id').notNull(),
    epoch: bigint('epoch', { mode: 'number' }).notNull(),
    fencingToken: bigint('fencing_token', { mode: 'number' }).notNull(),
    request: jsonb('request').notNull(),
    /** `Admitted`, `Submitted`, `Succeeded`, `Failed`, `Unknown`. */
    state: text('state').notNull().default('Admitted'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    result: jsonb('result'),
    /** An operator's acknowledgement: the operation no longer needs attention, with who said so and why. */
    acknowledgedAt: timestamp('acknowledged_at', { withTimezone: true }),
    acknowledgedBy: text('acknowledged_by'),
    acknowledgement: text('acknowledgement'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('provider_operations_state').on(t.state, t.updatedAt),
    index('provider_operations_machine').on(t.machineId),
    // Later operations on the same device (fencing tokens only grow per capacity) resolve earlier ones.
    index('provider_operations_capacity').on(t.capacityId, t.fencingToken),
  ],
);

/** Per-project fleet settings: when `approvalRequired`, every machine request waits for an operator. */
export const projectFleetSettings = pgTable('project_fleet_settings', {
  projectId: uuid('project_id')
    .primaryKey()
    .references(() => projects.id, { onDelete: 'cascade' }),
  approvalRequired: boolean('approval_required').notNull().default(false),
});
