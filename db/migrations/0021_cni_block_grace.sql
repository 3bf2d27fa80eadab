-- Hand-written: a node keeps its emptied address block for a grace period. Returning a block the
-- moment its last pod goes made a node whose pods restart one at a time carve a new block (under
-- the network pool's lock) on every ADD and return it on every DEL (bench/load). Now a DEL that
-- empties a block schedules its return (`cni__return_block`, run_at = now + blockGraceSeconds,
-- one pending job per block); the job returns it only if it is still empty, and an ADD in the
-- meantime simply uses it. Releasing all of a cluster's leases (its deletion) and a grace of 0
-- return emptied blocks at once, as before.

-- Returns an empty node block to the pool it was carved from; false (and nothing changed) when the
-- block is gone or holds addresses. Locks the block, then its parent pool, as a DEL does.
CREATE OR REPLACE FUNCTION cni_node_block_return(p_block uuid) RETURNS boolean
LANGUAGE plpgsql AS $$
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
--> statement-breakpoint
ALTER FUNCTION cni_node_block_return(uuid) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
-- cni_lease_release as in 0015, with emptied blocks returned now only for mode "all" or a grace of 0.
CREATE OR REPLACE FUNCTION cni_lease_release(p jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
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
    ORDER BY pool_id, id
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
  FOR v_block IN SELECT id FROM ip_pools WHERE id = ANY (v_pools) AND allocated = 0 AND kind = 'NodeBlock' ORDER BY id LOOP
    IF p->>'mode' = 'all' OR v_grace <= 0 THEN
      PERFORM cni_node_block_return(v_block);
    ELSE
      PERFORM graphile_worker.add_job('cni__return_block', json_build_object('poolId', v_block),
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
--> statement-breakpoint
ALTER FUNCTION cni_lease_release(jsonb) SET plan_cache_mode = force_generic_plan;
