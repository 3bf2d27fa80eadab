import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { deleteAlertRule, listAlertRules, setAlertRule, type AlertRuleView } from '@/server/capacity/alerts';
import { objectIdByName } from '@/server/capacity/history';
import { createWebhookEndpoint, deleteWebhookEndpoint, listWebhookEndpoints, webhookSettings, type WebhookEndpointView } from '@/server/capacity/webhooks';
import { env } from '@/server/env';
import { DomainError, invalid } from '@/server/errors';
import { resourceName } from '@/server/ipam/schemas';
import { declareKind, ownRow, type KindContext, type StoredObject } from '../declare';
import { inRolledBackTransaction } from '../dry-run';

/** The capacity kinds of the Kubernetes API: CapacityAlertRule and Webhook (ipam.miloapis.com/v1alpha1), over the domain functions REST v1 calls. */

const GROUP = 'ipam.miloapis.com';
const VERSION = 'v1alpha1';

// ---- Webhook ------------------------------------------------------------------------------------

const webhookSpec = z.strictObject({
  url: z
    .string()
    .min(1)
    .max(2048)
    .describe(
      'Where alerts are posted: https:// to a public address (plain http:// with WEBHOOK_ALLOW_HTTP=1; non-public addresses only on WEBHOOK_ALLOWED_CIDRS). Immutable.',
    ),
});

const webhookStatus = z.object({
  enabled: z.boolean().describe('Whether deliveries are made'),
  pending: z.number().int().describe('Deliveries waiting'),
  delivered: z.number().int().describe('Deliveries made'),
  signingSecret: z.string().optional().describe('The secret deliveries are signed with: in the answer to the create only'),
});

function storedWebhook(w: Pick<WebhookEndpointView, 'id' | 'name' | 'url' | 'createdAt'> & Partial<WebhookEndpointView>, secret?: string): StoredObject {
  return {
    uid: w.id,
    name: w.name,
    createdAt: new Date(w.createdAt),
    spec: { url: w.url },
    status: { enabled: w.enabled ?? true, pending: w.pending ?? 0, delivered: w.delivered ?? 0, ...(secret ? { signingSecret: secret } : {}) },
  };
}

// The delivery outcomes (last errors) are for owners, as REST v1 shows them: not in this view.
const everyWebhook = async ({ db, projectId }: KindContext) => (await listWebhookEndpoints(db, projectId, { outcomes: false })).map((w) => storedWebhook(w));

/** An alert webhook endpoint of the project: registered and removed by owners; its signing secret is answered once, to the create. */
export const webhookKind = declareKind({
  group: GROUP,
  version: VERSION,
  kind: 'Webhook',
  plural: 'webhooks',
  singular: 'webhook',
  shortNames: ['wh'],
  categories: ['meridian', 'capacity'],
  namespaced: true,
  description: "An endpoint the project's capacity alerts are posted to, signed with a secret answered once when it is created.",
  spec: webhookSpec,
  status: webhookStatus,
  immutable: [{ path: 'spec.url', value: (spec) => spec.url }],
  printerColumns: [
    { name: 'URL', type: 'string', description: 'Where alerts are posted', value: (o) => o.spec.url },
    { name: 'Pending', type: 'integer', description: 'Deliveries waiting', value: (o) => o.status.pending },
    { name: 'Delivered', type: 'integer', description: 'Deliveries made', value: (o) => o.status.delivered },
  ],
  fieldSelectors: {},
  writeRole: 'owner',
  watch: [{ table: 'webhook_endpoints', object: (r) => ownRow(r), exists: () => true }],
  storage: {
    get: async (ctx, name) => (await everyWebhook(ctx)).find((w) => w.name === name),
    list: everyWebhook,
    async create({ db, projectId, actor }, { name, spec }, { dryRun }) {
      const create = async (tx: DbOrTx) => {
        const made = await createWebhookEndpoint(tx, { projectId, name, url: spec.url }, actor, webhookSettings(env()));
        return storedWebhook(made, made.secret);
      };
      if (!dryRun) return db.transaction(create);
      const preview = await inRolledBackTransaction(db, create);
      // Nothing was registered: no secret to answer.
      return { ...preview, status: { ...preview.status, signingSecret: undefined } };
    },
    async delete({ db, projectId, actor }, name, { dryRun }) {
      const remove = (tx: DbOrTx) => deleteWebhookEndpoint(tx, projectId, name, actor);
      await (dryRun ? inRolledBackTransaction(db, remove) : db.transaction(remove));
    },
  },
});

// ---- CapacityAlertRule --------------------------------------------------------------------------

const percent = z.number().min(0).max(100);

const alertRuleSpec = z
  .strictObject({
    network: resourceName
      .optional()
      .describe('The network the rule is for (its per-family series); with neither network nor cluster, every series of the project. Immutable.'),
    cluster: resourceName.optional().describe('The cluster the rule is for. Immutable.'),
    warningPercent: percent.default(80).describe('Utilization at which a warning fires (default 80)'),
    criticalPercent: percent.default(95).describe('Utilization at which a critical alert fires (default 95)'),
    forecastDays: z.number().int().min(0).max(3650).default(7).describe('Alert when the series is forecast full within this many days (default 7; 0: never)'),
    hysteresisPercent: percent.default(5).describe('Points below a threshold before its alert resolves (default 5)'),
    enabled: z.boolean().default(true).describe('Whether the rule alerts at all'),
  })
  .superRefine((b, ctx) => {
    if (b.network && b.cluster) ctx.addIssue({ code: 'custom', path: ['cluster'], message: 'name a network or a cluster, not both' });
    if (b.warningPercent <= 0 || b.warningPercent > b.criticalPercent)
      ctx.addIssue({ code: 'custom', path: ['warningPercent'], message: 'warningPercent must be above 0 and at most criticalPercent' });
    if (b.hysteresisPercent >= b.warningPercent)
      ctx.addIssue({ code: 'custom', path: ['hysteresisPercent'], message: 'hysteresisPercent must be below warningPercent' });
  });

/** A rule's name says what it is for: `project` (every series), `network.<name>`, `cluster.<name>`, or `object.<id>` (a pool's, set in the console). */
const ruleName = (r: { network?: string | null; cluster?: string | null; objectId?: string | null }) =>
  r.network ? `network.${r.network}` : r.cluster ? `cluster.${r.cluster}` : r.objectId ? `object.${r.objectId}` : 'project';

function storedRule(r: AlertRuleView): StoredObject {
  return {
    uid: r.id,
    name: ruleName(r),
    createdAt: r.createdAt,
    spec: {
      ...(r.network ? { network: r.network } : {}),
      ...(r.cluster ? { cluster: r.cluster } : {}),
      warningPercent: r.warningPercent,
      criticalPercent: r.criticalPercent,
      forecastDays: r.forecastDays,
      hysteresisPercent: r.hysteresisPercent,
      enabled: r.enabled,
    },
    status: { objectId: r.objectId },
  };
}

const everyRule = async ({ db, projectId }: KindContext) => (await listAlertRules(db, projectId)).map(storedRule);

type RuleSpec = z.infer<typeof alertRuleSpec>;

/** Writes a rule (create or change) as REST v1's PUT does, in one transaction (or one rolled back). */
async function writeRule({ db, projectId, actor }: KindContext, spec: RuleSpec, dryRun: boolean) {
  const write = async (tx: DbOrTx) => {
    const objectId = spec.network
      ? await objectIdByName(tx, projectId, 'network', spec.network)
      : spec.cluster
        ? await objectIdByName(tx, projectId, 'cluster', spec.cluster)
        : null;
    await setAlertRule(
      tx,
      projectId,
      {
        objectId,
        warningPercent: spec.warningPercent,
        criticalPercent: spec.criticalPercent,
        forecastDays: spec.forecastDays,
        hysteresisPercent: spec.hysteresisPercent,
        enabled: spec.enabled,
      },
      actor,
    );
    const [written] = (await listAlertRules(tx, projectId)).filter((r) => r.objectId === objectId);
    return storedRule(written);
  };
  return dryRun ? inRolledBackTransaction(db, write) : db.transaction(write);
}

/**
 * The thresholds of a project's capacity alerts, for every series of the project or for one
 * network's or cluster's: the rule REST v1 sets with PUT …/capacityalertrules. Deleting one returns
 * its series to the project's rule or the defaults.
 */
export const capacityAlertRuleKind = declareKind({
  group: GROUP,
  version: VERSION,
  kind: 'CapacityAlertRule',
  plural: 'capacityalertrules',
  singular: 'capacityalertrule',
  shortNames: ['car'],
  categories: ['meridian', 'capacity'],
  namespaced: true,
  description:
    'Capacity alert thresholds (warning, critical, forecast, hysteresis) for every series of the project (named `project`) or one network (`network.<name>`) or cluster (`cluster.<name>`).',
  spec: alertRuleSpec,
  status: z.object({ objectId: z.string().nullable().describe('The id of the network or cluster it is for (null: every series)') }),
  immutable: [
    { path: 'spec.network', value: (spec) => spec.network ?? '' },
    { path: 'spec.cluster', value: (spec) => spec.cluster ?? '' },
  ],
  printerColumns: [
    { name: 'Warning', type: 'number', description: 'Warning threshold (%)', value: (o) => o.spec.warningPercent },
    { name: 'Critical', type: 'number', description: 'Critical threshold (%)', value: (o) => o.spec.criticalPercent },
    { name: 'Forecast', type: 'integer', description: 'Days of forecast', value: (o) => o.spec.forecastDays },
    { name: 'Enabled', type: 'boolean', description: 'Whether it alerts', value: (o) => o.spec.enabled },
  ],
  fieldSelectors: { 'spec.network': (o) => String(o.spec.network ?? ''), 'spec.cluster': (o) => String(o.spec.cluster ?? '') },
  storage: {
    get: async (ctx, name) => (await everyRule(ctx)).find((r) => r.name === name),
    list: everyRule,
    async create(ctx, { name, spec }, { dryRun }) {
      if (name !== ruleName(spec)) {
        throw invalid('name', `the name of a rule says what it is for: "${ruleName(spec)}" for this spec`);
      }
      if ((await everyRule(ctx)).some((r) => r.name === name)) throw new DomainError('Conflict', `capacityalertrule "${name}" already exists`, 'name');
      return writeRule(ctx, spec, dryRun);
    },
    async update(ctx, current, next, { dryRun }) {
      const fields = ['warningPercent', 'criticalPercent', 'forecastDays', 'hysteresisPercent', 'enabled'] as const;
      const changed = fields.some((f) => current.spec[f] !== next[f]);
      if (changed) await writeRule(ctx, next, dryRun);
      return { changed };
    },
    async delete({ db, projectId, actor }, name, { dryRun }) {
      const rule = (await everyRule({ db, projectId, actor })).find((r) => r.name === name);
      if (!rule) throw new DomainError('NotFound', `capacityalertrule "${name}" not found`, 'name');
      const remove = (tx: DbOrTx) => deleteAlertRule(tx, projectId, rule.uid, actor);
      await (dryRun ? inRolledBackTransaction(db, remove) : db.transaction(remove));
    },
  },
});
