import { z } from 'zod';
import { DomainError } from '@/server/errors';
import { env } from '@/server/env';
import { jsonBody, jsonReply, listOutput, operatorRoute, projectReadRoute, statusOutput, timestamp, tokenRoute, type RestRoute } from '@/server/http/declare';
import { pageQuery } from '@/server/http/pagination';
import { ipamApi } from '@/server/ipam/rest';
import { resourceName } from '@/server/ipam/schemas';
import { quotaApi } from '@/server/quota/rest';
import { listAlerts, setAlertRule } from './alerts';
import { createWebhookEndpoint, deleteWebhookEndpoint, listDeliveries, listWebhookEndpoints, webhookSettings } from './webhooks';
import { objectHistory, objectIdByName, resolveRange, type SeriesHistory } from './history';
import { decodeAuditCursor, encodeAuditCursor, networkAuditPage } from './address-audit';

const rangeQuery = z.object({
  from: z.string().max(40).optional().describe('start: RFC 3339, epoch seconds or -<duration> (e.g. -7d); default a day before `to`'),
  to: z.string().max(40).optional().describe('end: as `from`; default now'),
  step: z.string().max(12).optional().describe('seconds between points, or 5m, 1h, 1d; default: at most 500 points'),
});

const percent = z.number().min(0).max(100);
const alertRuleBody = z
  .strictObject({
    network: resourceName.optional().describe('the network the rule is for (its per-family series); absent with cluster: every series of the project'),
    cluster: resourceName.optional().describe('the cluster the rule is for'),
    warningPercent: percent.default(80),
    criticalPercent: percent.default(95),
    forecastDays: z.number().int().min(0).max(3650).default(7),
    hysteresisPercent: percent.default(5),
    enabled: z.boolean().default(true),
  })
  .superRefine((b, ctx) => {
    if (b.network && b.cluster) ctx.addIssue({ code: 'custom', path: ['cluster'], message: 'name a network or a cluster, not both' });
    if (b.warningPercent <= 0 || b.warningPercent > b.criticalPercent)
      ctx.addIssue({ code: 'custom', path: ['warningPercent'], message: 'warningPercent must be above 0 and at most criticalPercent' });
    if (b.hysteresisPercent >= b.warningPercent)
      ctx.addIssue({ code: 'custom', path: ['hysteresisPercent'], message: 'hysteresisPercent must be below warningPercent' });
  });
const webhookBody = z.strictObject({
  name: resourceName,
  url: z
    .string()
    .min(1)
    .max(2048)
    .describe('https:// URL to a public address (plain http:// with WEBHOOK_ALLOW_HTTP=1; non-public addresses only on WEBHOOK_ALLOWED_CIDRS)'),
});

const historyDoc = (kind: string, name: string, range: ReturnType<typeof resolveRange>, series: SeriesHistory[]) => ({
  apiVersion: 'v1',
  kind: 'UtilizationHistory',
  metadata: { name, object: kind },
  spec: { from: range.from.toISOString(), to: range.to.toISOString(), step: range.step, sourceStep: range.source },
  items: series,
});

// ---- What the routes answer ---------------------------------------------------------------------

const exact = z.string().regex(/^\d+$/).describe('exact decimal');
const family = z.enum(['IPv4', 'IPv6']).nullable();
const forecastOutput = z.union([
  z.object({ state: z.enum(['full', 'growing']), slopePerDay: z.number(), fullAt: timestamp, secondsToFull: z.number().nonnegative() }),
  z.object({ state: z.literal('notGrowing'), slopePerDay: z.number() }),
  z.object({ state: z.literal('insufficientData') }),
]);
const historyOutput = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('UtilizationHistory'),
  metadata: z.object({ name: z.string(), object: z.string() }),
  spec: z.object({ from: timestamp, to: timestamp, step: z.number().int().positive(), sourceStep: z.unknown() }),
  items: z.array(
    z.object({
      key: z.string(),
      kind: z.string(),
      family,
      resourceType: z.string().nullable(),
      points: z.array(z.object({ at: timestamp, used: exact, capacity: exact, utilization: z.number() })),
      current: z.object({ used: exact, capacity: exact, utilization: z.number() }).nullable(),
      forecast: forecastOutput,
      forecastWindowDays: z.number(),
    }),
  ),
});
const alertListOutput = listOutput(
  'CapacityAlertList',
  z.object({
    series: z.string(),
    kind: z.string(),
    objectId: z.uuid(),
    object: z.string().nullable(),
    family,
    resourceType: z.string().nullable(),
    condition: z.enum(['warning', 'critical', 'forecast']),
    firing: z.boolean(),
    since: timestamp,
    value: z.number(),
    threshold: z.number(),
    message: z.string(),
    transitions: z.number().int(),
  }),
);
const webhookListOutput = listOutput(
  'WebhookList',
  z.object({
    id: z.uuid(),
    name: z.string(),
    url: z.string(),
    enabled: z.boolean(),
    createdAt: timestamp,
    pending: z.number().int(),
    delivered: z.number().int(),
    lastError: z.string().nullable(),
  }),
);
const webhookCreatedOutput = z.object({
  kind: z.literal('Webhook'),
  id: z.uuid(),
  name: z.string(),
  url: z.string(),
  secret: z.string().describe('the signing secret, shown once'),
  createdAt: timestamp,
});
const deliveryListOutput = listOutput(
  'WebhookDeliveryList',
  z.object({
    id: z.number().int(),
    eventId: z.string().describe("the receiver's idempotency key"),
    eventType: z.string(),
    state: z.enum(['Pending', 'Delivered']),
    attempts: z.number().int(),
    nextAttemptAt: timestamp.nullable(),
    lastStatus: z.number().int().nullable(),
    lastError: z.string().nullable(),
    createdAt: timestamp,
    deliveredAt: timestamp.nullable(),
    payload: z.record(z.string(), z.unknown()),
  }),
);
const auditOutput = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('AddressAudit'),
  metadata: z.object({ name: z.string(), continue: z.string().nullable().describe('pass as ?continue= for the next page; null on the last page') }),
  pools: z.array(
    z.object({
      name: z.string(),
      cidr: z.string(),
      family: z.enum(['IPv4', 'IPv6']),
      kind: z.string(),
      parent: z.string().nullable(),
      size: exact.describe("the CIDR's addresses"),
      counters: z.object({ capacity: exact, allocated: exact, reserved: exact, allocations: z.number().int() }).describe("the pool's maintained counters"),
      totals: z
        .object({ allocated: exact, reserved: exact, free: exact, allocations: z.number().int(), freeBlocks: z.number().int() })
        .describe('sums of what the report lists, read in the same snapshot'),
      consistent: z.boolean().describe('totals.allocated = counters.allocated, totals.reserved = counters.reserved, allocated + reserved + free = size'),
    }),
  ),
  items: z.array(
    z.object({
      pool: z.string(),
      poolCidr: z.string(),
      cidr: z.string(),
      kind: z.enum(['Claim', 'Retained', 'Reservation', 'PoolCarve', 'PodAddress', 'Free']),
      addresses: exact,
      ownerKind: z.string().nullable().describe('IPClaim, MachineInterface, ChildPool, NodeBlock, PodLease, RetainedClaim or Reservation'),
      owner: z.string().nullable(),
      detail: z.string().nullable(),
      createdAt: timestamp.nullable(),
    }),
  ),
});
const alertRuleOutput = z.object({
  kind: z.literal('CapacityAlertRule'),
  spec: z.object({
    network: z.string().nullable(),
    cluster: z.string().nullable(),
    warningPercent: z.number(),
    criticalPercent: z.number(),
    forecastDays: z.number().int(),
    hysteresisPercent: z.number(),
    enabled: z.boolean(),
  }),
});

/**
 * Utilization history over REST: the series the worker samples (server/capacity), with their
 * current value and forecast. Read by the project's tokens (viewer and up) or an operator token.
 */
export const capacityRoutes: RestRoute[] = [
  projectReadRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/networks/{name}/utilization',
    output: historyOutput,
    group: ipamApi,
    summary:
      "A network's utilization over time, per family (points: peak used and capacity per step), its current counters and the time to exhaustion forecast from the last 7 days",
    query: rangeQuery,
    handler: async ({ db, project, params, query }) => {
      const range = resolveRange(query());
      const name = resourceName.parse(params.name);
      const id = await objectIdByName(db, project.id, 'network', name);
      return historyDoc('Network', name, range, await objectHistory(db, project.id, id, ['network'], range));
    },
  }),
  projectReadRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/networks/{name}/audit',
    output: auditOutput,
    group: ipamApi,
    summary:
      "A network's address audit, pool by pool in address order: every allocation with its owner (claim, machine interface, child pool, node block, pod lease), every reservation and free block, and each pool's counters with the totals of what is listed, all read in one snapshot per page (the console's CSV export reads the whole report in one snapshot)",
    query: z.object({ ...pageQuery(5000, 1000), continue: z.string().max(400).optional().describe('token from the previous page') }),
    handler: async ({ db, project, params, query }) => {
      const q = query();
      const name = resourceName.parse(params.name);
      const page = await networkAuditPage(db, project.id, name, decodeAuditCursor(q.continue), q.limit);
      return { apiVersion: 'v1', kind: 'AddressAudit', metadata: { name, continue: encodeAuditCursor(page.next) }, pools: page.pools, items: page.items };
    },
  }),
  projectReadRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/clusters/{cluster}/utilization',
    output: historyOutput,
    group: ipamApi,
    summary: "A cluster's pod addresses (of its node blocks) and node blocks (of its network) over time, per family, with forecasts",
    query: rangeQuery,
    handler: async ({ db, project, params, query, principal }) => {
      const range = resolveRange(query());
      const name = params.cluster;
      // A cluster token reads its own cluster only (any other is NotFound, as on the CNI routes).
      const valid = resourceName.safeParse(name).success;
      if (!valid || (principal.kind === 'project' && principal.clusterName && principal.clusterName !== name))
        throw new DomainError('NotFound', `cluster "${name}" not found`, 'cluster');
      const id = await objectIdByName(db, project.id, 'cluster', name);
      return historyDoc('Cluster', name, range, await objectHistory(db, project.id, id, ['cluster-pods', 'cluster-blocks'], range));
    },
  }),
  projectReadRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/allowancebuckets/utilization',
    output: historyOutput,
    group: quotaApi,
    summary: "The project's allowance buckets over time (allocated against limit), with forecasts; ?resourceType= picks one",
    query: rangeQuery.extend({ resourceType: z.string().max(200).optional().describe('one resource type, e.g. ipam.miloapis.com/ipclaims') }),
    handler: async ({ db, project, query }) => {
      const q = query();
      const range = resolveRange(q);
      const series = await objectHistory(db, project.id, project.id, ['bucket'], range);
      return historyDoc('Project', project.slug, range, q.resourceType ? series.filter((s) => s.resourceType === q.resourceType) : series);
    },
  }),

  projectReadRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/capacityalerts',
    output: alertListOutput,
    group: ipamApi,
    summary: "The project's capacity alerts (warning, critical, forecast) per series: firing first, then the latest transitions; ?firing=true for firing only",
    query: z.object({ firing: z.enum(['true', 'false']).optional().describe('true: firing alerts only') }),
    handler: async ({ db, project, query }) => ({
      apiVersion: 'v1',
      kind: 'CapacityAlertList',
      items: await listAlerts(db, project.id, { firingOnly: query().firing === 'true' }),
      metadata: { continue: null },
    }),
  }),
  tokenRoute({
    method: 'PUT',
    path: '/api/v1/projects/{project}/capacityalertrules',
    output: alertRuleOutput,
    group: ipamApi,
    summary:
      "Set the alert thresholds of the project's series, or of one network's, pool's or cluster's (defaults: warning 80 %, critical 95 %, full within 7 days, 5 points of hysteresis)",
    minRole: 'editor',
    body: jsonBody(alertRuleBody),
    handler: async ({ db, body, principal, actor }) => {
      const b = body();
      const objectId = b.network
        ? await objectIdByName(db, principal.projectId, 'network', b.network)
        : b.cluster
          ? await objectIdByName(db, principal.projectId, 'cluster', b.cluster)
          : null;
      const rule = {
        objectId,
        warningPercent: b.warningPercent,
        criticalPercent: b.criticalPercent,
        forecastDays: b.forecastDays,
        hysteresisPercent: b.hysteresisPercent,
        enabled: b.enabled,
      };
      await db.transaction((tx) => setAlertRule(tx, principal.projectId, rule, actor));
      return { kind: 'CapacityAlertRule', spec: { network: b.network ?? null, cluster: b.cluster ?? null, ...rule, objectId: undefined } };
    },
  }),
  tokenRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/webhooks',
    output: webhookListOutput,
    group: ipamApi,
    summary:
      "The project's alert webhook endpoints with their pending and delivered counts and, for owners, the last failure (secrets are shown only when created)",
    minRole: 'viewer',
    handler: async ({ db, principal }) => ({
      apiVersion: 'v1',
      kind: 'WebhookList',
      items: await listWebhookEndpoints(db, principal.projectId, { outcomes: principal.role === 'owner' }),
      metadata: { continue: null },
    }),
  }),
  tokenRoute({
    method: 'POST',
    path: '/api/v1/projects/{project}/webhooks',
    output: webhookCreatedOutput,
    group: ipamApi,
    summary:
      'Register an alert webhook endpoint (https to a public address; see WEBHOOK_ALLOWED_CIDRS and WEBHOOK_ALLOW_HTTP); the answer carries its signing secret, once',
    minRole: 'owner',
    body: jsonBody(webhookBody),
    handler: async ({ db, body, principal, actor }) => {
      const b = body();
      const created = await db.transaction((tx) =>
        createWebhookEndpoint(tx, { projectId: principal.projectId, name: b.name, url: b.url }, actor, webhookSettings(env())),
      );
      return jsonReply({ kind: 'Webhook', ...created }, { status: 201 });
    },
  }),
  tokenRoute({
    method: 'DELETE',
    path: '/api/v1/projects/{project}/webhooks/{name}',
    output: statusOutput('Webhook'),
    group: ipamApi,
    summary: 'Remove an alert webhook endpoint and its delivery log',
    minRole: 'owner',
    handler: async ({ db, params, principal, actor }) => {
      await db.transaction((tx) => deleteWebhookEndpoint(tx, principal.projectId, resourceName.parse(params.name), actor));
      return { kind: 'Status', status: 'Success', details: { name: params.name, kind: 'Webhook' } };
    },
  }),
  tokenRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/webhooks/{name}/deliveries',
    output: deliveryListOutput,
    group: ipamApi,
    summary:
      "An endpoint's delivery log, newest first: event id (the receiver's idempotency key), state, attempts, next attempt and, for owners, the last status and failure",
    minRole: 'viewer',
    handler: async ({ db, params, principal }) => ({
      apiVersion: 'v1',
      kind: 'WebhookDeliveryList',
      items: await listDeliveries(db, principal.projectId, resourceName.parse(params.name), { outcomes: principal.role === 'owner' }),
      metadata: { continue: null },
    }),
  }),
  operatorRoute({
    method: 'GET',
    path: '/api/v1/capacityalerts',
    output: alertListOutput,
    group: ipamApi,
    summary: "Every project's capacity alerts, firing first",
    query: z.object({ firing: z.enum(['true', 'false']).optional().describe('true: firing alerts only') }),
    handler: async ({ db, query }) => ({
      apiVersion: 'v1',
      kind: 'CapacityAlertList',
      items: await listAlerts(db, null, { firingOnly: query().firing === 'true' }),
      metadata: { continue: null },
    }),
  }),
  operatorRoute({
    method: 'GET',
    path: '/api/v1/webhooks',
    output: webhookListOutput,
    group: ipamApi,
    summary: "The operators' alert webhook endpoints (they receive every project's alerts)",
    handler: async ({ db }) => ({
      apiVersion: 'v1',
      kind: 'WebhookList',
      items: await listWebhookEndpoints(db, null, { outcomes: true }),
      metadata: { continue: null },
    }),
  }),
  operatorRoute({
    method: 'POST',
    path: '/api/v1/webhooks',
    output: webhookCreatedOutput,
    group: ipamApi,
    summary: "Register an operators' alert webhook endpoint for every project's alerts; the answer carries its signing secret, once",
    body: jsonBody(webhookBody),
    handler: async ({ db, body, actor }) => {
      const b = body();
      const created = await db.transaction((tx) => createWebhookEndpoint(tx, { projectId: null, name: b.name, url: b.url }, actor, webhookSettings(env())));
      return jsonReply({ kind: 'Webhook', ...created }, { status: 201 });
    },
  }),
  operatorRoute({
    method: 'DELETE',
    path: '/api/v1/webhooks/{name}',
    output: statusOutput('Webhook'),
    group: ipamApi,
    summary: "Remove an operators' alert webhook endpoint",
    handler: async ({ db, params, actor }) => {
      await db.transaction((tx) => deleteWebhookEndpoint(tx, null, resourceName.parse(params.name), actor));
      return { kind: 'Status', status: 'Success', details: { name: params.name, kind: 'Webhook' } };
    },
  }),
  operatorRoute({
    method: 'GET',
    path: '/api/v1/webhooks/{name}/deliveries',
    output: deliveryListOutput,
    group: ipamApi,
    summary: "An operators' endpoint's delivery log, newest first",
    handler: async ({ db, params }) => ({
      apiVersion: 'v1',
      kind: 'WebhookDeliveryList',
      items: await listDeliveries(db, null, resourceName.parse(params.name), { outcomes: true }),
      metadata: { continue: null },
    }),
  }),
];
