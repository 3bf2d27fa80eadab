-- A batch of confirmed CNI ADDs (cni_lease_add_confirmed, for cni_lease_add_many): its clusters
-- locked FOR KEY SHARE in one order (so batches never deadlock on them), then each ADD refused whose
-- token has no role ({"tokenRevoked": true}), a role below editor ({"tokenForbidden": true}) or whose
-- cluster is gone or being deleted ({"clusterGone": true}), each token's role read once; the others go to
-- cni_lease_add_many, and the answers come back in the order given.
CREATE OR REPLACE FUNCTION cni_lease_add_many_confirmed(p_items jsonb) RETURNS jsonb
LANGUAGE plpgsql
-- Planned once per session: plan_cache_mode (see server/ipam/sql/ipam_allocate.sql).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_clusters uuid[];
  v_answer jsonb[];
  v_answers jsonb;
  v_out jsonb := '[]'::jsonb;
  v_next int := 0;
BEGIN
  SELECT array_agg(c.id) INTO v_clusters FROM (
    SELECT id, deletion_timestamp FROM clusters
    WHERE id IN (SELECT (x->>'cluster')::uuid FROM jsonb_array_elements(p_items) AS x)
    ORDER BY id
    FOR KEY SHARE) c
  -- Read after the lock: a cluster whose deletion was asked for is gone for ADDs.
  WHERE c.deletion_timestamp IS NULL;
  -- After the locks: a token revoked by a deletion that committed meanwhile is seen revoked here.
  SELECT array_agg(CASE WHEN x.v ? 'token' AND t.role IS NULL THEN '{"tokenRevoked": true}'::jsonb
                        WHEN x.v ? 'token' AND t.role < 'editor' THEN '{"tokenForbidden": true}'::jsonb
                        WHEN NOT (x.v->>'cluster')::uuid = ANY (coalesce(v_clusters, '{}')) THEN '{"clusterGone": true}'::jsonb
                   END ORDER BY x.i) INTO v_answer
  FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(v, i)
  -- Each token read once per batch, however many of its ADDs the batch holds (a node's, a cluster's).
  LEFT JOIN (
    SELECT k.token, r.role
    FROM (SELECT DISTINCT (y->>'token')::uuid AS token FROM jsonb_array_elements(p_items) AS y WHERE y ? 'token') k
    LEFT JOIN LATERAL (SELECT r.role FROM api_token_roles(k.token) r) r ON true
  ) t ON x.v ? 'token' AND t.token = (x.v->>'token')::uuid;
  IF NOT EXISTS (SELECT 1 FROM unnest(v_answer) AS a WHERE a IS NOT NULL) THEN
    RETURN cni_lease_add_many(p_items);
  END IF;
  IF EXISTS (SELECT 1 FROM unnest(v_answer) AS a WHERE a IS NULL) THEN
    v_answers := cni_lease_add_many((SELECT jsonb_agg(x.v ORDER BY x.i) FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(v, i)
                                     WHERE v_answer[x.i::int] IS NULL));
  END IF;
  FOR k IN 1 .. array_length(v_answer, 1) LOOP
    IF v_answer[k] IS NULL THEN
      v_out := v_out || jsonb_build_array(v_answers->v_next);
      v_next := v_next + 1;
    ELSE
      v_out := v_out || jsonb_build_array(v_answer[k]);
    END IF;
  END LOOP;
  RETURN v_out;
END
$$;
