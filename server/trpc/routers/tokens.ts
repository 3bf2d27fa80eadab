import { z } from 'zod';
import { createTRPCRouter, projectProcedure } from '../init';
import { createApiToken, listApiTokens, revokeApiToken } from '@/server/tenancy/tokens';

export const tokensRouter = createTRPCRouter({
  list: projectProcedure('viewer').query(({ ctx }) => listApiTokens(ctx.db, ctx.project.id)),
  create: projectProcedure('owner')
    .input(
      z.object({
        name: z.string().trim().min(1, 'a name is required').max(100),
        cluster: z.string().trim().max(63).optional(),
        role: z.enum(['viewer', 'editor']).default('editor'),
      }),
    )
    .mutation(({ ctx, input }) =>
      ctx.db.transaction((tx) =>
        createApiToken(
          tx,
          { projectId: ctx.project.id, name: input.name, clusterName: input.cluster || null, role: input.role, createdBy: ctx.user.id },
          ctx.actor,
        ),
      ),
    ),
  revoke: projectProcedure('owner')
    .input(z.object({ id: z.uuid() }))
    .mutation(({ ctx, input }) => ctx.db.transaction((tx) => revokeApiToken(tx, ctx.project.id, input.id, ctx.actor))),
});
