-- A CNI ADD (cni_lease_add) that confirms, in the transaction that writes it, what the REST route
-- did not read again: its cluster and the token it came with ("token": the api_tokens id).
--
-- A cluster's deletion and its CNI ADDs and block carves serialize on the cluster's row: deleting a
-- cluster (server/cni/clusters.ts deleteCluster) locks its row FOR UPDATE and, in that one
-- transaction, revokes its tokens and sets its deletion_timestamp; its leases and blocks are then
-- released in batches and the row deleted last. Every ADD and carve first locks its cluster's row
-- FOR KEY SHARE (which the ADD's own foreign keys take anyway, only later). An ADD in flight
-- finishes before the deletion is marked, and its lease is then released by it; one that comes
-- after finds the cluster being deleted, or gone, and answers {"clusterGone": true}, changing
-- nothing.
--
-- The token's role is api_token_roles', read after the lock (a token revoked by a deletion that
-- committed meanwhile is seen revoked): none answers {"tokenRevoked": true} (401), below editor (an
-- ADD writes) {"tokenForbidden": true} (403); either takes precedence over clusterGone (a cluster
-- token is revoked with its cluster) and changes nothing. So the REST route may act on a cluster
-- token it verified a moment ago (server/tenancy/tokens.ts keeps verified cluster tokens for 30 s)
-- instead of reading the token again before every ADD. (A revocation committing while the ADD
-- waits for its node's block locks, after the check, does not stop it: nor did a separate look-up
-- before the ADD.)
CREATE OR REPLACE FUNCTION cni_lease_add_confirmed(p jsonb) RETURNS jsonb
LANGUAGE plpgsql
-- Planned once per session: plan_cache_mode (see server/ipam/sql/ipam_allocate.sql).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_cluster_live boolean;
  v_role member_role;
BEGIN
  -- A cluster whose deletion was asked for is gone for ADDs (its deletion marks it under FOR UPDATE,
  -- so this lock waits for that and then reads the mark).
  SELECT deletion_timestamp IS NULL INTO v_cluster_live FROM clusters WHERE id = (p->>'cluster')::uuid FOR KEY SHARE;
  v_cluster_live := coalesce(v_cluster_live, false);
  -- After the lock: a token revoked by a deletion that committed meanwhile is seen revoked here.
  IF p ? 'token' THEN
    SELECT r.role INTO v_role FROM api_token_roles((p->>'token')::uuid) r;
    IF v_role IS NULL THEN
      RETURN '{"tokenRevoked": true}'::jsonb;
    END IF;
    IF v_role < 'editor' THEN
      RETURN '{"tokenForbidden": true}'::jsonb;
    END IF;
  END IF;
  IF NOT v_cluster_live THEN
    RETURN '{"clusterGone": true}'::jsonb;
  END IF;
  RETURN cni_lease_add(p);
END
$$;
