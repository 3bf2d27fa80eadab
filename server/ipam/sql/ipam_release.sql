-- Releases an allocation of pool `p_pool`: deletes it, merges the block with its free buddies while
-- a buddy is exactly a free block (server/ipam/blocks.ts mergeFree), inserts the merged block and
-- moves the counters back. Locks the pool row. Returns the released CIDR, or NULL when there was no
-- such allocation.
CREATE OR REPLACE FUNCTION ipam_release(p_pool uuid, p_allocation uuid) RETURNS cidr
LANGUAGE plpgsql
-- Planned once per session: plan_cache_mode (see server/ipam/sql/ipam_allocate.sql).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_root cidr;
  v_released cidr;
  v_size numeric;
  v_cur cidr;
  v_buddy cidr;
BEGIN
  SELECT cidr INTO v_root FROM ip_pools WHERE id = p_pool FOR UPDATE;
  IF NOT FOUND THEN RETURN NULL; END IF;
  DELETE FROM ip_allocations WHERE id = p_allocation AND pool_id = p_pool RETURNING cidr, size INTO v_released, v_size;
  IF v_released IS NULL THEN RETURN NULL; END IF;
  v_cur := v_released;
  WHILE masklen(v_cur) > masklen(v_root) LOOP
    v_buddy := ipam_buddy(v_cur);
    DELETE FROM ip_free_blocks WHERE pool_id = p_pool AND cidr = v_buddy;
    EXIT WHEN NOT FOUND;
    v_cur := set_masklen(v_cur, masklen(v_cur) - 1);
  END LOOP;
  INSERT INTO ip_free_blocks (pool_id, cidr, prefix_length) VALUES (p_pool, v_cur, masklen(v_cur));
  UPDATE ip_pools SET allocated = allocated - v_size, allocation_count = allocation_count - 1 WHERE id = p_pool;
  RETURN v_released;
END
$$;
