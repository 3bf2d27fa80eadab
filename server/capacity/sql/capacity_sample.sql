-- Records one sample of every series at `p_at`, from capacity_counters() alone, in one statement:
-- series seen for the first time are created, then the sample goes into the 60-, 3600- and
-- 86400-second periods it falls in (each keeps the period's highest `used` and its latest
-- `capacity`). Sampling the same instant twice changes nothing. Returns the number of series sampled.
CREATE OR REPLACE FUNCTION capacity_sample(p_at timestamptz) RETURNS integer
LANGUAGE sql
AS $$
  WITH c AS MATERIALIZED (SELECT * FROM capacity_counters()),
  created AS (
    INSERT INTO capacity_series (key, kind, project_id, object_id, network_id, family, resource_type)
    SELECT c.key, c.kind, c.project_id, c.object_id, c.network_id, c.family, c.resource_type FROM c
     WHERE NOT EXISTS (SELECT 1 FROM capacity_series s WHERE s.key = c.key)
    ON CONFLICT (key) DO NOTHING
    RETURNING id, key
  ),
  -- Hash joins on the key (a merge join would sort 10,000 keys in the database's collation).
  v AS MATERIALIZED (
    SELECT s.id, c.used, c.capacity FROM c JOIN capacity_series s ON s.key = c.key
    UNION ALL
    SELECT cr.id, c.used, c.capacity FROM created cr JOIN c ON c.key = cr.key
  ),
  periods(step) AS (VALUES (60), (3600), (86400)),
  -- Only what changes a period's row goes to the upsert: ON CONFLICT locks (writes) every row it
  -- meets, even when its WHERE then leaves it alone, and most hours and days keep their peak.
  written AS (
    INSERT INTO capacity_samples AS cs (series_id, step, at, used, capacity)
    SELECT x.id, x.step, x.at, x.used, x.capacity
      FROM (SELECT v.id, periods.step, to_timestamp(floor(extract(epoch FROM p_at) / periods.step) * periods.step) AS at, v.used, v.capacity
              FROM v CROSS JOIN periods) x
      -- One primary-key probe per row (LIMIT keeps it a nested loop, never a scan of the history).
      LEFT JOIN LATERAL (SELECT o.used, o.capacity FROM capacity_samples o WHERE o.series_id = x.id AND o.step = x.step AND o.at = x.at LIMIT 1) old ON true
     WHERE old.used IS NULL OR old.used < x.used OR old.capacity <> x.capacity
    ON CONFLICT (series_id, step, at) DO UPDATE
      SET used = greatest(cs.used, excluded.used), capacity = excluded.capacity
      WHERE cs.used < excluded.used OR cs.capacity <> excluded.capacity
  )
  SELECT count(*)::int FROM v;
$$;
