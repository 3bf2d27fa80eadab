-- Hand-written: drizzle cannot express functions.
--
-- A cluster's deletion and its CNI ADDs and block carves serialize on the cluster's row. Deleting
-- a cluster (server/cni/clusters.ts deleteCluster) locks its row FOR UPDATE and, in that one
-- transaction, revokes its tokens, releases every lease, returns every node block and deletes the
-- row. Every ADD and every carve first locks its cluster's row FOR KEY SHARE (which the ADD's own
-- foreign keys take anyway, only later): an ADD or carve in flight finishes before the deletion
-- starts, and its lease or block is then released by it; one that comes after finds no cluster and
-- changes nothing. So once a deletion has committed, nothing of the cluster is left, and no ADD
-- fails on a foreign key half-way.
--
-- An ADD whose cluster is gone answers {"clusterGone": true} (after {"tokenRevoked": true}, which
-- takes precedence: a cluster token is revoked with its cluster); a carve answers the same.
CREATE OR REPLACE FUNCTION cni_lease_add_confirmed(p jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM clusters WHERE id = (p->>'cluster')::uuid FOR KEY SHARE;
  IF NOT FOUND THEN
    RETURN CASE WHEN p ? 'token' AND NOT EXISTS (SELECT 1 FROM api_tokens t WHERE t.id = (p->>'token')::uuid AND t.revoked_at IS NULL)
                THEN '{"tokenRevoked": true}' ELSE '{"clusterGone": true}' END::jsonb;
  END IF;
  IF p ? 'token' AND NOT EXISTS (SELECT 1 FROM api_tokens t WHERE t.id = (p->>'token')::uuid AND t.revoked_at IS NULL) THEN
    RETURN '{"tokenRevoked": true}'::jsonb;
  END IF;
  RETURN cni_lease_add(p);
END
$$;
--> statement-breakpoint
-- The batch: its clusters locked in one order (so batches never deadlock on them), then each ADD
-- refused whose token is revoked or whose cluster is gone; the others go to cni_lease_add_many, and
-- the answers come back in the order given.
CREATE OR REPLACE FUNCTION cni_lease_add_many_confirmed(p_items jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_clusters uuid[];
  v_answer jsonb[];
  v_answers jsonb;
  v_out jsonb := '[]'::jsonb;
  v_next int := 0;
BEGIN
  SELECT array_agg(c.id) INTO v_clusters FROM (
    SELECT id FROM clusters
    WHERE id IN (SELECT (x->>'cluster')::uuid FROM jsonb_array_elements(p_items) AS x)
    ORDER BY id
    FOR KEY SHARE) c;
  -- After the locks: a token revoked by a deletion that committed meanwhile is seen revoked here.
  SELECT array_agg(CASE WHEN x.v ? 'token' AND t.id IS NULL THEN '{"tokenRevoked": true}'::jsonb
                        WHEN NOT (x.v->>'cluster')::uuid = ANY (coalesce(v_clusters, '{}')) THEN '{"clusterGone": true}'::jsonb
                   END ORDER BY x.i) INTO v_answer
  FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(v, i)
  LEFT JOIN api_tokens t ON t.id = (x.v->>'token')::uuid AND t.revoked_at IS NULL;
  IF NOT EXISTS (SELECT 1 FROM unnest(v_answer) AS a WHERE a IS NOT NULL) THEN
    RETURN cni_lease_add_many(p_items);
  END IF;
  IF EXISTS (SELECT 1 FROM unnest(v_answer) AS a WHERE a IS NULL) THEN
    v_answers := cni_lease_add_many((SELECT jsonb_agg(x.v ORDER BY x.i) FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(v, i)
                                     WHERE v_answer[x.i::int] IS NULL));
  END IF;
  FOR k IN 1 .. array_length(v_answer, 1) LOOP
    IF v_answer[k] IS NULL THEN
      v_out := v_out || jsonb_build_array(v_answers->v_next);
      v_next := v_next + 1;
    ELSE
      v_out := v_out || jsonb_build_array(v_answer[k]);
    END IF;
  END LOOP;
  RETURN v_out;
END
$$;
--> statement-breakpoint
-- cni_node_block_ensure as in 0022, with the cluster's row locked first (a carve for a deleted
-- cluster answers {"clusterGone": true}).
CREATE OR REPLACE FUNCTION cni_node_block_ensure(p jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
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
  -- The cluster first, as every ADD does (its deletion waits for the carve, a carve after its
  -- deletion carves nothing).
  PERFORM 1 FROM clusters WHERE id = v_cluster FOR KEY SHARE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('clusterGone', true);
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('node-block:' || v_cluster || ':' || v_node || ':' || v_family, 0));
  PERFORM 1 FROM node_blocks b JOIN ip_pools bp ON bp.id = b.pool_id
  WHERE b.cluster_id = v_cluster AND b.node = v_node AND b.family = v_family
    AND CASE WHEN p->>'mode' = 'spare' THEN bp.capacity - bp.allocated > bp.capacity / 4 ELSE bp.allocated < bp.capacity END
  LIMIT 1;
  IF FOUND THEN
    RETURN jsonb_build_object('room', true);
  END IF;
  FOR v_prefix IN v_preferred .. greatest(v_preferred, (p->>'minPrefix')::int) LOOP
    FOR v_parent IN
      SELECT id, min_prefix_length FROM ip_pools
      WHERE network_id = (p->>'network')::uuid AND family = v_family AND kind <> 'NodeBlock'
      ORDER BY masklen(cidr) DESC, cidr
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
        PERFORM graphile_worker.add_job('cni__return_block', json_build_object('poolId', v_pool),
          run_at => now() + make_interval(secs => v_grace), job_key => 'cni-return-block:' || v_pool, job_key_mode => 'replace');
      END IF;
      RETURN jsonb_build_object('carved', jsonb_build_object('pool', v_pool, 'cidr', v_block::text));
    END LOOP;
  END LOOP;
  RETURN jsonb_build_object('exhausted', true);
END
$$;
--> statement-breakpoint
ALTER FUNCTION cni_node_block_ensure(jsonb) SET plan_cache_mode = force_generic_plan;
