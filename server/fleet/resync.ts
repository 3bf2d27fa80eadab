import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '@/db/client';
import { query } from '@/db/query';
import { liveJobExists } from '@/server/jobs/enqueue';
import { wakeCapacity } from './capacity-return';
import { wakeMachine } from './machines';

/**
 * Machines whose desired state differs from their phase: a release asked for and not finished, or
 * a request still on its way (Pending, Allocating, Bound, Installing). AwaitingApproval and Failed
 * wait for a person; Ready and Released are settled.
 */
const UNSETTLED_MACHINE = sql`m.phase <> 'Released' and (m.deletion_requested_at is not null or m.phase in ('Pending', 'Allocating', 'Bound', 'Installing'))`;

const idRow = z.object({ id: z.string() });

/**
 * The fleet's resync, as Kubernetes controllers resync: every machine whose desired state differs
 * from its phase, and every device being returned to the pool, that has no job that can still run
 * gets its reconciler enqueued. Every change enqueues its follow-up in its own transaction, so this
 * finds nothing in normal operation; it is the safety net for a job lost with a database failover or
 * given up after its attempts, so that an acknowledged release, cancel or request takes effect
 * without a process restart. The reconcilers are level-triggered: an extra run is a no-op.
 * Returns how many reconcilers it enqueued.
 */
export async function resyncFleet(db: Db): Promise<{ machines: number; capacity: number }> {
  return db.transaction(async (tx) => {
    const machineIds = await query(
      tx,
      sql`select m.id from machines m where ${UNSETTLED_MACHINE} and not ${liveJobExists(sql`'machine:' || m.id`)} order by m.id`,
      idRow,
    );
    for (const { id } of machineIds) await wakeMachine(tx, id);
    const capacityIds = await query(
      tx,
      sql`select c.id from machine_capacity c
          where c.state = 'Cleaning'
            and not exists (select 1 from machine_allocations a where a.capacity_id = c.id and a.status <> 'Released')
            and not ${liveJobExists(sql`'capacity:' || c.id`)}
          order by c.id`,
      idRow,
    );
    for (const { id } of capacityIds) await wakeCapacity(tx, id);
    return { machines: machineIds.length, capacity: capacityIds.length };
  });
}
