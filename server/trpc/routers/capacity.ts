import { z } from 'zod';
import { decodeAuditCursor, encodeAuditCursor, networkAuditPage } from '@/server/capacity/address-audit';
import { DEFAULT_ALERT_RULE, listAlertRules, listAlerts, setAlertRule } from '@/server/capacity/alerts';
import { fleetHistory, objectHistory, objectIdByName, resolveRange } from '@/server/capacity/history';
import { createWebhookEndpoint, deleteWebhookEndpoint, listDeliveries, listWebhookEndpoints, webhookSettings } from '@/server/capacity/webhooks';
import { env } from '@/server/env';
import { resourceName } from '@/server/ipam/schemas';
import { createTRPCRouter, noInput, platformProcedure, projectProcedure } from '../init';

/** The console's time-range picker: how far back a chart reaches. */
const rangeInput = z.enum(['1h', '24h', '7d', '30d', '90d', '3y']);
const RANGE_FROM: Record<z.infer<typeof rangeInput>, string> = { '1h': '-1h', '24h': '-24h', '7d': '-7d', '30d': '-30d', '90d': '-90d', '3y': '-1096d' };

const webhookInput = z.strictObject({ name: resourceName, url: z.string().min(1).max(2048) });

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
  /**
   * The thresholds every series of the project uses unless its network or cluster has its own:
   * the project's rule, else the defaults (`isDefault`); and how many objects have rules of their own.
   */
  alertRule: projectProcedure('viewer')
    .input(z.strictObject({}))
    .query(async ({ ctx }) => {
      const rules = await listAlertRules(ctx.db, ctx.project.id);
      const projectRule = rules.find((r) => r.objectId === null);
      const { warningPercent, criticalPercent, forecastDays, hysteresisPercent, enabled } = projectRule ?? DEFAULT_ALERT_RULE;
      return {
        warningPercent,
        criticalPercent,
        forecastDays,
        hysteresisPercent,
        enabled,
        isDefault: !projectRule,
        objectRules: rules.filter((r) => r.objectId !== null).length,
      };
    }),
  /** Sets the project's thresholds (every series without a rule of its own); editors and owners. */
  setAlertRule: projectProcedure('editor')
    .input(
      z.strictObject({
        warningPercent: z.number().min(0).max(100),
        criticalPercent: z.number().min(0).max(100),
        forecastDays: z.int().min(0).max(3650),
        hysteresisPercent: z.number().min(0).max(100),
        enabled: z.boolean(),
      }),
    )
    .mutation(({ ctx, input }) => ctx.db.transaction((tx) => setAlertRule(tx, ctx.project.id, { objectId: null, ...input }, ctx.actor))),
  /** Fleet-wide address utilization per family (the sum over every network), for the operators' overview. */
  fleetHistory: platformProcedure('operator')
    .input(z.strictObject({ range: rangeInput.default('24h') }))
    .query(async ({ ctx, input }) => {
      const range = resolveRange({ from: RANGE_FROM[input.range] });
      return { range: { from: range.from.toISOString(), to: range.to.toISOString(), step: range.step }, series: await fleetHistory(ctx.db, range) };
    }),
  /** Every project's firing alerts, for operators. */
  operatorAlerts: platformProcedure('operator')
    .input(noInput)
    .query(({ ctx }) => listAlerts(ctx.db, null, { firingOnly: true, limit: 100 })),
  /** A page of a network's address audit (rows and every pool's counters and totals, one snapshot). */
  audit: projectProcedure('viewer')
    .input(z.strictObject({ network: resourceName, limit: z.number().int().min(1).max(1000).default(200), cursor: z.string().max(400).optional() }))
    .query(async ({ ctx, input }) => {
      const page = await networkAuditPage(ctx.db, ctx.project.id, input.network, decodeAuditCursor(input.cursor), input.limit);
      return { ...page, next: encodeAuditCursor(page.next) };
    }),
  /** The project's alert webhook endpoints (project owners register and remove them). */
  webhooks: createTRPCRouter({
    list: projectProcedure('viewer')
      .input(z.strictObject({}))
      .query(({ ctx }) => listWebhookEndpoints(ctx.db, ctx.project.id, { outcomes: ctx.role === 'owner' })),
    create: projectProcedure('owner')
      .input(webhookInput)
      .mutation(({ ctx, input }) =>
        ctx.db.transaction((tx) =>
          createWebhookEndpoint(tx, { projectId: ctx.project.id, name: input.name, url: input.url }, ctx.actor, webhookSettings(env())),
        ),
      ),
    delete: projectProcedure('owner')
      .input(z.strictObject({ name: resourceName }))
      .mutation(({ ctx, input }) => ctx.db.transaction((tx) => deleteWebhookEndpoint(tx, ctx.project.id, input.name, ctx.actor))),
    deliveries: projectProcedure('viewer')
      .input(z.strictObject({ name: resourceName }))
      .query(({ ctx, input }) => listDeliveries(ctx.db, ctx.project.id, input.name, { outcomes: ctx.role === 'owner' })),
  }),
  /** The operators' endpoints: they receive every project's alerts. */
  operatorWebhooks: createTRPCRouter({
    list: platformProcedure('operator')
      .input(noInput)
      .query(({ ctx }) => listWebhookEndpoints(ctx.db, null, { outcomes: true })),
    create: platformProcedure('operator')
      .input(webhookInput)
      .mutation(({ ctx, input }) =>
        ctx.db.transaction((tx) => createWebhookEndpoint(tx, { projectId: null, name: input.name, url: input.url }, ctx.actor, webhookSettings(env()))),
      ),
    delete: platformProcedure('operator')
      .input(z.strictObject({ name: resourceName }))
      .mutation(({ ctx, input }) => ctx.db.transaction((tx) => deleteWebhookEndpoint(tx, null, input.name, ctx.actor))),
    deliveries: platformProcedure('operator')
      .input(z.strictObject({ name: resourceName }))
      .query(({ ctx, input }) => listDeliveries(ctx.db, null, input.name, { outcomes: true })),
  }),
});
