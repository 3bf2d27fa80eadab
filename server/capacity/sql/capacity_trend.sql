-- The trend of capacity series at `p_at`: the one forecast method, read by the alert evaluation
-- (capacity_alerts_evaluate.sql, every series) and by the console and REST (server/capacity/history.ts,
-- one series), so that an alert's "full within N days" and the displayed time to full never disagree.
--
-- Method: the least-squares line through the series' hourly peaks of the window (p_at − p_window to
-- p_at; the current hour's peak so far included), slope in units per second (NULL with fewer than
-- two points or all at one instant), projected from the latest sample at or before p_at (the
-- per-minute one when still kept, else the latest hourly peak). Times are taken relative to p_at so
-- the sums keep their precision in float8. `p_series` NULL: every series with a sample in the window.
CREATE OR REPLACE FUNCTION capacity_trend(p_at timestamptz, p_window interval, p_series bigint DEFAULT NULL)
RETURNS TABLE (series_id bigint, points integer, slope float8, latest_at timestamptz, latest_used float8, latest_capacity float8)
LANGUAGE sql STABLE
AS $$
  WITH pts AS (
    SELECT cs.series_id, extract(epoch FROM cs.at - p_at)::float8 AS t, cs.used::float8 AS u
      FROM capacity_samples cs
     WHERE cs.step = 3600 AND cs.at > p_at - p_window AND cs.at <= p_at AND (p_series IS NULL OR cs.series_id = p_series)
  ),
  m AS (
    SELECT pts.series_id, avg(t) AS mt, avg(u) AS mu, count(*)::int AS n FROM pts GROUP BY pts.series_id
  ),
  fit AS (
    SELECT m.series_id, m.n, sum((p.t - m.mt) * (p.u - m.mu)) / nullif(sum((p.t - m.mt) ^ 2), 0) AS slope
      FROM m JOIN pts p ON p.series_id = m.series_id GROUP BY m.series_id, m.n
  )
  SELECT fit.series_id, fit.n, CASE WHEN fit.n >= 2 THEN fit.slope END, l.at, l.used::float8, l.capacity::float8
    FROM fit
    CROSS JOIN LATERAL (
      SELECT x.at, x.used, x.capacity FROM (
        (SELECT at, used, capacity FROM capacity_samples WHERE capacity_samples.series_id = fit.series_id AND step = 60 AND at <= p_at ORDER BY at DESC LIMIT 1)
        UNION ALL
        (SELECT at, used, capacity FROM capacity_samples WHERE capacity_samples.series_id = fit.series_id AND step = 3600 AND at <= p_at ORDER BY at DESC LIMIT 1)
      ) x ORDER BY x.at DESC LIMIT 1
    ) l;
$$;
