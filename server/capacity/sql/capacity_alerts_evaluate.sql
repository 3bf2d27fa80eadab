-- Evaluates the alert conditions of every series at `p_at`, in one statement, and for each
-- condition that changes state writes, all in the caller's transaction: the alert's new state, an
-- audit event (`capacity.alert.firing` / `capacity.alert.resolved`), one outbox row per enabled
-- webhook endpoint of the project and of the operators (same event id: the receivers' idempotency
-- key), and a keyed delivery job per endpoint.
--
-- Conditions (the series' rule: its object's, else its project's, else the defaults 80 / 95 / 7 / 5):
--   warning   fires at used/capacity ≥ warning %, resolves below warning − hysteresis points, the
--             hysteresis being at least one unit of the series (one machine of a 10-machine bucket);
--   critical  the same at critical %;
--   forecast  (only when p_forecast) fires when the series' time to full over the last 7 days
--             (capacity_trend.sql: the same method the console and REST display) is at most the
--             forecast days: 0 when the latest sample is at or above its capacity, else
--             (capacity − latest used) / slope when the slope is > 0; resolves when the slope is
--             ≤ 0 or the time to full exceeds 1.25 × the forecast days.
-- Between the two bounds the state stays as it was (hysteresis: no flapping around a threshold).
-- Returns the number of transitions.
CREATE OR REPLACE FUNCTION capacity_alerts_evaluate(p_at timestamptz, p_forecast boolean) RETURNS integer
LANGUAGE sql
AS $$
  WITH cur AS MATERIALIZED (
    SELECT s.id, s.key, s.kind, s.project_id, s.object_id, s.family, s.resource_type, c.used::float8 AS used, c.capacity::float8 AS capacity,
           coalesce(ro.warning_percent, rp.warning_percent, 80)::float8 AS warn,
           coalesce(ro.critical_percent, rp.critical_percent, 95)::float8 AS crit,
           coalesce(ro.forecast_days, rp.forecast_days, 7)::float8 AS fdays,
           coalesce(ro.hysteresis_percent, rp.hysteresis_percent, 5)::float8 AS hyst,
           coalesce(ro.enabled, rp.enabled, true) AS enabled
      FROM capacity_counters() c
      JOIN capacity_series s ON s.key = c.key
      LEFT JOIN capacity_alert_rules ro ON ro.project_id = s.project_id AND ro.object_id = s.object_id
      LEFT JOIN capacity_alert_rules rp ON rp.project_id = s.project_id AND rp.object_id IS NULL
     WHERE c.capacity > 0
  ),
  trend AS (
    SELECT t.series_id, t.slope, t.latest_used, t.latest_capacity
      -- An empty window without p_forecast: nothing is read then.
      FROM capacity_trend(p_at, CASE WHEN p_forecast THEN interval '7 days' ELSE interval '0' END) t
  ),
  cond AS (
    -- The hysteresis is at least one unit of the series (a machine, a claim, an address): on a
    -- 10-machine bucket 5 points is half a machine, and one machine more or less would flap.
    SELECT cur.*, 'warning' AS condition, 100 * used / capacity AS value, warn AS fire_at, warn - greatest(hyst, 100 / capacity) AS clear_below, true AS up
      FROM cur WHERE enabled
    UNION ALL
    SELECT cur.*, 'critical', 100 * used / capacity, crit, crit - greatest(hyst, 100 / capacity), true FROM cur WHERE enabled
    UNION ALL
    SELECT cur.*, 'forecast',
           CASE WHEN t.latest_used >= t.latest_capacity THEN 0
                WHEN t.slope > 0 THEN (t.latest_capacity - t.latest_used) / t.slope / 86400 ELSE 'Infinity'::float8 END,
           fdays, fdays * 1.25, false
      FROM cur JOIN trend t ON t.series_id = cur.id WHERE enabled AND p_forecast
  ),
  nxt AS (
    SELECT cond.*, coalesce(a.firing, false) AS was,
           CASE WHEN (cond.up AND cond.value >= cond.fire_at) OR (NOT cond.up AND cond.value <= cond.fire_at) THEN true
                WHEN (cond.up AND cond.value < cond.clear_below) OR (NOT cond.up AND cond.value > cond.clear_below) THEN false
                ELSE coalesce(a.firing, false) END AS firing
      FROM cond LEFT JOIN capacity_alerts a ON a.series_id = cond.id AND a.condition = cond.condition
  ),
  changed AS MATERIALIZED (
    SELECT nxt.*, gen_random_uuid() AS event_id,
           coalesce((SELECT n.name FROM networks n WHERE n.id = nxt.object_id), (SELECT p.name FROM ip_pools p WHERE p.id = nxt.object_id),
                    (SELECT c.name FROM clusters c WHERE c.id = nxt.object_id), nxt.resource_type) AS object_name
      FROM nxt WHERE firing <> was
  ),
  described AS MATERIALIZED (
    SELECT changed.*,
           CASE WHEN condition = 'forecast'
                THEN format('%s %s%s: full in %s days at the last 7 days'' rate (alert within %s days)', kind, object_name,
                            CASE WHEN family IS NULL THEN '' ELSE ' IPv' || family END,
                            CASE WHEN value = 'Infinity' THEN 'no' ELSE round(value::numeric, 1)::text END, fire_at)
                ELSE format('%s %s%s at %s %% (%s at %s %%)', kind, object_name, CASE WHEN family IS NULL THEN '' ELSE ' IPv' || family END,
                            round(value::numeric, 1), condition, fire_at) END AS message,
           jsonb_build_object('id', event_id, 'type', CASE WHEN firing THEN 'capacity.alert.firing' ELSE 'capacity.alert.resolved' END,
                              'at', p_at, 'projectId', project_id, 'series', key, 'kind', kind, 'object', object_name,
                              'family', family, 'resourceType', resource_type, 'condition', condition, 'firing', firing,
                              'value', CASE WHEN value = 'Infinity' THEN NULL ELSE value END, 'threshold', fire_at,
                              'used', used, 'capacity', capacity) AS body
      FROM changed
  ),
  state AS (
    INSERT INTO capacity_alerts AS a (series_id, condition, project_id, firing, since, value, threshold, message)
    SELECT id, condition, project_id, firing, p_at, CASE WHEN value = 'Infinity' THEN -1 ELSE value END, fire_at, message FROM described
    ON CONFLICT (series_id, condition) DO UPDATE
      SET firing = excluded.firing, since = excluded.since, value = excluded.value, threshold = excluded.threshold,
          message = excluded.message, transitions = a.transitions + 1
  ),
  audit AS (
    INSERT INTO events (actor_type, actor_id, actor_label, project_id, action, object_type, object_id, object_name, reason, after)
    SELECT 'system', NULL, 'capacity alerts', project_id, body->>'type', kind, object_id::text, object_name, message, body || jsonb_build_object('message', message)
      FROM described
  ),
  outbox AS (
    INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, payload)
    SELECT e.id, d.event_id, d.body->>'type', d.body || jsonb_build_object('message', d.message)
      FROM described d JOIN webhook_endpoints e ON e.enabled AND (e.project_id = d.project_id OR e.project_id IS NULL)
    RETURNING endpoint_id
  ),
  jobs AS (
    SELECT meridian_add_job('webhook__deliver', json_build_object('endpointId', endpoint_id), job_key => 'webhook:' || endpoint_id) AS job
      FROM (SELECT DISTINCT endpoint_id FROM outbox) o
  )
  SELECT (SELECT count(*)::int FROM described) + 0 * (SELECT count(*) FROM jobs)::int;
$$;
