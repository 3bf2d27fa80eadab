import { z } from 'zod';
import type { MachineView } from './machines';
import { machineCreateInput } from './schemas';

export const METAL_API_VERSION = 'metal.datumapis.com/v1alpha1';

/** REST body: `{ metadata: { name }, spec: { class, profile, location, interfaces, desiredPower } }`. */
export const machineResourceInput = z.object({
  apiVersion: z.string().optional(),
  kind: z.literal('Machine').optional(),
  metadata: z.object({ name: machineCreateInput.shape.name }),
  spec: machineCreateInput.omit({ name: true }),
});

export function machineResource(m: MachineView) {
  return {
    apiVersion: METAL_API_VERSION,
    kind: 'Machine',
    metadata: { name: m.name, uid: m.id, creationTimestamp: m.createdAt },
    spec: { class: m.class, profile: m.profile, location: m.location, desiredPower: m.desiredPower, interfaces: m.interfaces.map(({ network, families, addressClasses }) => ({ network, families, addressClasses })) },
    status: {
      phase: m.phase,
      reason: m.phaseReason,
      allocation: m.allocationId ? { bindingId: m.allocationId, deviceRef: m.deviceRef, epoch: m.epoch, status: m.allocationStatus } : null,
      addresses: m.interfaces.flatMap((i) => i.addresses),
      lastOperation: m.lastOperation,
    },
  };
}
