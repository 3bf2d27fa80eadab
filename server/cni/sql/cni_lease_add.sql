-- One CNI ADD as one statement, when the node already has room (the common case). For each family
-- the cluster's network offers (its root pools): the attachment's existing lease, else an address
-- from the node's first block with room. It first finds, and locks, a block with room for every
-- family it must allocate, and only then writes: a family without one returns {"needsBlock":
-- [families]} with nothing written (server/cni/leases.ts addLease then carves a block with
-- cni_node_block_ensure_locked and calls again). Otherwise it takes each address from its block
-- (below: what ipam_allocate does, for one address of a block already locked) and records the leases
-- and one audit event, and returns {"addresses": [{family, address, block}]}, or
-- {"noPools": true} when the network has no pools. An ADD that takes an address from the last
-- quarter of the node's last block with room says so ("lowOnRoom": [families]): addLease then
-- carves the node's next block in the background, so the node's ADDs rarely wait for a carve.
-- A concurrent ADD of the same key fails on the unique attachment index (23505) and the caller
-- retries, finding the winner's lease.
--
-- Called through cni_lease_add_confirmed: for an ADD alone, and for each ADD of a batch whose
-- set-based statement (cni_lease_add_many) failed (db/batch.ts then runs them one by one).
CREATE OR REPLACE FUNCTION cni_lease_add(p jsonb) RETURNS jsonb
LANGUAGE plpgsql
-- Planned once per session: plan_cache_mode (see server/ipam/sql/ipam_allocate.sql).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_cluster uuid := (p->>'cluster')::uuid;
  v_node text := p->>'node';
  v_family int;
  v_lease record;
  v_block record;
  v_pool uuid;
  v_from cidr;
  v_alloc_cidr cidr;
  v_out jsonb := '[]'::jsonb;
  v_created jsonb := '[]'::jsonb;
  v_missing int[] := '{}';
  v_families int := 0;
  v_todo jsonb := '[]'::jsonb;
  v_item jsonb;
  v_low int[] := '{}';
BEGIN
  -- First what exists and where each missing address would come from (the block's row locked),
  -- writing nothing: a family without a block with room means nothing is written at all.
  FOR v_family IN
    SELECT DISTINCT family FROM ip_pools WHERE network_id = (p->>'network')::uuid AND parent_pool_id IS NULL ORDER BY family
  LOOP
    v_families := v_families + 1;
    SELECT l.address, bp.cidr AS block INTO v_lease
    FROM pod_leases l JOIN ip_pools bp ON bp.id = l.pool_id
    WHERE l.cluster_id = v_cluster AND l.cni_network = p->>'cniNetwork' AND l.container_id = p->>'containerId'
      AND l.ifname = p->>'ifname' AND l.family = v_family;
    IF FOUND THEN
      v_out := v_out || jsonb_build_object('family', v_family, 'address', v_lease.address::text, 'block', v_lease.block::text);
      CONTINUE;
    END IF;
    SELECT b.pool_id, bp.cidr, bp.capacity - bp.allocated AS free, bp.capacity INTO v_block
    FROM node_blocks b JOIN ip_pools bp ON bp.id = b.pool_id
    WHERE b.cluster_id = v_cluster AND b.node = v_node AND b.family = v_family AND bp.allocated < bp.capacity
    ORDER BY bp.cidr LIMIT 1
    FOR UPDATE OF bp;
    IF NOT FOUND THEN
      v_missing := v_missing || v_family;
    ELSE
      v_todo := v_todo || jsonb_build_object('family', v_family, 'pool', v_block.pool_id, 'block', v_block.cidr::text);
      -- The last quarter of the node's last block with room: ask for the next block ahead of need.
      IF v_block.free - 1 <= v_block.capacity / 4 AND NOT EXISTS (
        SELECT 1 FROM node_blocks b JOIN ip_pools bp ON bp.id = b.pool_id
        WHERE b.cluster_id = v_cluster AND b.node = v_node AND b.family = v_family AND bp.allocated < bp.capacity
          AND b.pool_id <> v_block.pool_id) THEN
        v_low := v_low || v_family;
      END IF;
    END IF;
  END LOOP;
  IF v_families = 0 THEN
    RETURN jsonb_build_object('noPools', true);
  END IF;
  IF cardinality(v_missing) > 0 THEN
    RETURN jsonb_build_object('needsBlock', to_jsonb(v_missing));
  END IF;
  FOR v_item IN SELECT value FROM jsonb_array_elements(v_todo) LOOP
    v_family := (v_item->>'family')::int;
    v_pool := (v_item->>'pool')::uuid;
    -- A node block holds single addresses only, and its row is locked above: its FirstFit address is
    -- the first address of its lowest free block, which gives way to what is left of it (ipam_split).
    -- Four statements where ipam_allocate's general path (any size, pinned or BestFit, the pool row
    -- locked and read again, one probe per block size) takes seven: bench/cni-lone-add.
    DELETE FROM ip_free_blocks
    WHERE pool_id = v_pool AND cidr = (SELECT f.cidr FROM ip_free_blocks f WHERE f.pool_id = v_pool ORDER BY f.cidr LIMIT 1)
    RETURNING cidr INTO v_from;
    IF v_from IS NULL THEN
      RAISE EXCEPTION 'node block % has no free address although its counters say so', v_item->>'block' USING ERRCODE = 'MC002';
    END IF;
    v_alloc_cidr := set_masklen(v_from, CASE v_family WHEN 4 THEN 32 ELSE 128 END);
    IF v_alloc_cidr <> v_from THEN
      INSERT INTO ip_free_blocks (pool_id, cidr, prefix_length)
        SELECT v_pool, s, masklen(s) FROM ipam_split(v_from, v_alloc_cidr) AS s;
    END IF;
    -- The allocation (the exclusion constraint checks it) and the lease that owns it, in one statement.
    WITH a AS (
      INSERT INTO ip_allocations (pool_id, project_id, network_id, cidr, kind, size)
        VALUES (v_pool, (p->>'project')::uuid, (p->>'network')::uuid, v_alloc_cidr, 'PodAddress', 1)
        RETURNING id
    )
    INSERT INTO pod_leases (project_id, cluster_id, cni_network, container_id, ifname, family, pool_id, allocation_id, address,
                            pod_namespace, pod_name, node)
      SELECT (p->>'project')::uuid, v_cluster, p->>'cniNetwork', p->>'containerId', p->>'ifname', v_family, v_pool,
             a.id, v_alloc_cidr, p->>'podNamespace', p->>'podName', v_node
      FROM a;
    UPDATE ip_pools SET allocated = allocated + 1, allocation_count = allocation_count + 1 WHERE id = v_pool;
    v_out := v_out || jsonb_build_object('family', v_family, 'address', v_alloc_cidr::text, 'block', v_item->>'block');
    v_created := v_created || to_jsonb(v_alloc_cidr::text);
  END LOOP;
  IF jsonb_array_length(v_created) > 0 THEN
    INSERT INTO events (actor_type, actor_id, actor_label, project_id, action, object_type, object_id, object_name, after)
      VALUES (p#>>'{actor,type}', p#>>'{actor,id}', p#>>'{actor,label}', (p->>'project')::uuid, 'cni.add', 'podLease', v_cluster::text,
              p->>'objectName', jsonb_build_object('addresses', v_created, 'node', v_node, 'pod', p->'pod'));
  END IF;
  IF cardinality(v_low) > 0 THEN
    RETURN jsonb_build_object('addresses', v_out, 'lowOnRoom', to_jsonb(v_low));
  END IF;
  RETURN jsonb_build_object('addresses', v_out);
END
$$;
