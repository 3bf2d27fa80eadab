-- Gives back what quota_admit took for the first `p_count` requests, and deletes its claim row
-- (`p_claim`; null when quota_admit wrote none).
CREATE OR REPLACE FUNCTION quota_unadmit(p_project uuid, p_requests jsonb, p_count int, p_claim uuid) RETURNS void
LANGUAGE sql
AS $$
  UPDATE allowance_buckets b
    SET allocated = b.allocated - (r.value->>'amount')::bigint, claim_count = b.claim_count - 1, updated_at = now()
    FROM jsonb_array_elements(p_requests) WITH ORDINALITY AS r(value, n)
    WHERE r.n <= p_count AND b.project_id = p_project AND b.resource_type = r.value->>'resourceType';
  DELETE FROM resource_claims WHERE id = p_claim;
$$;
