-- Hand-written: a CNI ADD as one statement when the node already has room (the common case).
-- server/cni/leases.ts addLease calls it first and falls back to its transaction (which carves a
-- new node block under an advisory lock) only when it raises 'MC001'.
--
-- For each family the cluster's network offers (its root pools): the attachment's existing lease,
-- else an address from one of the node's blocks with room (ipam_allocate locks the block's pool
-- row), recorded as a lease; then one audit event for what was created. Returns
-- {"addresses": [{family, address, block}]} or {"noPools": true}. Raises 'MC001' (DETAIL: the
-- families without room) when a family needs a new node block: the statement, and so everything
-- it wrote, is undone. A concurrent ADD of the same key fails on the unique attachment index
-- (23505) and the caller retries, finding the winner's lease.
CREATE OR REPLACE FUNCTION cni_lease_add(p jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_cluster uuid := (p->>'cluster')::uuid;
  v_family int;
  v_bits int;
  v_lease record;
  v_block record;
  v_alloc_id uuid;
  v_alloc_cidr cidr;
  v_out jsonb := '[]'::jsonb;
  v_created jsonb := '[]'::jsonb;
  v_missing int[] := '{}';
  v_families int := 0;
BEGIN
  FOR v_family IN
    SELECT DISTINCT family FROM ip_pools WHERE network_id = (p->>'network')::uuid AND parent_pool_id IS NULL ORDER BY family
  LOOP
    v_families := v_families + 1;
    v_bits := CASE v_family WHEN 4 THEN 32 ELSE 128 END;
    SELECT l.address, bp.cidr AS block INTO v_lease
    FROM pod_leases l JOIN ip_pools bp ON bp.id = l.pool_id
    WHERE l.cluster_id = v_cluster AND l.cni_network = p->>'cniNetwork' AND l.container_id = p->>'containerId'
      AND l.ifname = p->>'ifname' AND l.family = v_family;
    IF FOUND THEN
      v_out := v_out || jsonb_build_object('family', v_family, 'address', v_lease.address::text, 'block', v_lease.block::text);
      CONTINUE;
    END IF;
    v_alloc_id := NULL;
    FOR v_block IN
      SELECT b.pool_id, bp.cidr FROM node_blocks b JOIN ip_pools bp ON bp.id = b.pool_id
      WHERE b.cluster_id = v_cluster AND b.node = p->>'node' AND b.family = v_family AND bp.allocated < bp.capacity
      ORDER BY bp.cidr LIMIT 4
    LOOP
      SELECT o_allocation_id, o_cidr INTO v_alloc_id, v_alloc_cidr FROM ipam_allocate(v_block.pool_id, v_bits, NULL, 'PodAddress', NULL, NULL);
      EXIT WHEN v_alloc_id IS NOT NULL;
    END LOOP;
    IF v_alloc_id IS NULL THEN
      v_missing := v_missing || v_family;
      CONTINUE;
    END IF;
    INSERT INTO pod_leases (project_id, cluster_id, cni_network, container_id, ifname, family, pool_id, allocation_id, address,
                            pod_namespace, pod_name, node)
      VALUES ((p->>'project')::uuid, v_cluster, p->>'cniNetwork', p->>'containerId', p->>'ifname', v_family, v_block.pool_id,
              v_alloc_id, v_alloc_cidr, p->>'podNamespace', p->>'podName', p->>'node');
    v_out := v_out || jsonb_build_object('family', v_family, 'address', v_alloc_cidr::text, 'block', v_block.cidr::text);
    v_created := v_created || to_jsonb(v_alloc_cidr::text);
  END LOOP;
  IF v_families = 0 THEN
    RETURN jsonb_build_object('noPools', true);
  END IF;
  IF cardinality(v_missing) > 0 THEN
    RAISE EXCEPTION 'node % needs a new block', p->>'node' USING ERRCODE = 'MC001', DETAIL = array_to_string(v_missing, ',');
  END IF;
  IF jsonb_array_length(v_created) > 0 THEN
    INSERT INTO events (actor_type, actor_id, actor_label, project_id, action, object_type, object_id, object_name, after)
      VALUES (p#>>'{actor,type}', p#>>'{actor,id}', p#>>'{actor,label}', (p->>'project')::uuid, 'cni.add', 'podLease', v_cluster::text,
              p->>'objectName', jsonb_build_object('addresses', v_created, 'node', p->>'node', 'pod', p->'pod'));
  END IF;
  RETURN jsonb_build_object('addresses', v_out);
END
$$;
