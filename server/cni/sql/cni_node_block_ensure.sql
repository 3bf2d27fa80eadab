-- Makes sure a node has room for an address of one family, as one statement: under the node's
-- advisory lock, when none of its blocks has room ('needed') or none has more than a quarter of its
-- room left ('spare'), carves the next block from the network's pools (largest prefix first:
-- preferred size, then smaller blocks down to minPrefix), creates its NodeBlock pool with the
-- leading and trailing reservations and the free set in between, records it as the node's, and
-- schedules its return check after the grace period (a block carved ahead of need may never be
-- used). Returns {"room": true}, {"carved": {"pool", "cidr"}} or {"exhausted": true}.
-- Called only through cni_node_block_ensure_locked, which locks the cluster's row first.
CREATE OR REPLACE FUNCTION cni_node_block_ensure(p jsonb) RETURNS jsonb
LANGUAGE plpgsql
-- Planned once per session: plan_cache_mode (see server/ipam/sql/ipam_allocate.sql).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_cluster uuid := (p->>'cluster')::uuid;
  v_node text := p->>'node';
  v_family int := (p->>'family')::int;
  v_bits int := CASE (p->>'family')::int WHEN 4 THEN 32 ELSE 128 END;
  v_leading int := (p->>'reserveLeading')::int;
  v_trailing int := (p->>'reserveTrailing')::int;
  v_preferred int := (p->>'preferredPrefix')::int;
  v_grace numeric := (p->>'blockGraceSeconds')::numeric;
  v_prefix int;
  v_parent record;
  v_pool uuid;
  v_alloc uuid;
  v_block cidr;
  v_first inet;
  v_last inet;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('node-block:' || v_cluster || ':' || v_node || ':' || v_family, 0));
  PERFORM 1 FROM node_blocks b JOIN ip_pools bp ON bp.id = b.pool_id
  WHERE b.cluster_id = v_cluster AND b.node = v_node AND b.family = v_family
    AND CASE WHEN p->>'mode' = 'spare' THEN bp.capacity - bp.allocated > bp.capacity / 4 ELSE bp.allocated < bp.capacity END
  LIMIT 1;
  IF FOUND THEN
    RETURN jsonb_build_object('room', true);
  END IF;
  -- The pools a block may come from, locked by id before any is tried (the CNI lock order,
  -- server/cni/leases.ts): a block's return locks its parent last, and returns of many blocks
  -- lock their parents by id; trying them in size order while holding the ones tried could close a cycle.
  PERFORM 1 FROM ip_pools
  WHERE network_id = (p->>'network')::uuid AND family = v_family AND kind <> 'NodeBlock'
  ORDER BY id FOR UPDATE;
  FOR v_prefix IN v_preferred .. greatest(v_preferred, (p->>'minPrefix')::int) LOOP
    FOR v_parent IN
      -- The network's default child pools first, then its roots: a child pool carved for a purpose
      -- (not marked default) never gives pod blocks (as claims naming no pool, server/ipam/claims.ts).
      SELECT id, min_prefix_length FROM ip_pools
      WHERE network_id = (p->>'network')::uuid AND family = v_family AND kind <> 'NodeBlock'
        AND (parent_pool_id IS NULL OR is_default)
      ORDER BY is_default DESC, masklen(cidr) DESC, cidr
    LOOP
      CONTINUE WHEN v_prefix < v_parent.min_prefix_length OR v_prefix > v_bits;
      -- The block's pool id is chosen first so the carve (taken under the parent's lock) names it.
      v_pool := gen_random_uuid();
      SELECT o_allocation_id, o_cidr INTO v_alloc, v_block FROM ipam_allocate(v_parent.id, v_prefix, NULL, 'PoolCarve', NULL, v_pool);
      CONTINUE WHEN v_alloc IS NULL;
      v_first := set_masklen(v_block, v_bits);
      v_last := set_masklen(broadcast(v_block), v_bits);
      INSERT INTO ip_pools (id, project_id, network_id, parent_pool_id, name, kind, cidr, family, min_prefix_length, max_prefix_length,
                            default_prefix_length, strategy, reserve_leading, reserve_trailing, capacity)
        VALUES (v_pool, (p->>'project')::uuid, (p->>'network')::uuid, v_parent.id,
                left('node-' || (p->>'clusterName') || '-' || v_node || '-' || translate(v_block::text, '/:.', '---'), 200),
                'NodeBlock', v_block, v_family, v_bits, v_bits, v_bits, 'FirstFit', v_leading, v_trailing,
                trunc(power(2::numeric, v_bits - masklen(v_block))) - v_leading - v_trailing);
      INSERT INTO ip_free_blocks (pool_id, cidr, prefix_length)
        SELECT v_pool, b, masklen(b) FROM ipam_range_blocks(v_first + v_leading, v_last - v_trailing) AS b;
      INSERT INTO ip_allocations (pool_id, project_id, network_id, cidr, kind, size)
        SELECT v_pool, (p->>'project')::uuid, (p->>'network')::uuid, r, 'Reservation', trunc(power(2::numeric, v_bits - masklen(r)))
        FROM (SELECT ipam_range_blocks(v_first, v_first + (v_leading - 1)) AS r WHERE v_leading > 0
              UNION ALL
              SELECT ipam_range_blocks(v_last - (v_trailing - 1), v_last) WHERE v_trailing > 0) res;
      INSERT INTO node_blocks (pool_id, cluster_id, node, family) VALUES (v_pool, v_cluster, v_node, v_family);
      IF v_grace > 0 THEN
        PERFORM meridian_add_job('cni__return_block', json_build_object('poolId', v_pool),
          run_at => now() + make_interval(secs => v_grace), job_key => 'cni-return-block:' || v_pool, job_key_mode => 'replace');
      END IF;
      RETURN jsonb_build_object('carved', jsonb_build_object('pool', v_pool, 'cidr', v_block::text));
    END LOOP;
  END LOOP;
  RETURN jsonb_build_object('exhausted', true);
END
$$;
