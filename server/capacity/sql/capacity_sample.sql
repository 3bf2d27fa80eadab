-- Records one sample of the series at `p_at`, from capacity_counters() alone, in one statement:
-- series seen for the first time are created, then the sample goes into the 60-, 3600- and
-- 86400-second periods it falls in (each keeps the period's highest `used` and its latest
-- `capacity`). Sampling the same instant twice changes nothing. Returns the number of series sampled.
-- Samples the networks whose id is between p_lo and p_hi (both included), and the allowance buckets
-- when p_buckets: ('00000000-…', 'ffffffff-…', true) is every series; the paced sampler
-- (server/capacity/history.ts) covers them in parts.
--
-- PL/pgSQL so that its plan is made once per session (a paced sample calls it once per part; a SQL
-- function's body is planned again at every call).
CREATE OR REPLACE FUNCTION capacity_sample(p_at timestamptz, p_lo uuid, p_hi uuid, p_buckets boolean) RETURNS integer
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_n integer;
BEGIN
  WITH c AS MATERIALIZED (SELECT * FROM capacity_counters_in(p_lo, p_hi, p_buckets)),
  created AS (
    INSERT INTO capacity_series (key, kind, project_id, object_id, network_id, family, resource_type)
    SELECT c.key, c.kind, c.project_id, c.object_id, c.network_id, c.family, c.resource_type FROM c
     WHERE NOT EXISTS (SELECT 1 FROM capacity_series s WHERE s.key = c.key)
    ON CONFLICT (key) DO NOTHING
    RETURNING id, key
  ),
  ids AS (
    SELECT s.id, s.key FROM capacity_series s JOIN c ON c.key = s.key
    UNION ALL SELECT id, key FROM created
  ),
  v AS MATERIALIZED (SELECT ids.id, c.used, c.capacity FROM ids JOIN c ON c.key = ids.key),
  periods(step) AS (VALUES (60), (3600), (86400)),
  written AS (
    INSERT INTO capacity_samples AS cs (series_id, step, at, used, capacity)
    SELECT v.id, periods.step, to_timestamp(floor(extract(epoch FROM p_at) / periods.step) * periods.step), v.used, v.capacity
      FROM v CROSS JOIN periods
    ON CONFLICT (series_id, step, at) DO UPDATE
      SET used = greatest(cs.used, excluded.used), capacity = excluded.capacity
      WHERE cs.used < excluded.used OR cs.capacity <> excluded.capacity
  )
  SELECT count(*)::int INTO v_n FROM v;
  RETURN v_n;
END
$$;
