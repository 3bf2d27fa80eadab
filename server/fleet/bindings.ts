import { and, asc, eq } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { installations, machineAllocations, machineCapacity, machines } from '@/db/schema/fleet';

/**
 * A project's machine allocations (bindings of its machines to capacity) and installations, as the
 * system made them: history included (released bindings, superseded installations), oldest first.
 */

/** Every allocation of the project's machines, with the machine's name and the device bound. */
export async function listAllocations(db: DbOrTx, projectId: string) {
  return db
    .select({
      id: machineAllocations.id,
      machine: machines.name,
      deviceRef: machineCapacity.deviceRef,
      epoch: machineAllocations.epoch,
      status: machineAllocations.status,
      releaseReason: machineAllocations.releaseReason,
      createdAt: machineAllocations.createdAt,
      releasedAt: machineAllocations.releasedAt,
    })
    .from(machineAllocations)
    .innerJoin(machines, eq(machines.id, machineAllocations.machineId))
    .innerJoin(machineCapacity, eq(machineCapacity.id, machineAllocations.capacityId))
    .where(eq(machines.projectId, projectId))
    .orderBy(asc(machineAllocations.createdAt), asc(machineAllocations.id));
}

/** Every installation on the project's machines, with the machine's name. */
export async function listInstallations(db: DbOrTx, projectId: string) {
  return db
    .select({
      id: installations.id,
      machine: machines.name,
      allocationId: installations.allocationId,
      imageDigest: installations.imageDigest,
      predecessorId: installations.predecessorId,
      operationId: installations.operationId,
      status: installations.status,
      createdAt: installations.createdAt,
      completedAt: installations.completedAt,
    })
    .from(installations)
    .innerJoin(machines, and(eq(machines.id, installations.machineId), eq(machines.projectId, projectId)))
    .orderBy(asc(installations.createdAt), asc(installations.id));
}
