-- Hand-written: drizzle cannot express functions.
--
-- A keyed graphile_worker.add_job is two statements: it retires a running job with the key, then
-- upserts the key's pending job, leaving it alone if it is locked. A worker that takes the pending
-- job between the two leaves the upsert nothing to update and, the key being taken, nothing to
-- insert: add_job returns a row with a null id and adds nothing (graphile/worker#580), and the
-- change that called it commits with no job to act on it, while the run that worker started may
-- have read the state from before the change. enqueueJob (server/jobs/enqueue.ts) adds again in
-- that case; meridian_add_job does the same for the SQL that adds jobs itself (the trigger that
-- wakes a project's deletion, 0014, and the block returns CNI DELs and carves schedule, 0021 and
-- 0022), which are redefined below with their add_job calls, and nothing else, changed.

-- graphile_worker.add_job (same parameters and defaults) for a job key a worker may take meanwhile:
-- when a keyed add returns no job, the key's job was taken and is running, so adding again retires
-- it and queues the successor that runs after it. Up to 3 tries (each lost one needs yet another
-- job with the key added and taken meanwhile), then raises 'MJ001'. Returns the job's id.
-- (Returns bigint rather than graphile-worker's row type: db/migrate.ts installs graphile-worker's
-- schema after these migrations, and PL/pgSQL bodies are resolved only when they run.)
CREATE OR REPLACE FUNCTION meridian_add_job(
  identifier text,
  payload json DEFAULT NULL,
  queue_name text DEFAULT NULL,
  run_at timestamptz DEFAULT NULL,
  max_attempts int DEFAULT NULL,
  job_key text DEFAULT NULL,
  priority int DEFAULT NULL,
  flags text[] DEFAULT NULL,
  job_key_mode text DEFAULT 'replace'
) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
BEGIN
  FOR v_try IN 1 .. 3 LOOP
    SELECT j.id INTO v_id
    FROM graphile_worker.add_job(identifier, payload, queue_name => queue_name, run_at => run_at, max_attempts => max_attempts,
                                 job_key => job_key, priority => priority, flags => flags, job_key_mode => job_key_mode) AS j;
    IF v_id IS NOT NULL OR job_key IS NULL THEN
      RETURN v_id;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'could not add job % with key %: its pending job was taken by a worker during each of 3 tries', identifier, job_key
    USING ERRCODE = 'MJ001';
END
$$;
--> statement-breakpoint
-- project_deletion_wake_on_release as in 0014, adding through meridian_add_job.
CREATE OR REPLACE FUNCTION project_deletion_wake_on_release() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM projects WHERE id = NEW.project_id AND phase = 'Deleting') THEN
    PERFORM meridian_add_job(
      'project__delete',
      json_build_object('projectId', NEW.project_id),
      queue_name => 'project-delete:' || NEW.project_id::text,
      job_key => 'project-delete:' || NEW.project_id::text,
      job_key_mode => 'replace'
    );
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
-- cni_lease_release as in 0021, adding through meridian_add_job. CREATE OR REPLACE resets the
-- function's settings, hence the ALTER again.
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
--> statement-breakpoint
ALTER FUNCTION cni_lease_release(jsonb) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
-- cni_node_block_ensure as in 0022, adding through meridian_add_job (and its setting again).
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
        PERFORM meridian_add_job('cni__return_block', json_build_object('poolId', v_pool),
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
