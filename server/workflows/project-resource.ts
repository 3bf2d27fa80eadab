import { z } from 'zod';
import { resourceOutput, timestamp } from '@/lib/rest-outputs';
import type { ProjectRef } from '@/server/tenancy/projects';
import type { DeletionStatus } from './project-deletion';

/**
 * A project as REST v1 shows it: its phase and, while it is being deleted, what is left and which
 * object waits on which dependency (attempts, next attempt, last error).
 */
export function projectResource(project: Pick<ProjectRef, 'id' | 'slug' | 'name' | 'description' | 'organizationSlug'>, status: DeletionStatus) {
  return {
    apiVersion: 'v1',
    kind: 'Project',
    metadata: { name: project.slug, uid: project.id, organization: project.organizationSlug },
    spec: { displayName: project.name, description: project.description },
    status: {
      phase: status.phase,
      ...(status.phase === 'Deleting'
        ? {
            deletion: {
              requestedAt: status.requestedAt,
              requestedBy: status.requestedBy,
              passes: status.passes,
              nextPassAt: status.nextPassAt,
              remaining: status.remaining,
              waitingOn: status.blockers.map((b) => ({
                kind: b.objectKind,
                name: b.objectName,
                dependency: b.waitingOn,
                status: b.status,
                attempts: b.attempts,
                nextAttemptAt: b.nextAttemptAt,
                lastError: b.lastError,
                since: b.since,
              })),
            },
          }
        : {}),
    },
  };
}

/** What `projectResource` answers (the project routes' declared output). */
export const projectOutput = resourceOutput('v1', 'Project', {
  metadata: { name: z.string(), uid: z.uuid(), organization: z.string() },
  spec: { displayName: z.string(), description: z.string() },
  status: {
    phase: z.enum(['Active', 'Deleting']),
    deletion: z
      .object({
        requestedAt: timestamp.nullable(),
        requestedBy: z.string().nullable(),
        passes: z.number().int().nonnegative(),
        nextPassAt: timestamp.nullable(),
        remaining: z.record(z.string(), z.number().int().nonnegative()).describe('objects of each kind still to release'),
        waitingOn: z.array(
          z.object({
            kind: z.string(),
            name: z.string(),
            dependency: z.string(),
            status: z.string(),
            attempts: z.number().int().nonnegative(),
            nextAttemptAt: timestamp.nullable(),
            lastError: z.string().nullable(),
            since: timestamp,
          }),
        ),
      })
      .optional()
      .describe('while Deleting'),
  },
});
