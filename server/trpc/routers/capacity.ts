import { z } from 'zod';
import { listAlerts } from '@/server/capacity/alerts';
import { objectHistory, objectIdByName, resolveRange } from '@/server/capacity/history';
import { resourceName } from '@/server/ipam/schemas';
import { createTRPCRouter, noInput, platformProcedure, projectProcedure } from '../init';

/** The console's time-range picker: how far back a chart reaches. */
const rangeInput = z.enum(['1h', '24h', '7d', '30d', '90d', '3y']);
const RANGE_FROM: Record<z.infer<typeof rangeInput>, string> = { '1h': '-1h', '24h': '-24h', '7d': '-7d', '30d': '-30d', '90d': '-90d', '3y': '-1096d' };

export const capacityRouter = createTRPCRouter({
  /** A network's (per family), a cluster's or the project's buckets' utilization over a range, with current value and forecast. */
  history: projectProcedure('viewer')
    .input(z.strictObject({ object: z.enum(['network', 'cluster', 'buckets']), name: resourceName.optional(), range: rangeInput.default('24h') }))
    .query(async ({ ctx, input }) => {
      const range = resolveRange({ from: RANGE_FROM[input.range] });
      const projectId = ctx.project.id;
      const span = { from: range.from.toISOString(), to: range.to.toISOString(), step: range.step };
      if (input.object === 'buckets') return { range: span, series: await objectHistory(ctx.db, projectId, projectId, ['bucket'], range) };
      const id = await objectIdByName(ctx.db, projectId, input.object, input.name ?? '');
      const kinds = input.object === 'network' ? ['network'] : ['cluster-pods', 'cluster-blocks'];
      return { range: span, series: await objectHistory(ctx.db, projectId, id, kinds, range) };
    }),
  /** The project's capacity alerts (the console's notification list and banner): firing first. */
  alerts: projectProcedure('viewer')
    .input(z.strictObject({ firingOnly: z.boolean().default(false) }))
    .query(({ ctx, input }) => listAlerts(ctx.db, ctx.project.id, { firingOnly: input.firingOnly, limit: 50 })),
  /** Every project's firing alerts, for operators. */
  operatorAlerts: platformProcedure('operator')
    .input(noInput)
    .query(({ ctx }) => listAlerts(ctx.db, null, { firingOnly: true, limit: 100 })),
});
