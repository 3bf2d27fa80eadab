-- Allocates from one pool, as server/ipam/blocks.ts documents (canonical buddy free set): locks the
-- pool row, picks the source free block (FirstFit: the lowest of the lowest block of each fitting
-- size; BestFit: the smallest fitting block, lowest first; pinned: the free block containing the
-- target), replaces it by its remainder (ipam_split), inserts the allocation (the exclusion
-- constraint checks it) and moves the pool's counters. Returns NULLs when the pool has no room (or
-- does not exist); raises 'MA001' when a pinned target is outside the pool and 'MA002' when it is
-- not entirely free.
--
-- plan_cache_mode: the write-path functions keep one plan per statement. A PL/pgSQL statement with
-- parameters is planned afresh for its first five runs and then kept on a generic plan only if that
-- looks no dearer than a custom one; for these statements (parameters taken from jsonb) it never
-- did, and PostgreSQL re-planned every statement of every call: a third of the CPU of a CNI ADD
-- (perf, bench/cni-add). Their plans do not depend on the values (each is a key look-up or a
-- per-pool index scan), so they are planned once per session.
CREATE OR REPLACE FUNCTION ipam_allocate(
  p_pool uuid, p_prefix int, p_pinned cidr, p_kind text, p_claim uuid, p_child_pool uuid,
  OUT o_allocation_id uuid, OUT o_cidr cidr, OUT o_size numeric)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_pool ip_pools%ROWTYPE;
  v_from cidr;
BEGIN
  SELECT * INTO v_pool FROM ip_pools WHERE id = p_pool FOR UPDATE;
  IF NOT FOUND THEN RETURN; END IF;
  IF p_pinned IS NOT NULL THEN
    IF NOT (v_pool.cidr >>= p_pinned) THEN
      RAISE EXCEPTION '% is outside pool %', p_pinned, v_pool.name USING ERRCODE = 'MA001';
    END IF;
    SELECT b.cidr INTO v_from FROM ip_free_blocks b
    WHERE b.pool_id = p_pool
      AND b.cidr = ANY (ARRAY(SELECT set_masklen(p_pinned, k) FROM generate_series(masklen(v_pool.cidr), masklen(p_pinned)) AS k))
    LIMIT 1;
    IF v_from IS NULL THEN
      RAISE EXCEPTION '% is not free in pool %', p_pinned, v_pool.name USING ERRCODE = 'MA002';
    END IF;
    o_cidr := p_pinned;
  ELSE
    IF v_pool.strategy = 'BestFit' THEN
      SELECT b.cidr INTO v_from FROM ip_free_blocks b
      WHERE b.pool_id = p_pool AND b.prefix_length <= p_prefix
      ORDER BY b.prefix_length DESC, b.cidr LIMIT 1;
    ELSE
      SELECT b.cidr INTO v_from
      FROM generate_series(masklen(v_pool.cidr), p_prefix) AS k(len)
      CROSS JOIN LATERAL (
        SELECT fb.cidr FROM ip_free_blocks fb WHERE fb.pool_id = p_pool AND fb.prefix_length = k.len ORDER BY fb.cidr LIMIT 1
      ) b
      ORDER BY b.cidr LIMIT 1;
    END IF;
    IF v_from IS NULL THEN RETURN; END IF;
    o_cidr := set_masklen(v_from, p_prefix);
  END IF;
  DELETE FROM ip_free_blocks WHERE pool_id = p_pool AND cidr = v_from;
  INSERT INTO ip_free_blocks (pool_id, cidr, prefix_length)
    SELECT p_pool, s, masklen(s) FROM ipam_split(v_from, o_cidr) AS s;
  o_size := trunc(power(2::numeric, (CASE family(o_cidr) WHEN 4 THEN 32 ELSE 128 END) - masklen(o_cidr)));
  INSERT INTO ip_allocations (pool_id, project_id, network_id, cidr, kind, claim_id, child_pool_id, size)
    VALUES (p_pool, v_pool.project_id, v_pool.network_id, o_cidr, p_kind, p_claim, p_child_pool, o_size)
    RETURNING id INTO o_allocation_id;
  UPDATE ip_pools SET allocated = allocated + o_size, allocation_count = allocation_count + 1 WHERE id = p_pool;
END
$$;
