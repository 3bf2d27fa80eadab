import { z } from 'zod';
import { authedProcedure, createTRPCRouter, noInput, platformProcedure, projectProcedure } from '../init';
import { hasPlatformRole } from '@/server/tenancy/roles';
import { EVENT_CURSOR, auditFilterChoices, listEvents } from '@/server/audit/events';

const filter = z.strictObject({
  action: z.string().max(100).optional(),
  objectType: z.string().max(50).optional(),
  actor: z.string().max(200).optional(),
  search: z.string().max(200).optional(),
  /** Time range, ISO 8601 with an offset (`2026-12-01T00:00:00Z`). */
  since: z.iso
    .datetime({ offset: true })
    .transform((t) => new Date(t))
    .optional(),
  until: z.iso
    .datetime({ offset: true })
    .transform((t) => new Date(t))
    .optional(),
  cursor: z.string().regex(EVENT_CURSOR, 'is not a cursor returned by this list').optional(),
  /** Sent by the console's infinite query with every page (tRPC adds it); pages only go forward. */
  direction: z.enum(['forward', 'backward']).optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

export const auditRouter = createTRPCRouter({
  /** Everything, for operators and admins. */
  list: platformProcedure('operator', 'admin')
    .input(filter.extend({ projectId: z.uuid().optional() }))
    .query(({ ctx, input }) => listEvents(ctx.db, input)),
  /**
   * What the audit log's filters offer: the actions and object kinds that occur (names, not data:
   * any signed-in user), and for operators and admins the projects.
   */
  filterChoices: authedProcedure.input(noInput).query(async ({ ctx }) => {
    const choices = await auditFilterChoices(ctx.db);
    return hasPlatformRole(ctx.session.user, 'operator', 'admin') ? choices : { ...choices, projects: [] };
  }),
  /** One project's timeline, for its members. */
  project: projectProcedure('viewer')
    .input(filter)
    .query(({ ctx, input }) => listEvents(ctx.db, { ...input, projectId: ctx.project.id })),
});
