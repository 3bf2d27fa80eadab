-- Quota admission's decision (server/quota/admission.ts decideAdmission): per requested type, in
-- the order given (callers sort by type so two claims lock buckets in one order), the conditional
-- update `allocated + n <= limit`; then the Granted claim row. Returns, by `kind` (`granted` says
-- the same for SQL callers): {"kind": "granted", "granted": true, "id", "buckets": [...]},
-- {"kind": "exceeded", "granted": false, "index": i} for the first request without room, or
-- {"kind": "nameTaken", "granted": false, "nameTaken": true} when another object's live claim holds the name; raises a
-- unique violation on resource_claims_live_name, as a plain insert would, when the same object's
-- live claim holds it. A refusal leaves the buckets of the requests before it grown: the caller
-- rolls back (a single create raises) or gives them back (quota_unadmit).
--
-- The name check is the live-name unique index itself (ON CONFLICT), not a NOT EXISTS query: on
-- tables without statistics yet the planner answered such a query by scanning every live claim of
-- the project through another index.
CREATE OR REPLACE FUNCTION quota_admit(
  p_project uuid, p_name text, p_requests jsonb, p_kind text, p_ref_name text, p_ref_uid text, p_policy text, p_created_by text)
RETURNS jsonb
LANGUAGE plpgsql
-- Planned once per session: plan_cache_mode (see server/ipam/sql/ipam_allocate.sql).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_req jsonb;
  v_index int := 0;
  v_limit numeric;
  v_allocated numeric;
  v_buckets jsonb := '[]'::jsonb;
  v_allocations jsonb := '[]'::jsonb;
  v_message text;
  v_id uuid;
BEGIN
  FOR v_req IN SELECT value FROM jsonb_array_elements(p_requests) LOOP
    UPDATE allowance_buckets
      SET allocated = allocated + (v_req->>'amount')::bigint, claim_count = claim_count + 1, updated_at = now()
      WHERE project_id = p_project AND resource_type = v_req->>'resourceType' AND allocated + (v_req->>'amount')::bigint <= "limit"
      RETURNING "limit", allocated INTO v_limit, v_allocated;
    IF NOT FOUND THEN
      RETURN jsonb_build_object('kind', 'exceeded', 'granted', false, 'index', v_index);
    END IF;
    v_message := 'granted ' || (v_req->>'amount') || ' ' || (v_req->>'resourceType') || ' (allocated ' || v_allocated || ' of ' || v_limit || ')';
    v_buckets := v_buckets || jsonb_build_object('resourceType', v_req->>'resourceType', 'limit', v_limit, 'allocated', v_allocated);
    v_allocations := v_allocations || jsonb_build_object('resourceType', v_req->>'resourceType', 'amount', (v_req->>'amount')::bigint,
      'status', 'Granted', 'reason', 'QuotaAvailable', 'message', v_message);
    v_index := v_index + 1;
  END LOOP;
  -- The name check is the live-name unique index itself (ON CONFLICT), not a query the planner
  -- could answer by scanning the project's claims.
  INSERT INTO resource_claims (project_id, name, requests, status, reason, message, allocations, ref_kind, ref_name, ref_uid, policy_name, created_by)
    VALUES (p_project, p_name, p_requests, 'Granted', 'QuotaAvailable',
            (SELECT string_agg(a->>'message', '; ') FROM jsonb_array_elements(v_allocations) a),
            v_allocations, p_kind, p_ref_name, p_ref_uid, p_policy, p_created_by)
    ON CONFLICT (project_id, name) WHERE status = 'Granted' AND released_at IS NULL DO NOTHING
    RETURNING id INTO v_id;
  IF v_id IS NULL THEN
    -- A live claim holds the name. The same object's: a unique violation, as the insert would raise.
    IF EXISTS (SELECT 1 FROM resource_claims c
               WHERE c.project_id = p_project AND c.name = p_name AND c.status = 'Granted' AND c.released_at IS NULL
                 AND (c.ref_kind, c.ref_name) IS NOT DISTINCT FROM (p_kind, p_ref_name)) THEN
      RAISE EXCEPTION 'duplicate key value violates unique constraint "resource_claims_live_name"'
        USING ERRCODE = 'unique_violation', CONSTRAINT = 'resource_claims_live_name';
    END IF;
    RETURN jsonb_build_object('kind', 'nameTaken', 'granted', false, 'nameTaken', true);
  END IF;
  RETURN jsonb_build_object('kind', 'granted', 'granted', true, 'id', v_id, 'buckets', v_buckets);
END
$$;
