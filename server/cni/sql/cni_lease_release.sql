-- CNI DEL / GC / cluster deletion as one statement (server/cni/leases.ts releaseLeases). Releases
-- the selected leases of a cluster (by attachment key, "mode": "key"; by id, "ids"; or all of them,
-- "all") and records one audit event.
-- Returns the released leases as [{containerId, ifname, address}]; releasing nothing is not an error.
--
-- A node keeps a block that a DEL empties for a grace period ("blockGraceSeconds"): returning a block
-- the moment its last pod went made a node whose pods restart one at a time carve a new block
-- (under the network pool's lock) on every ADD and return it on every DEL (bench/load). So an
-- emptied block's return is scheduled (`cni__return_block` at now + the grace, one pending job per
-- block, which returns it only if it is still empty: cni_node_block_return), and an ADD in the
-- meantime simply uses it. Releasing all of a cluster's leases (its deletion) and a grace of 0
-- return emptied blocks at once.
CREATE OR REPLACE FUNCTION cni_lease_release(p jsonb) RETURNS jsonb
LANGUAGE plpgsql
-- Planned once per session: plan_cache_mode (see server/ipam/sql/ipam_allocate.sql).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_cluster uuid := (p->>'cluster')::uuid;
  v_grace int := coalesce((p->>'blockGraceSeconds')::int, 0);
  v_lease record;
  v_block uuid;
  v_pools uuid[] := '{}';
  v_released jsonb := '[]'::jsonb;
  v_addresses jsonb := '[]'::jsonb;
BEGIN
  FOR v_lease IN
    SELECT id, pool_id, allocation_id, address, container_id, ifname FROM pod_leases
    WHERE cluster_id = v_cluster
      AND CASE p->>'mode'
            WHEN 'key' THEN cni_network = p->>'cniNetwork' AND container_id = p->>'containerId' AND ifname = p->>'ifname'
            WHEN 'ids' THEN id = ANY (ARRAY(SELECT jsonb_array_elements_text(p->'ids'))::uuid[])
            ELSE true
          END
    -- The CNI lock order (server/cni/leases.ts): leases by node, family and address, so their node
    -- blocks are locked by (node, family, cidr) as ADD batches lock them (a node's blocks of one family
    -- are disjoint: address order is block order). In any other order (pool ids, say) a DEL of a
    -- dual-stack pod would take its IPv6 block before its IPv4 one half the time, and a GC a node's
    -- blocks at random, while an ADD holds the first and waits for the second: a deadlock.
    ORDER BY node COLLATE "C", family, address, id
    FOR UPDATE
  LOOP
    DELETE FROM pod_leases WHERE id = v_lease.id;
    PERFORM ipam_release(v_lease.pool_id, v_lease.allocation_id);
    v_pools := v_pools || v_lease.pool_id;
    v_released := v_released || jsonb_build_object('containerId', v_lease.container_id, 'ifname', v_lease.ifname, 'address', v_lease.address::text);
    v_addresses := v_addresses || to_jsonb(v_lease.address::text);
  END LOOP;
  -- Node blocks left empty (their pool rows are locked by now): back to their parent pools now, or
  -- after the grace period if no pod has come meanwhile.
  -- Returned in parent order, so parent pools are locked by id, after every block (the lock order).
  FOR v_block IN
    SELECT id FROM ip_pools WHERE id = ANY (v_pools) AND allocated = 0 AND kind = 'NodeBlock' ORDER BY parent_pool_id, cidr
  LOOP
    IF p->>'mode' = 'all' OR v_grace <= 0 THEN
      PERFORM cni_node_block_return(v_block);
    ELSE
      PERFORM meridian_add_job('cni__return_block', json_build_object('poolId', v_block),
        run_at => now() + make_interval(secs => v_grace), job_key => 'cni-return-block:' || v_block, job_key_mode => 'replace');
    END IF;
  END LOOP;
  IF jsonb_array_length(v_released) > 0 THEN
    INSERT INTO events (actor_type, actor_id, actor_label, project_id, action, object_type, object_id, object_name, before)
      VALUES (p#>>'{actor,type}', p#>>'{actor,id}', p#>>'{actor,label}', (p->>'project')::uuid, p->>'action', 'podLease', v_cluster::text,
              p->>'objectName', jsonb_build_object('addresses', v_addresses));
  END IF;
  RETURN v_released;
END
$$;
