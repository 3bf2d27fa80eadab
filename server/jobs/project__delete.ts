import { z } from 'zod';
import { runDeletionPass, scheduleNextPass } from '@/server/tenancy/project-deletion';
import type { TaskContext } from './types';

const payload = z.object({ projectId: z.uuid() });
/** Passes in one run while each one still finds work it can do now (e.g. objects that raced the phase change). */
const MAX_PASSES = 3;

/**
 * Deletes a project that is in phase Deleting (enqueued by the request, keyed `project-delete:<id>`
 * in a queue of its own): passes release what they can; when something must wait — a machine whose
 * cleanup waits on the provider — the next pass is scheduled with capped exponential backoff. A
 * machine of the project reaching Released enqueues this job at once (a trigger: server/tenancy/sql/project_deletion_wake_on_release.sql).
 */
export async function projectDelete(raw: unknown, { db }: TaskContext) {
  const { projectId } = payload.parse(raw);
  for (let pass = 1; ; pass++) {
    const result = await runDeletionPass(db, projectId);
    if (result.type !== 'waiting') return;
    const onlyRaced = result.blockers.every((b) => b.objectKind === 'Project');
    if (onlyRaced && pass < MAX_PASSES) continue;
    await scheduleNextPass(db, projectId, result.blockers);
    return;
  }
}
