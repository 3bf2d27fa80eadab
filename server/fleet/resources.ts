import { z } from 'zod';
import { rawTimestamp } from '@/db/client';
import { listOutput, resourceOutput, timestamp } from '@/lib/rest-outputs';
import type { MachineView } from './machines';
import type { approvalQueue, CapacityView } from './operator';
import { machinePhases } from './phases';
import { machineCreateInput } from './schemas';

export const METAL_API_VERSION = 'metal.datumapis.com/v1alpha1';

/** REST body: `{ metadata: { name }, spec: { class, profile, location, interfaces, desiredPower } }`. */
export const machineResourceInput = z.strictObject({
  apiVersion: z.string().optional(),
  kind: z.literal('Machine').optional(),
  metadata: z.strictObject({ name: machineCreateInput.shape.name }),
  spec: machineCreateInput.omit({ name: true }),
});

export function machineResource(m: MachineView) {
  return {
    apiVersion: METAL_API_VERSION,
    kind: 'Machine',
    metadata: { name: m.name, uid: m.id, creationTimestamp: rawTimestamp(m.createdAt) },
    spec: {
      class: m.class,
      profile: m.profile,
      location: m.location,
      desiredPower: m.desiredPower,
      interfaces: m.interfaces.map(({ network, families, addressClasses }) => ({ network, families, addressClasses })),
    },
    status: {
      phase: m.phase,
      reason: m.phaseReason,
      allocation: m.allocationId ? { bindingId: m.allocationId, deviceRef: m.deviceRef, epoch: m.epoch, status: m.allocationStatus } : null,
      addresses: m.interfaces.flatMap((i) => i.addresses),
      lastOperation: m.lastOperation,
    },
  };
}

type QueueRow = Awaited<ReturnType<typeof approvalQueue>>[number];

/**
 * A machine request in the operators' approval queue: the Machine with its project (operators see
 * every project's) and how much free capacity matches it now.
 */
export function machineRequestResource(r: QueueRow) {
  return {
    apiVersion: METAL_API_VERSION,
    kind: 'Machine',
    metadata: { name: r.name, project: r.project, uid: r.id, creationTimestamp: rawTimestamp(r.createdAt) },
    spec: { class: r.class, profile: r.profile, location: r.location },
    status: { phase: 'AwaitingApproval', requestedBy: r.createdBy, freeCapacity: r.freeCapacity },
  };
}

/** MachineCapacity, named by its immutable device reference. */
export function capacityResource(c: CapacityView) {
  return {
    apiVersion: METAL_API_VERSION,
    kind: 'MachineCapacity',
    metadata: { name: c.deviceRef, uid: c.id },
    spec: { deviceRef: c.deviceRef, class: c.class, location: c.location },
    status: {
      state: c.state,
      reason: c.stateReason,
      health: c.health,
      available: c.available,
      observedAt: rawTimestamp(c.observedAt),
      assetEpoch: Number(c.assetEpoch),
      boundTo: c.machine ? { project: c.project, name: c.machine } : null,
      updatedAt: rawTimestamp(c.updatedAt),
    },
  };
}

const operatorReason = z.string().trim().max(500);

/** Body of `…/machines/{name}/reject`: the reason the tenant will read. */
export const machineRejectInput = z.strictObject({ reason: operatorReason.min(1, 'a reason is required') });

/**
 * Body of `…/machines/{name}/release`: a normal release (verified cleanup) or, with `force`, ending
 * the binding without the provider (the capacity is quarantined); a force release needs a reason.
 */
export const machineReleaseInput = z
  .strictObject({ reason: operatorReason.default(''), force: z.boolean().default(false) })
  .refine((b) => !b.force || b.reason.length > 0, { path: ['reason'], message: 'a reason is required for a force release' });

/** Body of `…/machines/{name}/cancel`: an optional reason, audited with the cancel. */
export const machineCancelInput = z.strictObject({ reason: operatorReason.default('') });

/** Body of the capacity actions (quarantine, return, retire): an optional reason. */
export const capacityActionInput = z.strictObject({ reason: operatorReason.default('') });

/**
 * Body of `…/machinecapacities/{name}/return`: the device is cleaned by the provider again and
 * verified before it is Available; with `force`, it is Available at once without the provider,
 * which needs a reason (audited).
 */
export const capacityReturnInput = z
  .strictObject({ reason: operatorReason.default(''), force: z.boolean().default(false) })
  .refine((b) => !b.force || b.reason.length > 0, { path: ['reason'], message: 'a reason is required to force a return to the pool' });

// ---- What the routes answer (the routes' declared outputs) --------------------------------------

export const machineOutput = resourceOutput(METAL_API_VERSION, 'Machine', {
  metadata: { name: z.string(), uid: z.uuid(), creationTimestamp: timestamp },
  spec: {
    class: z.string(),
    profile: z.string(),
    location: z.string(),
    desiredPower: z.string(),
    interfaces: z.array(z.object({ network: z.string(), families: z.array(z.enum(['IPv4', 'IPv6'])), addressClasses: z.number().int() })),
  },
  status: {
    phase: z.enum(machinePhases),
    reason: z.string().nullable(),
    allocation: z.object({ bindingId: z.uuid(), deviceRef: z.string().nullable(), epoch: z.number().int().nullable(), status: z.unknown() }).nullable(),
    addresses: z.array(z.string()),
    lastOperation: z
      .object({ id: z.uuid(), kind: z.string(), state: z.string(), attempts: z.number().int(), lastError: z.string().nullable() })
      .nullable()
      .describe('the newest provider operation'),
  },
});
export const machineListOutput = listOutput('MachineList', machineOutput);

export const machineRequestListOutput = listOutput(
  'MachineList',
  resourceOutput(METAL_API_VERSION, 'Machine', {
    metadata: { name: z.string(), project: z.string(), uid: z.uuid(), creationTimestamp: timestamp },
    spec: { class: z.string(), profile: z.string(), location: z.string() },
    status: { phase: z.literal('AwaitingApproval'), requestedBy: z.string(), freeCapacity: z.number().int().nonnegative() },
  }),
);

export const capacityOutput = resourceOutput(METAL_API_VERSION, 'MachineCapacity', {
  metadata: { name: z.string(), uid: z.uuid() },
  spec: { deviceRef: z.string(), class: z.string(), location: z.string() },
  status: {
    state: z.enum(['Available', 'Bound', 'Cleaning', 'Quarantined', 'Retired']),
    reason: z.string().nullable(),
    health: z.string(),
    available: z.boolean(),
    observedAt: timestamp,
    assetEpoch: z.number().int(),
    boundTo: z.object({ project: z.string().nullable(), name: z.string() }).nullable(),
    updatedAt: timestamp,
  },
});
export const capacityListOutput = listOutput('MachineCapacityList', capacityOutput);
