import { createTRPCRouter, authedProcedure, projectProcedure } from '../init';
import { listProjectsForUser } from '@/server/tenancy/projects';

export const projectsRouter = createTRPCRouter({
  list: authedProcedure.query(({ ctx }) => listProjectsForUser(ctx.db, ctx.user)),
  get: projectProcedure('viewer').query(({ ctx }) => ({ ...ctx.project, role: ctx.role })),
});
