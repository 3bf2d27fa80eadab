import { z } from 'zod';
import { createTRPCRouter, platformProcedure, projectProcedure } from '../init';
import { listEvents } from '@/server/audit/events';

const filter = z.strictObject({
  action: z.string().max(100).optional(),
  objectType: z.string().max(50).optional(),
  actor: z.string().max(200).optional(),
  search: z.string().max(200).optional(),
  cursor: z.number().int().positive().optional(),
  /** Sent by the console's infinite query with every page (tRPC adds it); pages only go forward. */
  direction: z.enum(['forward', 'backward']).optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

export const auditRouter = createTRPCRouter({
  /** Everything, for operators and admins. */
  list: platformProcedure('operator', 'admin')
    .input(filter.extend({ projectId: z.uuid().optional() }))
    .query(({ ctx, input }) => listEvents(ctx.db, input)),
  /** One project's timeline, for its members. */
  project: projectProcedure('viewer')
    .input(filter)
    .query(({ ctx, input }) => listEvents(ctx.db, { ...input, projectId: ctx.project.id })),
});
