import { z } from 'zod';
import { authedProcedure, createTRPCRouter, noInput, platformProcedure, projectOrStaffProcedure, projectProcedure } from '../init';
import { invalid } from '@/server/errors';
import { getDeletionStatus, requestProjectDeletion } from '@/server/workflows/project-deletion';
import { listAllProjects, listProjectsForUser } from '@/server/tenancy/projects';

export const projectsRouter = createTRPCRouter({
  list: authedProcedure.input(noInput).query(({ ctx }) => listProjectsForUser(ctx.db, ctx.user)),
  get: projectProcedure('viewer').query(({ ctx }) => ({ ...ctx.project, role: ctx.role })),
  /** Where the project's deletion stands: what is left, and what waits on which dependency. */
  deletion: projectOrStaffProcedure('viewer', 'operator').query(({ ctx }) => getDeletionStatus(ctx.db, ctx.project.id)),
  /**
   * Deletes the project (owners, platform operators): `confirm` must repeat its slug. Returns at
   * once with phase Deleting; the worker releases everything. Asking again is harmless.
   */
  delete: projectOrStaffProcedure('owner', 'operator')
    .input(z.strictObject({ confirm: z.string().max(63), reason: z.string().trim().max(500).optional() }))
    .mutation(({ ctx, input }) => {
      if (input.confirm !== ctx.project.slug) throw invalid('confirm', `type the project's slug, "${ctx.project.slug}", to confirm`);
      return requestProjectDeletion(ctx.db, ctx.project.id, ctx.actor, input.reason || null);
    }),
  /** Every project with its phase (operators: deletions under way first). */
  admin: createTRPCRouter({
    list: platformProcedure('operator')
      .input(
        z.strictObject({
          search: z.string().trim().max(100).optional(),
          phase: z.enum(['Active', 'Deleting']).optional(),
          limit: z.number().int().min(1).max(200).default(50),
          offset: z.number().int().min(0).default(0),
        }),
      )
      .query(({ ctx, input }) => listAllProjects(ctx.db, input)),
  }),
});
