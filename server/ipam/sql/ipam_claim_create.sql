-- Creates and binds one IP claim in one statement (one round trip, one implicit transaction):
-- ipam_claim_try, with a quota refusal raised as 'MQ001' (DETAIL: the denied request's index) or
-- 'MQ002' (quota claim name taken), and a dry run raised as 'MD001' with the would-be result as
-- DETAIL, so that the statement, and everything it wrote, is undone. Returns the bound claim
-- ({"kind": "bound", ...}) or {"kind": "exhausted"}.
CREATE OR REPLACE FUNCTION ipam_claim_create(p jsonb) RETURNS jsonb
LANGUAGE plpgsql
-- Planned once per session: plan_cache_mode (see server/ipam/sql/ipam_allocate.sql).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_result jsonb := ipam_claim_try(p);
BEGIN
  IF v_result->>'refused' = 'quotaNameTaken' THEN
    RAISE EXCEPTION 'quota claim name taken' USING ERRCODE = 'MQ002';
  ELSIF v_result->>'refused' = 'quotaExceeded' THEN
    RAISE EXCEPTION 'quota exceeded' USING ERRCODE = 'MQ001', DETAIL = v_result->>'index';
  END IF;
  IF (p->>'dryRun')::boolean AND v_result->>'kind' = 'bound' THEN
    RAISE EXCEPTION 'dry run' USING ERRCODE = 'MD001', DETAIL = v_result::text;
  END IF;
  RETURN v_result;
END
$$;
