import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { createWebhookEndpoint, deleteWebhookEndpoint, listWebhookEndpoints, webhookSettings, type WebhookEndpointView } from '@/server/capacity/webhooks';
import { env } from '@/server/env';
import { declareKind, type KindContext, type StoredObject } from '../declare';
import { inRolledBackTransaction } from '../dry-run';

/** The capacity kinds of the Kubernetes API: Webhook (ipam.miloapis.com/v1alpha1), over the domain functions REST v1 calls. */

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
