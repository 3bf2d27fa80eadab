import { createHmac, randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { query } from '@/db/query';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, invalid } from '@/server/errors';
import { isIP } from 'node:net';
import { checkAddress, parseAddressList } from '@/lib/address-policy';
import { log } from '@/server/observability/log';
import { checkTarget, outcomeText, postWebhook, systemResolver, tenantSafeError, type Resolver, type WebhookTargetPolicy } from './webhook-client';

/**
 * Alert webhooks: endpoints registered by a project (its alerts) or by the operators (every
 * project's), deliveries written to an outbox (`webhook_deliveries`) in the transaction that changes
 * an alert's state (capacity_alerts_evaluate.sql), sent by the worker's `webhook__deliver` job (one
 * per endpoint at a time, keyed), in order, at least once.
 *
 * Each request is `POST` with the JSON payload and
 *   `Meridian-Webhook-Id: <event id>`        the idempotency key: the same on every attempt
 *   `Meridian-Webhook-Timestamp: <unix s>`   when this attempt was signed
 *   `Meridian-Webhook-Signature: v1=<hex>`   HMAC-SHA256 with the endpoint's secret over `<id>.<timestamp>.<body>`
 * A receiver checks the signature and refuses timestamps more than 5 minutes off (replay).
 * A 2xx answer delivers; anything else (or no answer within the timeout) is retried after a capped
 * exponential backoff with jitter, and later deliveries to that endpoint wait behind it.
 */

export interface WebhookSettings extends WebhookTargetPolicy {
  retryBaseMs: number;
  retryCapMs: number;
  timeoutMs: number;
}

/** How long registration waits for a name to resolve before leaving the check to delivery. */
const REGISTRATION_LOOKUP_MS = 2_000;

const NOT_PUBLIC_HINT = 'webhooks go to public addresses (an operator may allow others with WEBHOOK_ALLOWED_CIDRS)';
const HTTP_HINT = 'url must be https:// (plain http:// only with WEBHOOK_ALLOW_HTTP=1, or to an address in WEBHOOK_ALLOWED_CIDRS)';

/**
 * Checks an endpoint URL when it is registered, throwing ValidationFailed (field `url`) with the
 * reason: https:// (plain http:// with WEBHOOK_ALLOW_HTTP=1 or to allowed addresses), no
 * credentials, and a host that is a public address or a name resolving only to public ones (or
 * ones on WEBHOOK_ALLOWED_CIDRS). A name that does not resolve yet is accepted over https: every
 * delivery resolves and checks it again (webhook-client.ts). Returns the URL in its normal form.
 */
export async function checkWebhookUrl(text: string, settings: Pick<WebhookSettings, 'allowHttp' | 'allowList' | 'proxy' | 'resolve'>): Promise<string> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('url', 'url must be an absolute https:// URL');
  }
  if (url.username || url.password) throw invalid('url', 'url must not carry credentials');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('url', HTTP_HINT);
  const resolve = settings.proxy ? undefined : (settings.resolve ?? systemResolver);
  const bounded: Resolver | undefined =
    resolve &&
    ((hostname) =>
      Promise.race([
        resolve(hostname),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer in time')), REGISTRATION_LOOKUP_MS).unref()),
      ]));
  const checked = await checkTarget(url, settings, bounded);
  if (checked.ok) return url.toString();
  if (!checked.refused) {
    // The name does not resolve (yet): over https the deliveries will check it; plain http needs to
    // know now that it goes to an allowed address.
    if (url.protocol === 'https:' || settings.allowHttp) return url.toString();
    throw invalid('url', HTTP_HINT);
  }
  const literal = isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0;
  if (literal) {
    const verdict = checkAddress(url.hostname.replace(/^\[|\]$/g, ''), settings.allowList);
    if (!verdict.allowed) throw invalid('url', `url's host ${url.hostname} is ${verdict.reason}: ${NOT_PUBLIC_HINT}`);
  } else if (!/^plain http/.test(checked.detail)) {
    // A name's addresses are not named back: they may be an internal view of the network.
    throw invalid('url', `url's host ${url.hostname} resolves to an address webhooks may not reach: ${NOT_PUBLIC_HINT}`);
  }
  throw invalid('url', HTTP_HINT);
}

/** The signature header's value for one attempt. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${id}.${timestamp}.${body}`).digest('hex')}`;
}

/** The wait before retry number `attempts` (1 = after the first failure): base × 2^(n−1), capped, with ±25 % jitter. */
export function retryDelayMs(attempts: number, baseMs: number, capMs: number, random = Math.random()): number {
  const raw = Math.min(capMs, baseMs * 2 ** Math.min(attempts - 1, 40));
  return Math.round(Math.min(capMs, raw * (0.75 + random * 0.5)));
}

const webhookEndpointRow = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  enabled: z.boolean(),
  createdAt: z.string(),
  pending: z.number(),
  delivered: z.number(),
  lastError: z.string().nullable(),
});
export type WebhookEndpointView = z.infer<typeof webhookEndpointRow>;

/** Registers an endpoint for a project (or, with `projectId` null, for the operators); the secret is returned here only. */
export async function createWebhookEndpoint(
  db: DbOrTx,
  input: { projectId: string | null; name: string; url: string },
  actor: Actor,
  settings: Pick<WebhookSettings, 'allowHttp' | 'allowList' | 'proxy' | 'resolve'>,
) {
  const url = await checkWebhookUrl(input.url, settings);
  const secret = `whsec_${randomBytes(24).toString('base64url')}`;
  try {
    const [row] = await query(
      db,
      sql`
      insert into webhook_endpoints (project_id, name, url, secret, created_by) values (${input.projectId}, ${input.name}, ${url}, ${secret}, ${actor.label})
      returning id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as "createdAt"`,
      z.object({ id: z.string(), createdAt: z.string() }),
    );
    await recordEvent(db, {
      actor,
      projectId: input.projectId,
      action: 'webhook.create',
      objectType: 'webhookEndpoint',
      objectId: row.id,
      objectName: input.name,
      after: { url },
    });
    return { id: row.id, name: input.name, url, secret, createdAt: row.createdAt };
  } catch (e) {
    if ((e as { cause?: { code?: string } }).cause?.code === '23505' || (e as { code?: string }).code === '23505')
      throw new DomainError('Conflict', `webhook "${input.name}" exists`, 'name');
    throw e;
  }
}

/**
 * Who reads a delivery log: `outcomes` (a project's owners, the operators) see each delivery's last
 * outcome as a tenant may learn it (`HTTP 503`, `refused by policy`, `unreachable`); everyone else
 * (viewers, editors) sees delivery state only.
 */
export interface DeliveryReader {
  outcomes: boolean;
}

/** The endpoints of a project (or the operators'), with their outbox counts. */
export async function listWebhookEndpoints(db: DbOrTx, projectId: string | null, reader: DeliveryReader): Promise<WebhookEndpointView[]> {
  const rows = await query(
    db,
    sql`
    select e.id, e.name, e.url, e.enabled, to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as "createdAt",
           (select count(*)::int from webhook_deliveries d where d.endpoint_id = e.id and d.state = 'Pending') as pending,
           (select count(*)::int from webhook_deliveries d where d.endpoint_id = e.id and d.state = 'Delivered') as delivered,
           (select d.last_error from webhook_deliveries d where d.endpoint_id = e.id and d.last_error is not null order by d.id desc limit 1) as "lastError"
      from webhook_endpoints e where e.project_id is not distinct from ${projectId} order by e.name`,
    webhookEndpointRow,
  );
  return rows.map((r) => ({ ...r, lastError: reader.outcomes ? tenantSafeError(r.lastError) : null }));
}

async function endpointByName(db: DbOrTx, projectId: string | null, name: string) {
  const [row] = await query(
    db,
    sql`
    select id, name from webhook_endpoints where project_id is not distinct from ${projectId} and name = ${name}`,
    z.object({ id: z.string(), name: z.string() }),
  );
  if (!row) throw new DomainError('NotFound', `webhook "${name}" not found`, 'name');
  return row;
}

/** Removes an endpoint and its delivery log. */
export async function deleteWebhookEndpoint(db: DbOrTx, projectId: string | null, name: string, actor: Actor) {
  const endpoint = await endpointByName(db, projectId, name);
  await db.execute(sql`delete from webhook_endpoints where id = ${endpoint.id}`);
  await recordEvent(db, { actor, projectId, action: 'webhook.delete', objectType: 'webhookEndpoint', objectId: endpoint.id, objectName: name });
}

const deliveryRow = z.object({
  id: z.number(),
  eventId: z.string(),
  eventType: z.string(),
  state: z.enum(['Pending', 'Delivered']),
  attempts: z.number(),
  nextAttemptAt: z.string().nullable(),
  lastStatus: z.number().nullable(),
  lastError: z.string().nullable(),
  createdAt: z.string(),
  deliveredAt: z.string().nullable(),
  payload: z.record(z.string(), z.unknown()),
});
export type DeliveryView = z.infer<typeof deliveryRow>;

/** An endpoint's delivery log, newest first (outcomes as {@link DeliveryReader} allows). */
export async function listDeliveries(db: DbOrTx, projectId: string | null, name: string, reader: DeliveryReader, limit = 50): Promise<DeliveryView[]> {
  const endpoint = await endpointByName(db, projectId, name);
  const iso = (col: string) => sql.raw(`to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);
  const rows = await query(
    db,
    sql`
    select id::int as id, event_id as "eventId", event_type as "eventType", state, attempts,
           case when state = 'Pending' then ${iso('next_attempt_at')} end as "nextAttemptAt",
           last_status as "lastStatus", last_error as "lastError", ${iso('created_at')} as "createdAt", ${iso('delivered_at')} as "deliveredAt", payload
      from webhook_deliveries where endpoint_id = ${endpoint.id} order by id desc limit ${limit}`,
    deliveryRow,
  );
  return rows.map((r) => ({
    ...r,
    lastStatus: reader.outcomes ? r.lastStatus : null,
    lastError: reader.outcomes ? tenantSafeError(r.lastError) : null,
  }));
}

/**
 * Sends an endpoint's due deliveries, oldest first, until one fails (it is then retried after its
 * backoff; the ones behind it wait, so a receiver sees an endpoint's events in order) or `batch`
 * are sent. Returns when the endpoint's next attempt is due (null: nothing pending).
 */
export async function deliverPending(
  db: DbOrTx,
  endpointId: string,
  settings: WebhookSettings,
  batch = 100,
): Promise<{ delivered: number; failed: number; nextAttemptAt: Date | null }> {
  const [endpoint] = await query(
    db,
    sql`select url, secret, enabled from webhook_endpoints where id = ${endpointId}`,
    z.object({ url: z.string(), secret: z.string(), enabled: z.boolean() }),
  );
  if (!endpoint || !endpoint.enabled) return { delivered: 0, failed: 0, nextAttemptAt: null };
  const due = await query(
    db,
    sql`
    select d.id::text as id, d.event_id as "eventId", d.payload::text as body, d.attempts, d.next_attempt_at <= now() as due from webhook_deliveries d
     where d.endpoint_id = ${endpointId} and d.state = 'Pending' order by d.id limit ${batch}`,
    z.object({ id: z.string(), eventId: z.string(), body: z.string(), attempts: z.number(), due: z.boolean() }),
  );
  let delivered = 0;
  let failed = 0;
  for (const d of due) {
    // In order (by the numeric id: the text "id" above would put 10 before 9): a delivery waiting
    // for its retry holds back the ones behind it, and the next run is due when that one is.
    if (!d.due) break;
    const timestamp = Math.floor(Date.now() / 1000);
    const outcome = await postWebhook(
      endpoint.url,
      {
        timeoutMs: settings.timeoutMs,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Meridian-Webhooks/1',
          'meridian-webhook-id': d.eventId,
          'meridian-webhook-timestamp': String(timestamp),
          'meridian-webhook-signature': signWebhook(endpoint.secret, d.eventId, timestamp, d.body),
        },
        body: d.body,
      },
      settings,
    );
    const status = outcome.kind === 'delivered' || outcome.kind === 'http' ? outcome.status : null;
    // The tenant's log gets the outcome's category; why it failed stays in the server's log.
    const error = outcomeText(outcome);
    if (outcome.kind === 'refused' || outcome.kind === 'unreachable') {
      log('warn', `webhook delivery ${outcome.kind === 'refused' ? 'refused by policy' : 'failed'}`, {
        endpointId,
        eventId: d.eventId,
        detail: outcome.detail,
      });
    }
    if (error === null) {
      await db.execute(sql`
        update webhook_deliveries set state = 'Delivered', attempts = attempts + 1, last_status = ${status}, last_error = null, delivered_at = now()
         where id = ${d.id}::bigint and state = 'Pending'`);
      delivered++;
      continue;
    }
    const wait = retryDelayMs(d.attempts + 1, settings.retryBaseMs, settings.retryCapMs);
    await db.execute(sql`
      update webhook_deliveries set attempts = attempts + 1, last_status = ${status}, last_error = ${error.slice(0, 500)},
             next_attempt_at = now() + ${`${wait} milliseconds`}::interval
       where id = ${d.id}::bigint and state = 'Pending'`);
    failed++;
    break;
  }
  const [next] = await query(
    db,
    sql`
    select next_attempt_at as at from webhook_deliveries where endpoint_id = ${endpointId} and state = 'Pending' order by id limit 1`,
    z.object({ at: z.union([z.string(), z.date()]).nullable() }),
  );
  return { delivered, failed, nextAttemptAt: next?.at ? new Date(next.at) : null };
}

/** The delivery settings from the environment's values. */
export function webhookSettings(e: {
  WEBHOOK_ALLOW_HTTP: '0' | '1';
  WEBHOOK_ALLOWED_CIDRS: string;
  WEBHOOK_PROXY_URL?: string;
  WEBHOOK_RETRY_BASE_MS: number;
  WEBHOOK_RETRY_CAP_MS: number;
  WEBHOOK_TIMEOUT_MS: number;
}): WebhookSettings {
  return {
    allowHttp: e.WEBHOOK_ALLOW_HTTP === '1',
    allowList: e.WEBHOOK_ALLOWED_CIDRS ? parseAddressList(e.WEBHOOK_ALLOWED_CIDRS) : null,
    proxy: e.WEBHOOK_PROXY_URL ? new URL(e.WEBHOOK_PROXY_URL) : undefined,
    retryBaseMs: e.WEBHOOK_RETRY_BASE_MS,
    retryCapMs: e.WEBHOOK_RETRY_CAP_MS,
    timeoutMs: e.WEBHOOK_TIMEOUT_MS,
  };
}
