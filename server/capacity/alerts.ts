import { and, asc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { query } from '@/db/query';
import { capacityAlertRules, clusters, networks } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, invalid } from '@/server/errors';

/**
 * Evaluates every series' alert conditions at `at` (SQL `capacity_alerts_evaluate`, one statement in
 * one transaction: state, audit events, webhook outbox and delivery jobs together). The forecast
 * condition is evaluated when `forecast` (hourly: it reads the hourly peaks of the last 7 days).
 * Returns the number of alerts that fired or resolved.
 */
export async function evaluateAlerts(db: DbOrTx, at: Date, options: { forecast: boolean }): Promise<number> {
  const [row] = await query(db, sql`select capacity_alerts_evaluate(${at.toISOString()}::timestamptz, ${options.forecast}) as n`, z.object({ n: z.number() }));
  return row.n;
}

export interface AlertView {
  series: string;
  kind: string;
  objectId: string;
  object: string | null;
  family: 'IPv4' | 'IPv6' | null;
  resourceType: string | null;
  condition: 'warning' | 'critical' | 'forecast';
  firing: boolean;
  since: string;
  value: number;
  threshold: number;
  message: string;
  transitions: number;
}

/** A project's alerts (every project's when `projectId` is null, for operators): firing first, then the most recent. */
export async function listAlerts(db: DbOrTx, projectId: string | null, options: { firingOnly?: boolean; limit?: number } = {}): Promise<AlertView[]> {
  const rows = await query(
    db,
    sql`
    select s.key as series, s.kind, s.object_id as "objectId",
           coalesce((select n.name from networks n where n.id = s.object_id), (select p.name from ip_pools p where p.id = s.object_id),
                    (select c.name from clusters c where c.id = s.object_id), s.resource_type) as object,
           s.family, s.resource_type as "resourceType", a.condition, a.firing,
           to_char(a.since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as since, a.value, a.threshold, a.message, a.transitions
      from capacity_alerts a join capacity_series s on s.id = a.series_id
     where (${projectId}::uuid is null or a.project_id = ${projectId}::uuid) and (${options.firingOnly ?? false} = false or a.firing)
     order by a.firing desc, a.since desc limit ${options.limit ?? 100}`,
    z.object({
      series: z.string(),
      kind: z.string(),
      objectId: z.string(),
      object: z.string().nullable(),
      family: z.number().nullable(),
      resourceType: z.string().nullable(),
      condition: z.enum(['warning', 'critical', 'forecast']),
      firing: z.boolean(),
      since: z.string(),
      value: z.number(),
      threshold: z.number(),
      message: z.string(),
      transitions: z.number(),
    }),
  );
  return rows.map((r) => ({ ...r, family: r.family === 4 ? 'IPv4' : r.family === 6 ? 'IPv6' : null }));
}

export interface AlertRuleInput {
  /** A pool, network or cluster id (or the project's, for its buckets); null: every series of the project. */
  objectId: string | null;
  warningPercent: number;
  criticalPercent: number;
  forecastDays: number;
  hysteresisPercent: number;
  enabled: boolean;
}

/** The thresholds every series uses when neither its object nor its project has a rule. */
export const DEFAULT_ALERT_RULE = { warningPercent: 80, criticalPercent: 95, forecastDays: 7, hysteresisPercent: 5, enabled: true } as const;

/**
 * Sets (creates or replaces) a project's rule for one object or for all its series; audited.
 * ValidationFailed when the thresholds contradict each other (warning above critical, hysteresis
 * not below warning).
 */
export async function setAlertRule(db: DbOrTx, projectId: string, input: AlertRuleInput, actor: Actor) {
  if (!(input.warningPercent > 0 && input.warningPercent <= input.criticalPercent && input.criticalPercent <= 100))
    throw invalid('warningPercent', 'the warning threshold must be above 0 % and at most the critical one, which is at most 100 %');
  if (!(input.hysteresisPercent >= 0 && input.hysteresisPercent < input.warningPercent))
    throw invalid('hysteresisPercent', 'the hysteresis must be below the warning threshold');
  if (!(Number.isInteger(input.forecastDays) && input.forecastDays >= 0 && input.forecastDays <= 3650))
    throw invalid('forecastDays', 'the forecast horizon is a whole number of days from 0 (off) to 3650');
  await db.execute(sql`
    insert into capacity_alert_rules (project_id, object_id, warning_percent, critical_percent, forecast_days, hysteresis_percent, enabled, created_by)
    values (${projectId}, ${input.objectId}, ${input.warningPercent}, ${input.criticalPercent}, ${input.forecastDays}, ${input.hysteresisPercent}, ${input.enabled}, ${actor.label})
    on conflict (project_id, coalesce(object_id, '00000000-0000-0000-0000-000000000000'::uuid)) do update
      set warning_percent = excluded.warning_percent, critical_percent = excluded.critical_percent, forecast_days = excluded.forecast_days,
          hysteresis_percent = excluded.hysteresis_percent, enabled = excluded.enabled`);
  await recordEvent(db, {
    actor,
    projectId,
    action: 'capacity.alertRule.set',
    objectType: 'alertRule',
    objectId: input.objectId ?? projectId,
    after: { ...input },
  });
}

/** A project's rule as it is stored, with the network or cluster it is for (both null: another object's, or every series' when `objectId` is null). */
export interface AlertRuleView extends AlertRuleInput {
  id: string;
  network: string | null;
  cluster: string | null;
  createdAt: Date;
}

/** The project's alert rules, oldest first. */
export async function listAlertRules(db: DbOrTx, projectId: string): Promise<AlertRuleView[]> {
  const rows = await db
    .select({
      id: capacityAlertRules.id,
      objectId: capacityAlertRules.objectId,
      network: networks.name,
      cluster: clusters.name,
      warningPercent: capacityAlertRules.warningPercent,
      criticalPercent: capacityAlertRules.criticalPercent,
      forecastDays: capacityAlertRules.forecastDays,
      hysteresisPercent: capacityAlertRules.hysteresisPercent,
      enabled: capacityAlertRules.enabled,
      createdAt: capacityAlertRules.createdAt,
    })
    .from(capacityAlertRules)
    .leftJoin(networks, and(eq(networks.id, capacityAlertRules.objectId), eq(networks.projectId, projectId)))
    .leftJoin(clusters, and(eq(clusters.id, capacityAlertRules.objectId), eq(clusters.projectId, projectId)))
    .where(eq(capacityAlertRules.projectId, projectId))
    .orderBy(asc(capacityAlertRules.createdAt), asc(capacityAlertRules.id));
  return rows.map((r) => ({
    ...r,
    warningPercent: Number(r.warningPercent),
    criticalPercent: Number(r.criticalPercent),
    hysteresisPercent: Number(r.hysteresisPercent),
  }));
}

/** Removes a project's rule (its series fall back to the project's rule or the defaults); audited. */
export async function deleteAlertRule(db: DbOrTx, projectId: string, ruleId: string, actor: Actor) {
  const [gone] = await db
    .delete(capacityAlertRules)
    .where(and(eq(capacityAlertRules.projectId, projectId), eq(capacityAlertRules.id, ruleId)))
    .returning({ objectId: capacityAlertRules.objectId });
  if (!gone) throw new DomainError('NotFound', 'alert rule not found', 'name');
  await recordEvent(db, { actor, projectId, action: 'capacity.alertRule.delete', objectType: 'alertRule', objectId: gone.objectId ?? projectId });
}
