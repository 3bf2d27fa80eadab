-- Hand-written: many CNI ADDs in one statement (group commit). server/cni/add-batch.ts gathers the
-- ADDs that arrive while earlier ones are in flight and sends them together: one round trip, one
-- transaction, one commit for all of them instead of one each.
--
-- cni_lease_add (0012) no longer raises 'MC001' when a family needs a new node block: it first
-- finds, and locks, a block with room for every family it must allocate, and only then writes; a
-- family without one returns {"needsBlock": [families]} with nothing written (addLease then carves
-- in its own transaction). So an ADD inside a batch fails only on the unexpected (a lost race on
-- its attachment key, a cluster deleted meanwhile): the batch then fails as a whole and the caller
-- runs its ADDs one by one, each as its own statement, so one bad ADD never fails another.
-- An ADD that takes an address from the last quarter of the node's last block with room says so
-- ("lowOnRoom": [families]): addLease then carves the node's next block in the background, so the
-- node's ADDs rarely wait for a carve.
CREATE OR REPLACE FUNCTION cni_lease_add(p jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_cluster uuid := (p->>'cluster')::uuid;
  v_node text := p->>'node';
  v_family int;
  v_lease record;
  v_block record;
  v_alloc_id uuid;
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
    -- The block is locked and has room (allocated < capacity, and a node block holds single addresses only).
    SELECT o_allocation_id, o_cidr INTO v_alloc_id, v_alloc_cidr
    FROM ipam_allocate((v_item->>'pool')::uuid, CASE v_family WHEN 4 THEN 32 ELSE 128 END, NULL, 'PodAddress', NULL, NULL);
    IF v_alloc_id IS NULL THEN
      RAISE EXCEPTION 'node block % has no free address although its counters say so', v_item->>'block' USING ERRCODE = 'MC002';
    END IF;
    INSERT INTO pod_leases (project_id, cluster_id, cni_network, container_id, ifname, family, pool_id, allocation_id, address,
                            pod_namespace, pod_name, node)
      VALUES ((p->>'project')::uuid, v_cluster, p->>'cniNetwork', p->>'containerId', p->>'ifname', v_family, (v_item->>'pool')::uuid,
              v_alloc_id, v_alloc_cidr, p->>'podNamespace', p->>'podName', v_node);
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
--> statement-breakpoint
-- Many ADDs, in the order given (the caller orders them by cluster and node, so concurrent batches
-- lock node blocks in one order); returns cni_lease_add's results in that order.
CREATE OR REPLACE FUNCTION cni_lease_add_many(p_items jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_item jsonb;
  v_out jsonb := '[]'::jsonb;
BEGIN
  FOR v_item IN SELECT value FROM jsonb_array_elements(p_items) LOOP
    v_out := v_out || jsonb_build_array(cni_lease_add(v_item));
  END LOOP;
  RETURN v_out;
END
$$;
