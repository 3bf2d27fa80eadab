-- IP claim creates in batches (group commit; server/ipam/claim-batch.ts). Every claim of a project
-- meets the others on its quota bucket row, and every claim of a network on its pool rows; both
-- locks are held until commit. One by one, each claim waits for the previous claim's commit, and a
-- crowd of waiters on one row costs PostgreSQL more CPU in its lock manager than the claims
-- themselves; a batch takes the rows once and pays one commit.
--
-- Many claims (not pinned, not dry runs), in the order given (the caller orders them by project and
-- network, so concurrent batches lock rows in one order); ipam_claim_try's results in that order.
-- Quota is decided for the whole batch at once when its buckets have room for all of it
-- (quota_admit_many), else claim by claim.
CREATE OR REPLACE FUNCTION ipam_claim_create_many(p_items jsonb) RETURNS jsonb
LANGUAGE plpgsql
-- Planned once per session: plan_cache_mode (see server/ipam/sql/ipam_allocate.sql).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_admitted jsonb;
  v_item jsonb;
  v_n int;
  v_out jsonb[] := '{}';
BEGIN
  -- Every name first (in one order), then every pool the batch may draw from (by id), then the
  -- buckets: the order a single create and a deletion take them in.
  PERFORM pg_advisory_xact_lock(h) FROM (
    SELECT DISTINCT hashtextextended('ipclaim:' || (i->>'project') || ':' || coalesce(i->>'key', i->>'name'), 0) AS h
    FROM jsonb_array_elements(p_items) i) names
    ORDER BY h;
  PERFORM 1 FROM ip_pools
    WHERE id IN (SELECT (c->>'pool')::uuid FROM jsonb_array_elements(p_items) i, jsonb_array_elements(i->'candidates') c)
    ORDER BY id FOR UPDATE;
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_items) i WHERE jsonb_typeof(i->'quota') = 'object') THEN
    v_admitted := quota_admit_many(p_items);
  END IF;
  -- Collected in an array (appending to a jsonb value would copy it whole for every claim).
  FOR v_item, v_n IN SELECT value, ordinality - 1 FROM jsonb_array_elements(p_items) WITH ORDINALITY LOOP
    v_out := v_out || ipam_claim_try(v_item, nullif(v_admitted->v_n, 'null'::jsonb));
  END LOOP;
  RETURN to_jsonb(v_out);
END
$$;
