/**
 * `RETURNING` columns that notify live views (server/live) of fleet changes. Placed in the
 * statement that makes the change, they fire only for rows really written, cost no extra round
 * trip, and reach listeners at commit (never for a rolled-back change). Payloads are ids and the
 * owning project; capacity belongs to no project (operators only).
 */
import { sql } from 'drizzle-orm';
import { machineAllocations, machineCapacity, machines, providerOperations } from '@/db/schema/fleet';
import { notifyExpression } from '@/server/changes/notify';

export const notifyMachine = notifyExpression('machine', sql`${machines.id}`, sql`${machines.projectId}`);

export const notifyCapacity = notifyExpression('capacity', sql`${machineCapacity.id}`, null);

export const notifyAllocation = notifyExpression(
  'allocation',
  sql`${machineAllocations.id}`,
  sql`(select m.project_id from machines m where m.id = ${machineAllocations.machineId})`,
);

export const notifyOperation = notifyExpression(
  'operation',
  sql`${providerOperations.id}`,
  sql`(select m.project_id from machines m where m.id = ${providerOperations.machineId})`,
);
