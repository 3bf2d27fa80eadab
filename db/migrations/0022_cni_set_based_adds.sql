-- Hand-written: a batch of CNI ADDs as a few set-based statements instead of one cni_lease_add per
-- ADD. Per ADD, 0016's loop ran about fifteen statements (lease lookup, block lock, FirstFit probe
-- per prefix length, free-block delete and split inserts, allocation, counter update, lease, event),
-- each with its own executor start-up and index upkeep; bench/cni-add found PostgreSQL spending
-- most of an ADD's time there. Here a batch, whatever its size, is two statements:
--
--   1. lock, in one order (cluster, node, family, block), every block with room of the batch's nodes;
--   2. one statement (fresh snapshot, after the locks) that finds the leases that already exist,
--      assigns each missing address to a node block in the blocks' address order, takes the lowest
--      free addresses of each block (what that many FirstFit allocations one after the other take:
--      FirstFit takes a block's lowest free address), deletes the free blocks it used, inserts the
--      allocations, moves the block counters, inserts the leases and one audit event per
--      attachment, and works out each ADD's result in the order given;
--   3. the free blocks' remainders (ipam_split above the last address taken, as the buddy split of
--      each single allocation leaves it).
--
-- Results are as cni_lease_add's (0016): {"addresses": [...], "lowOnRoom"?: [families]},
-- {"needsBlock": [families]} with nothing written for that ADD, or {"noPools": true}. An ADD that
-- repeats an attachment key earlier in the batch gets that ADD's result. A node's ADDs ask for the
-- next block ("lowOnRoom") when the node's room left falls to a quarter of a block. A lost race on an
-- attachment key (another process's batch) fails the statement; the caller then runs the batch's
-- ADDs one by one through cni_lease_add (db/batch.ts).
CREATE OR REPLACE FUNCTION cni_lease_add_many(p_items jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_out jsonb;
  v_whole boolean;
  v_rest_pool uuid[];
  v_rest_cidr cidr[];
  v_blocks uuid[];
BEGIN
  SELECT array_agg(l.id) INTO v_blocks FROM (
    SELECT bp.id
    FROM node_blocks b JOIN ip_pools bp ON bp.id = b.pool_id
    WHERE (b.cluster_id, b.node) IN (SELECT (x->>'cluster')::uuid, x->>'node' FROM jsonb_array_elements(p_items) AS x)
      AND bp.allocated < bp.capacity
    ORDER BY b.cluster_id, b.node COLLATE "C", b.family, bp.cidr
    FOR UPDATE OF bp) l;

  WITH item AS (
    SELECT x.i, x.v, (x.v->>'cluster')::uuid AS cluster, x.v->>'cniNetwork' AS cni_network, x.v->>'containerId' AS container_id,
           x.v->>'ifname' AS ifname
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(v, i)
  ),
  -- One row per attachment key: its first ADD in the batch.
  att AS (
    SELECT DISTINCT ON (cluster, cni_network, container_id, ifname)
           i, v, cluster, cni_network, container_id, ifname, (v->>'network')::uuid AS network, v->>'node' AS node
    FROM item ORDER BY cluster, cni_network, container_id, ifname, i
  ),
  fam AS (
    SELECT DISTINCT p.network_id, p.family FROM ip_pools p
    WHERE p.network_id IN (SELECT network FROM att) AND p.parent_pool_id IS NULL
  ),
  -- Every (attachment, family) the network offers, with the lease that already holds it.
  want AS (
    SELECT a.i, a.cluster, a.node, f.family, l.address, lp.cidr AS lease_block
    FROM att a JOIN fam f ON f.network_id = a.network
    LEFT JOIN pod_leases l ON l.cluster_id = a.cluster AND l.cni_network = a.cni_network AND l.container_id = a.container_id
                          AND l.ifname = a.ifname AND l.family = f.family
    LEFT JOIN ip_pools lp ON lp.id = l.pool_id
  ),
  -- The blocks locked above (all with room), each with the node's room in the blocks before it.
  block AS (
    SELECT b.cluster_id AS cluster, b.node, b.family, bp.id AS pool, bp.cidr, bp.capacity, bp.capacity - bp.allocated AS room,
           sum(bp.capacity - bp.allocated) OVER (PARTITION BY b.cluster_id, b.node, b.family ORDER BY bp.cidr)
             - (bp.capacity - bp.allocated) AS room_before,
           sum(bp.capacity - bp.allocated) OVER (PARTITION BY b.cluster_id, b.node, b.family) AS node_room,
           max(bp.capacity) OVER (PARTITION BY b.cluster_id, b.node, b.family) AS block_capacity
    FROM node_blocks b JOIN ip_pools bp ON bp.id = b.pool_id
    WHERE bp.id = ANY (v_blocks)
  ),
  node_room AS (SELECT DISTINCT cluster, node, family, node_room, block_capacity FROM block),
  -- The attachments that cannot have every missing family now, and the families they lack.
  short AS (
    SELECT w.i, array_agg(DISTINCT w.family ORDER BY w.family) AS families
    FROM (SELECT i, cluster, node, family, row_number() OVER (PARTITION BY cluster, node, family ORDER BY i) AS n
          FROM want WHERE address IS NULL) w
    LEFT JOIN node_room r ON r.cluster = w.cluster AND r.node = w.node AND r.family = w.family
    WHERE w.n > coalesce(r.node_room, 0)
    GROUP BY w.i
  ),
  need AS (
    SELECT i, cluster, node, family, row_number() OVER (PARTITION BY cluster, node, family ORDER BY i) AS n
    FROM want WHERE address IS NULL AND i NOT IN (SELECT i FROM short)
  ),
  -- Each missing address to its block, with its rank among the block's new addresses.
  placed AS (
    SELECT n.i, n.cluster, n.node, n.family, b.pool, b.cidr AS block, n.n - b.room_before AS k
    FROM need n JOIN block b ON b.cluster = n.cluster AND b.node = n.node AND b.family = n.family
     AND n.n > b.room_before AND n.n <= b.room_before + b.room
  ),
  per_pool AS (SELECT pool, count(*) AS m FROM placed GROUP BY pool),
  -- Each block's first m free blocks in address order (m addresses need at most m), with the number
  -- of free addresses before each; sizes are capped (at 2^40), as only sizes up to m matter.
  free AS (
    SELECT pp.pool, f.cidr, pp.m, f.bits, f.size, (sum(f.size) OVER (PARTITION BY pp.pool ORDER BY f.cidr))::bigint - f.size AS before
    FROM per_pool pp
    CROSS JOIN LATERAL (
      SELECT fb.cidr, CASE family(fb.cidr) WHEN 4 THEN 32 ELSE 128 END AS bits,
             1::bigint << least(CASE family(fb.cidr) WHEN 4 THEN 32 ELSE 128 END - fb.prefix_length, 40) AS size
      FROM ip_free_blocks fb WHERE fb.pool_id = pp.pool ORDER BY fb.cidr LIMIT pp.m
    ) f
  ),
  used AS (SELECT * FROM free WHERE before < m),
  -- The lowest m free addresses of each block, ranked.
  addr AS (
    SELECT u.pool, set_masklen(u.cidr + o, u.bits)::cidr AS address, u.before + o + 1 AS k
    FROM used u, generate_series(0::bigint, least(u.size, u.m - u.before) - 1) AS o
  ),
  freed AS (
    DELETE FROM ip_free_blocks f USING used u WHERE f.pool_id = u.pool AND f.cidr = u.cidr RETURNING 1
  ),
  -- A free block used in part keeps what lies above its last address taken (inserted by the next
  -- statement: in this one the free block it replaces is still there for the exclusion constraint).
  rest AS (
    SELECT u.pool, s AS cidr
    FROM used u
    CROSS JOIN LATERAL (SELECT set_masklen(u.cidr + (u.m - u.before - 1), u.bits)::cidr AS last) t
    CROSS JOIN LATERAL ipam_split(u.cidr, t.last) AS s
    WHERE u.before + u.size > u.m AND s > t.last
  ),
  alloc AS (
    INSERT INTO ip_allocations (pool_id, project_id, network_id, cidr, kind, size)
    SELECT a.pool, bp.project_id, bp.network_id, a.address, 'PodAddress', 1
    FROM addr a JOIN ip_pools bp ON bp.id = a.pool
    RETURNING id, pool_id, cidr
  ),
  counted AS (
    UPDATE ip_pools p SET allocated = p.allocated + pp.m, allocation_count = p.allocation_count + pp.m
    FROM per_pool pp WHERE p.id = pp.pool
    RETURNING 1
  ),
  new_lease AS (
    SELECT pl.i, pl.family, pl.pool, pl.block, al.id AS allocation_id, al.cidr AS address
    FROM placed pl JOIN addr ad ON ad.pool = pl.pool AND ad.k = pl.k
    JOIN alloc al ON al.pool_id = pl.pool AND al.cidr = ad.address
  ),
  leased AS (
    INSERT INTO pod_leases (project_id, cluster_id, cni_network, container_id, ifname, family, pool_id, allocation_id, address,
                            pod_namespace, pod_name, node)
    SELECT (a.v->>'project')::uuid, a.cluster, a.cni_network, a.container_id, a.ifname, n.family, n.pool, n.allocation_id, n.address,
           a.v->>'podNamespace', a.v->>'podName', a.node
    FROM new_lease n JOIN att a ON a.i = n.i
    RETURNING 1
  ),
  evented AS (
    INSERT INTO events (actor_type, actor_id, actor_label, project_id, action, object_type, object_id, object_name, after)
    SELECT a.v#>>'{actor,type}', a.v#>>'{actor,id}', a.v#>>'{actor,label}', (a.v->>'project')::uuid, 'cni.add', 'podLease',
           a.cluster::text, a.v->>'objectName', jsonb_build_object('addresses', n.created, 'node', a.node, 'pod', a.v->'pod')
    FROM att a JOIN (SELECT i, jsonb_agg(address::text ORDER BY family) AS created FROM new_lease GROUP BY i) n ON n.i = a.i
    RETURNING 1
  ),
  taken AS (SELECT cluster, node, family, count(*) AS n FROM placed GROUP BY cluster, node, family),
  -- Families whose node is down to a quarter of a block's room once this batch has its addresses.
  low AS (
    SELECT pl.i, array_agg(DISTINCT pl.family ORDER BY pl.family) AS families
    FROM placed pl
    JOIN taken t ON t.cluster = pl.cluster AND t.node = pl.node AND t.family = pl.family
    JOIN node_room r ON r.cluster = pl.cluster AND r.node = pl.node AND r.family = pl.family
    WHERE (r.node_room - t.n) * 4 <= r.block_capacity
    GROUP BY pl.i
  ),
  -- What an ADD left out lacks: its families without room once the others have theirs (as when
  -- the ADDs run one by one), or if it only lost to ADDs left out themselves, the first count's.
  lacking AS (
    SELECT w.i, array_agg(w.family ORDER BY w.family) AS families
    FROM want w JOIN short s ON s.i = w.i
    LEFT JOIN node_room r ON r.cluster = w.cluster AND r.node = w.node AND r.family = w.family
    LEFT JOIN taken t ON t.cluster = w.cluster AND t.node = w.node AND t.family = w.family
    WHERE w.address IS NULL AND coalesce(r.node_room, 0) - coalesce(t.n, 0) <= 0
    GROUP BY w.i
  ),
  result AS (
    SELECT a.cluster, a.cni_network, a.container_id, a.ifname,
      CASE
        WHEN NOT EXISTS (SELECT 1 FROM fam f WHERE f.network_id = a.network) THEN jsonb_build_object('noPools', true)
        WHEN s.i IS NOT NULL THEN jsonb_build_object('needsBlock', to_jsonb(coalesce(lk.families, s.families)))
        ELSE jsonb_build_object('addresses', (
               SELECT jsonb_agg(jsonb_build_object('family', x.family, 'address', x.address::text, 'block', x.block::text) ORDER BY x.family)
               FROM (SELECT w.family, w.address, w.lease_block AS block FROM want w WHERE w.i = a.i AND w.address IS NOT NULL
                     UNION ALL
                     SELECT n.family, n.address, n.block FROM new_lease n WHERE n.i = a.i) x))
             || CASE WHEN lw.i IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('lowOnRoom', to_jsonb(lw.families)) END
      END AS answer
    FROM att a LEFT JOIN short s ON s.i = a.i LEFT JOIN lacking lk ON lk.i = a.i LEFT JOIN low lw ON lw.i = a.i
  )
  SELECT jsonb_agg(r.answer ORDER BY it.i), (SELECT count(*) FROM new_lease) = (SELECT count(*) FROM placed),
         (SELECT array_agg(pool) FROM rest), (SELECT array_agg(cidr) FROM rest)
    INTO v_out, v_whole, v_rest_pool, v_rest_cidr
  FROM item it JOIN result r ON r.cluster = it.cluster AND r.cni_network = it.cni_network
   AND r.container_id = it.container_id AND r.ifname = it.ifname;
  IF NOT v_whole THEN
    RAISE EXCEPTION 'a node block has fewer free addresses than its counters say' USING ERRCODE = 'MC002';
  END IF;
  INSERT INTO ip_free_blocks (pool_id, cidr, prefix_length)
    SELECT r.pool, r.cidr, masklen(r.cidr) FROM unnest(v_rest_pool, v_rest_cidr) AS r(pool, cidr);
  RETURN coalesce(v_out, '[]'::jsonb);
END
$$;
--> statement-breakpoint
ALTER FUNCTION cni_lease_add_many(jsonb) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
-- The aligned blocks that make up the address range [lo, hi] (both inclusive), lowest first: the
-- canonical free set of a range, as rangeToCidrs in server/ipam/blocks.ts.
CREATE OR REPLACE FUNCTION ipam_range_blocks(lo inet, hi inet) RETURNS SETOF cidr
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  v_bits int := CASE family(lo) WHEN 4 THEN 32 ELSE 128 END;
  v_len int;
  v_block cidr;
BEGIN
  lo := set_masklen(lo, v_bits);
  hi := set_masklen(hi, v_bits);
  WHILE lo <= hi LOOP
    -- The largest block that starts at lo and ends at or before hi.
    v_len := v_bits;
    WHILE v_len > 0 AND set_masklen(network(set_masklen(lo, v_len - 1)), v_bits) = lo
      AND set_masklen(broadcast(set_masklen(lo, v_len - 1)), v_bits) <= hi LOOP
      v_len := v_len - 1;
    END LOOP;
    v_block := network(set_masklen(lo, v_len));
    RETURN NEXT v_block;
    EXIT WHEN set_masklen(broadcast(v_block), v_bits) >= hi;
    lo := set_masklen(broadcast(v_block), v_bits) + 1;
  END LOOP;
END
$$;
--> statement-breakpoint
-- Makes sure a node has room for an address of one family, as one statement (it was a dozen round
-- trips from server/cni/leases.ts): under the node's advisory lock, when none of its blocks has room
-- ('needed') or none has more than a quarter of its room left ('spare'), carves the next block
-- from the network's pools (largest prefix first: preferred size, then smaller blocks down to
-- minPrefix), creates its NodeBlock pool with the leading and trailing reservations and the free
-- set in between, records it as the node's, and schedules its return check after the grace period
-- (a block carved ahead of need may never be used). Returns {"room": true}, {"carved": {"pool",
-- "cidr"}} or {"exhausted": true}.
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
