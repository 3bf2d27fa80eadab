-- One bounded step of a cluster's deletion (server/cni/clusters.ts), as one statement: the cluster
-- must have been marked (deletion_timestamp set, its tokens revoked, under its row lock: no ADD or
-- carve for it can start after that). Each step returns whole node blocks to the pools they were
-- carved from — the cluster's next blocks in (node, family, cidr) order, as many as hold up to
-- "maxLeases" leases (at least one block) — with their leases and addresses, and records one
-- 'cni.del' event naming the released addresses. A block goes back whole: its leases, pod address
-- and reservation allocations and free set are deleted set-based, not address by address, and its
-- carve is released in its parent (ipam_release, which merges it with its free buddies).
--
-- Locks, in the CNI lock order (server/cni/leases.ts): the deletion's own advisory lock (one step
-- of a cluster at a time: the REST call and the worker's job may both be at it), the blocks'
-- leases by (node, family, address), the blocks by (node, family, cidr), their parent pools by id.
-- A DEL or GC racing a step either releases its lease first (the step then finds it gone) or
-- waits for the step and finds nothing to release; a block-return job finds the block gone.
--
-- Once no block is left, the step locks the cluster's row FOR UPDATE (waiting for ADDs still
-- holding it, which are refused), checks that no lease or block is left, deletes the cluster and
-- records 'cluster.delete'. Returns {"released": n, "leasesLeft": n, "blocksLeft": n} while blocks
-- remain, {"deleted": true, "released": 0} once the cluster is deleted, or {"gone": true} when no
-- cluster being deleted has this id (another step finished it).
CREATE OR REPLACE FUNCTION cni_cluster_delete_step(p jsonb) RETURNS jsonb
LANGUAGE plpgsql
-- Planned once per session: plan_cache_mode (see server/ipam/sql/ipam_allocate.sql).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_cluster uuid := (p->>'cluster')::uuid;
  v_max int := greatest(coalesce((p->>'maxLeases')::int, 2000), 1);
  v_name text;
  v_project uuid;
  v_blocks uuid[];
  v_nodes text[];
  v_addresses jsonb;
  v_released int;
  v_block record;
  v_leases_left int;
  v_blocks_left int;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('cluster-delete:' || v_cluster, 0));
  SELECT name, project_id INTO v_name, v_project FROM clusters WHERE id = v_cluster AND deletion_timestamp IS NOT NULL;
  IF NOT FOUND THEN
    RETURN '{"gone": true}'::jsonb;
  END IF;

  -- The next blocks, in lock order, up to maxLeases leases (by their counters; a block's
  -- `allocated` is its pod addresses).
  SELECT array_agg(x.pool_id ORDER BY x.node COLLATE "C", x.family, x.cidr), array_agg(DISTINCT x.node)
    INTO v_blocks, v_nodes
  FROM (
    SELECT b.pool_id, b.node, b.family, bp.cidr,
           sum(bp.allocated) OVER (ORDER BY b.node COLLATE "C", b.family, bp.cidr) - bp.allocated AS before
    FROM node_blocks b JOIN ip_pools bp ON bp.id = b.pool_id
    WHERE b.cluster_id = v_cluster
  ) x
  WHERE x.before < v_max;

  IF v_blocks IS NULL THEN
    PERFORM 1 FROM clusters WHERE id = v_cluster FOR UPDATE;
    SELECT (SELECT count(*)::int FROM pod_leases WHERE cluster_id = v_cluster),
           (SELECT count(*)::int FROM node_blocks WHERE cluster_id = v_cluster)
      INTO v_leases_left, v_blocks_left;
    IF v_leases_left > 0 OR v_blocks_left > 0 THEN
      -- Not reached (no ADD or carve runs for a marked cluster): a lease outside the cluster's blocks.
      RAISE EXCEPTION 'cluster %: % lease(s) and % block(s) left after all its blocks were returned', v_cluster, v_leases_left, v_blocks_left
        USING ERRCODE = 'MC003';
    END IF;
    DELETE FROM clusters WHERE id = v_cluster;
    INSERT INTO events (actor_type, actor_id, actor_label, project_id, action, object_type, object_id, object_name, reason)
      VALUES (p#>>'{actor,type}', p#>>'{actor,id}', p#>>'{actor,label}', v_project, 'cluster.delete', 'cluster', v_cluster::text,
              v_name, 'its leases and node blocks released');
    RETURN '{"deleted": true, "released": 0}'::jsonb;
  END IF;

  PERFORM 1 FROM pod_leases
  WHERE node = ANY (v_nodes) AND cluster_id = v_cluster AND pool_id = ANY (v_blocks)
  ORDER BY node COLLATE "C", family, address, id
  FOR UPDATE;
  PERFORM 1 FROM ip_pools bp JOIN node_blocks b ON b.pool_id = bp.id
  WHERE bp.id = ANY (v_blocks)
  ORDER BY b.node COLLATE "C", b.family, bp.cidr
  FOR UPDATE OF bp;
  PERFORM 1 FROM ip_pools
  WHERE id IN (SELECT parent_pool_id FROM ip_pools WHERE id = ANY (v_blocks))
  ORDER BY id
  FOR UPDATE;

  WITH gone AS (
    DELETE FROM pod_leases WHERE node = ANY (v_nodes) AND cluster_id = v_cluster AND pool_id = ANY (v_blocks)
    RETURNING address
  )
  SELECT coalesce(jsonb_agg(address::text ORDER BY address), '[]'::jsonb), count(*)::int INTO v_addresses, v_released FROM gone;
  DELETE FROM ip_allocations WHERE pool_id = ANY (v_blocks);
  DELETE FROM ip_free_blocks WHERE pool_id = ANY (v_blocks);
  FOR v_block IN
    SELECT bp.id, bp.parent_pool_id, a.id AS carve
    FROM ip_pools bp LEFT JOIN ip_allocations a ON a.child_pool_id = bp.id AND a.pool_id = bp.parent_pool_id
    WHERE bp.id = ANY (v_blocks)
    ORDER BY bp.parent_pool_id, bp.cidr
  LOOP
    DELETE FROM node_blocks WHERE pool_id = v_block.id;
    DELETE FROM ip_pools WHERE id = v_block.id;
    IF v_block.carve IS NOT NULL THEN
      PERFORM ipam_release(v_block.parent_pool_id, v_block.carve);
    END IF;
  END LOOP;
  IF v_released > 0 THEN
    INSERT INTO events (actor_type, actor_id, actor_label, project_id, action, object_type, object_id, object_name, before)
      VALUES (p#>>'{actor,type}', p#>>'{actor,id}', p#>>'{actor,label}', v_project, 'cni.del', 'podLease', v_cluster::text,
              v_name, jsonb_build_object('addresses', v_addresses));
  END IF;
  SELECT (SELECT count(*)::int FROM pod_leases WHERE cluster_id = v_cluster),
         (SELECT count(*)::int FROM node_blocks WHERE cluster_id = v_cluster)
    INTO v_leases_left, v_blocks_left;
  RETURN jsonb_build_object('released', v_released, 'leasesLeft', v_leases_left, 'blocksLeft', v_blocks_left);
END
$$;
