-- Hand-written: CNI DEL / GC / cluster deletion as one statement (server/cni/leases.ts
-- releaseLeases). Releases the selected leases of a cluster — by attachment key ("mode": "key"),
-- by id ("ids") or all of them ("all") — in pool order (so two releases lock node blocks in one
-- order), returns node blocks left empty to their parent pools, and records one audit event.
-- Returns the released leases as [{containerId, ifname, address}]; releasing nothing is not an error.
CREATE OR REPLACE FUNCTION cni_lease_release(p jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_cluster uuid := (p->>'cluster')::uuid;
  v_lease record;
  v_block uuid;
  v_carve_id uuid;
  v_carve_pool uuid;
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
  -- Node blocks left empty go back to their parent pools (their pool rows are locked by now).
  FOR v_block IN SELECT id FROM ip_pools WHERE id = ANY (v_pools) AND allocated = 0 AND kind = 'NodeBlock' ORDER BY id LOOP
    SELECT id, pool_id INTO v_carve_id, v_carve_pool FROM ip_allocations WHERE child_pool_id = v_block;
    DELETE FROM node_blocks WHERE pool_id = v_block;
    DELETE FROM ip_pools WHERE id = v_block;
    IF v_carve_id IS NOT NULL THEN
      PERFORM ipam_release(v_carve_pool, v_carve_id);
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
