-- Returns an empty node block to the pool it was carved from; false (and nothing changed) when the
-- block is gone or holds addresses. Locks the block, then its parent pool, as a DEL does. Called by
-- cni_lease_release and by the `cni__return_block` job (server/cni/leases.ts returnNodeBlockIfEmpty).
CREATE OR REPLACE FUNCTION cni_node_block_return(p_block uuid) RETURNS boolean
LANGUAGE plpgsql
-- Planned once per session: plan_cache_mode (see server/ipam/sql/ipam_allocate.sql).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_carve_id uuid;
  v_carve_pool uuid;
BEGIN
  PERFORM 1 FROM ip_pools WHERE id = p_block AND kind = 'NodeBlock' AND allocated = 0 FOR UPDATE;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  SELECT id, pool_id INTO v_carve_id, v_carve_pool FROM ip_allocations WHERE child_pool_id = p_block;
  DELETE FROM node_blocks WHERE pool_id = p_block;
  DELETE FROM ip_pools WHERE id = p_block;
  IF v_carve_id IS NOT NULL THEN
    PERFORM ipam_release(v_carve_pool, v_carve_id);
  END IF;
  RETURN true;
END
$$;
