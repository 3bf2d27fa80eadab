-- fixture.sql: written by test/upgrade/make-fixture.ts (see there) from a checkout of commit 671c655.
--
-- PostgreSQL database dump
--


-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: drizzle; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA drizzle;


--
-- Name: graphile_worker; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA graphile_worker;


--
-- Name: btree_gist; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS btree_gist WITH SCHEMA public;


--
-- Name: EXTENSION btree_gist; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION btree_gist IS 'support for indexing common datatypes in GiST';


--
-- Name: job_spec; Type: TYPE; Schema: graphile_worker; Owner: -
--

CREATE TYPE graphile_worker.job_spec AS (
	identifier text,
	payload json,
	queue_name text,
	run_at timestamp with time zone,
	max_attempts smallint,
	job_key text,
	priority smallint,
	flags text[]
);


--
-- Name: member_role; Type: TYPE; Schema: public; Owner: -
--

CREATE TYPE public.member_role AS ENUM (
    'viewer',
    'editor',
    'owner'
);


--
-- Name: platform_role; Type: TYPE; Schema: public; Owner: -
--

CREATE TYPE public.platform_role AS ENUM (
    'operator',
    'qa',
    'admin'
);


--
-- Name: token_kind; Type: TYPE; Schema: public; Owner: -
--

CREATE TYPE public.token_kind AS ENUM (
    'project',
    'operator'
);


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: _private_jobs; Type: TABLE; Schema: graphile_worker; Owner: -
--

CREATE TABLE graphile_worker._private_jobs (
    id bigint NOT NULL,
    job_queue_id integer,
    task_id integer NOT NULL,
    payload json DEFAULT '{}'::json NOT NULL,
    priority smallint DEFAULT 0 NOT NULL,
    run_at timestamp with time zone DEFAULT now() NOT NULL,
    attempts smallint DEFAULT 0 NOT NULL,
    max_attempts smallint DEFAULT 25 NOT NULL,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    key text,
    locked_at timestamp with time zone,
    locked_by text,
    revision integer DEFAULT 0 NOT NULL,
    flags jsonb,
    is_available boolean GENERATED ALWAYS AS (((locked_at IS NULL) AND (attempts < max_attempts))) STORED NOT NULL,
    CONSTRAINT jobs_key_check CHECK (((length(key) > 0) AND (length(key) <= 512))),
    CONSTRAINT jobs_max_attempts_check CHECK ((max_attempts >= 1))
);


--
-- Name: add_job(text, json, text, timestamp with time zone, integer, text, integer, text[], text); Type: FUNCTION; Schema: graphile_worker; Owner: -
--

CREATE FUNCTION graphile_worker.add_job(identifier text, payload json DEFAULT NULL::json, queue_name text DEFAULT NULL::text, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, max_attempts integer DEFAULT NULL::integer, job_key text DEFAULT NULL::text, priority integer DEFAULT NULL::integer, flags text[] DEFAULT NULL::text[], job_key_mode text DEFAULT 'replace'::text) RETURNS graphile_worker._private_jobs
    LANGUAGE plpgsql
    AS $$
declare
  v_job "graphile_worker"._private_jobs;
begin
  if (job_key is null or job_key_mode is null or job_key_mode in ('replace', 'preserve_run_at')) then
    select * into v_job
    from "graphile_worker".add_jobs(
      ARRAY[(
        identifier,
        payload,
        queue_name,
        run_at,
        max_attempts::smallint,
        job_key,
        priority::smallint,
        flags
      )::"graphile_worker".job_spec],
      (job_key_mode = 'preserve_run_at')
    )
    limit 1;
    return v_job;
  elsif job_key_mode = 'unsafe_dedupe' then
    -- Ensure all the tasks exist
    insert into "graphile_worker"._private_tasks as tasks (identifier)
    values (add_job.identifier)
    on conflict do nothing;
    -- Ensure all the queues exist
    if add_job.queue_name is not null then
      insert into "graphile_worker"._private_job_queues as job_queues (queue_name)
      values (add_job.queue_name)
      on conflict do nothing;
    end if;
    -- Insert job, but if one already exists then do nothing, even if the
    -- existing job has already started (and thus represents an out-of-date
    -- world state). This is dangerous because it means that whatever state
    -- change triggered this add_job may not be acted upon (since it happened
    -- after the existing job started executing, but no further job is being
    -- scheduled), but it is useful in very rare circumstances for
    -- de-duplication. If in doubt, DO NOT USE THIS.
    insert into "graphile_worker"._private_jobs as jobs (
      job_queue_id,
      task_id,
      payload,
      run_at,
      max_attempts,
      key,
      priority,
      flags
    )
      select
        job_queues.id,
        tasks.id,
        coalesce(add_job.payload, '{}'::json),
        coalesce(add_job.run_at, now()),
        coalesce(add_job.max_attempts::smallint, 25::smallint),
        add_job.job_key,
        coalesce(add_job.priority::smallint, 0::smallint),
        (
          select jsonb_object_agg(flag, true)
          from unnest(add_job.flags) as item(flag)
        )
      from "graphile_worker"._private_tasks as tasks
      left join "graphile_worker"._private_job_queues as job_queues
      on job_queues.queue_name = add_job.queue_name
      where tasks.identifier = add_job.identifier
    on conflict (key)
      -- Bump the updated_at so that there's something to return
      do update set
        revision = jobs.revision + 1,
        updated_at = now()
      returning *
      into v_job;
    if v_job.revision = 0 then
      perform pg_notify('jobs:insert', '{"r":' || random()::text || ',"count":1}');
    end if;
    return v_job;
  else
    raise exception 'Invalid job_key_mode value, expected ''replace'', ''preserve_run_at'' or ''unsafe_dedupe''.' using errcode = 'GWBKM';
  end if;
end;
$$;


--
-- Name: add_jobs(graphile_worker.job_spec[], boolean); Type: FUNCTION; Schema: graphile_worker; Owner: -
--

CREATE FUNCTION graphile_worker.add_jobs(specs graphile_worker.job_spec[], job_key_preserve_run_at boolean DEFAULT false) RETURNS SETOF graphile_worker._private_jobs
    LANGUAGE plpgsql
    AS $$
begin
  -- Ensure all the tasks exist
  insert into "graphile_worker"._private_tasks as tasks (identifier)
  select distinct spec.identifier
  from unnest(specs) spec
  on conflict do nothing;
  -- Ensure all the queues exist
  insert into "graphile_worker"._private_job_queues as job_queues (queue_name)
  select distinct spec.queue_name
  from unnest(specs) spec
  where spec.queue_name is not null
  on conflict do nothing;
  -- Ensure any locked jobs have their key cleared - in the case of locked
  -- existing job create a new job instead as it must have already started
  -- executing (i.e. it's world state is out of date, and the fact add_job
  -- has been called again implies there's new information that needs to be
  -- acted upon).
  update "graphile_worker"._private_jobs as jobs
  set
    key = null,
    attempts = jobs.max_attempts,
    updated_at = now()
  from unnest(specs) spec
  where spec.job_key is not null
  and jobs.key = spec.job_key
  and is_available is not true;

  -- WARNING: this count is not 100% accurate; 'on conflict' clause will cause it to be an overestimate
  perform pg_notify('jobs:insert', '{"r":' || random()::text || ',"count":' || array_length(specs, 1)::text || '}');

  -- TODO: is there a risk that a conflict could occur depending on the
  -- isolation level?
  return query insert into "graphile_worker"._private_jobs as jobs (
    job_queue_id,
    task_id,
    payload,
    run_at,
    max_attempts,
    key,
    priority,
    flags
  )
    select
      job_queues.id,
      tasks.id,
      coalesce(spec.payload, '{}'::json),
      coalesce(spec.run_at, now()),
      coalesce(spec.max_attempts, 25),
      spec.job_key,
      coalesce(spec.priority, 0),
      (
        select jsonb_object_agg(flag, true)
        from unnest(spec.flags) as item(flag)
      )
    from unnest(specs) spec
    inner join "graphile_worker"._private_tasks as tasks
    on tasks.identifier = spec.identifier
    left join "graphile_worker"._private_job_queues as job_queues
    on job_queues.queue_name = spec.queue_name
  on conflict (key) do update set
    job_queue_id = excluded.job_queue_id,
    task_id = excluded.task_id,
    payload =
      case
      when json_typeof(jobs.payload) = 'array' and json_typeof(excluded.payload) = 'array' then
        (jobs.payload::jsonb || excluded.payload::jsonb)::json
      else
        excluded.payload
      end,
    max_attempts = excluded.max_attempts,
    run_at = (case
      when job_key_preserve_run_at is true and jobs.attempts = 0 then jobs.run_at
      else excluded.run_at
    end),
    priority = excluded.priority,
    revision = jobs.revision + 1,
    flags = excluded.flags,
    -- always reset error/retry state
    attempts = 0,
    last_error = null,
    updated_at = now()
  where jobs.locked_at is null
  returning *;
end;
$$;


--
-- Name: complete_jobs(bigint[]); Type: FUNCTION; Schema: graphile_worker; Owner: -
--

CREATE FUNCTION graphile_worker.complete_jobs(job_ids bigint[]) RETURNS SETOF graphile_worker._private_jobs
    LANGUAGE sql
    AS $$
  delete from "graphile_worker"._private_jobs as jobs
    where id = any(job_ids)
    and (
      locked_at is null
    or
      locked_at < now() - interval '4 hours'
    )
    returning *;
$$;


--
-- Name: force_unlock_workers(text[]); Type: FUNCTION; Schema: graphile_worker; Owner: -
--

CREATE FUNCTION graphile_worker.force_unlock_workers(worker_ids text[]) RETURNS void
    LANGUAGE sql
    AS $$
update "graphile_worker"._private_jobs as jobs
set locked_at = null, locked_by = null
where locked_by = any(worker_ids);
update "graphile_worker"._private_job_queues as job_queues
set locked_at = null, locked_by = null
where locked_by = any(worker_ids);
$$;


--
-- Name: permanently_fail_jobs(bigint[], text); Type: FUNCTION; Schema: graphile_worker; Owner: -
--

CREATE FUNCTION graphile_worker.permanently_fail_jobs(job_ids bigint[], error_message text DEFAULT NULL::text) RETURNS SETOF graphile_worker._private_jobs
    LANGUAGE sql
    AS $$
  update "graphile_worker"._private_jobs as jobs
    set
      last_error = coalesce(error_message, 'Manually marked as failed'),
      attempts = max_attempts,
      updated_at = now()
    where id = any(job_ids)
    and (
      locked_at is null
    or
      locked_at < NOW() - interval '4 hours'
    )
    returning *;
$$;


--
-- Name: remove_job(text); Type: FUNCTION; Schema: graphile_worker; Owner: -
--

CREATE FUNCTION graphile_worker.remove_job(job_key text) RETURNS graphile_worker._private_jobs
    LANGUAGE plpgsql STRICT
    AS $$
declare
  v_job "graphile_worker"._private_jobs;
begin
  -- Delete job if not locked
  delete from "graphile_worker"._private_jobs as jobs
    where key = job_key
    and (
      locked_at is null
    or
      locked_at < NOW() - interval '4 hours'
    )
  returning * into v_job;
  if not (v_job is null) then
    perform pg_notify('jobs:insert', '{"r":' || random()::text || ',"count":-1}');
    return v_job;
  end if;
  -- Otherwise prevent job from retrying, and clear the key
  update "graphile_worker"._private_jobs as jobs
  set
    key = null,
    attempts = jobs.max_attempts,
    updated_at = now()
  where key = job_key
  returning * into v_job;
  return v_job;
end;
$$;


--
-- Name: reschedule_jobs(bigint[], timestamp with time zone, integer, integer, integer); Type: FUNCTION; Schema: graphile_worker; Owner: -
--

CREATE FUNCTION graphile_worker.reschedule_jobs(job_ids bigint[], run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT NULL::integer, attempts integer DEFAULT NULL::integer, max_attempts integer DEFAULT NULL::integer) RETURNS SETOF graphile_worker._private_jobs
    LANGUAGE sql
    AS $$
  update "graphile_worker"._private_jobs as jobs
    set
      run_at = coalesce(reschedule_jobs.run_at, jobs.run_at),
      priority = coalesce(reschedule_jobs.priority::smallint, jobs.priority),
      attempts = coalesce(reschedule_jobs.attempts::smallint, jobs.attempts),
      max_attempts = coalesce(reschedule_jobs.max_attempts::smallint, jobs.max_attempts),
      updated_at = now()
    where id = any(job_ids)
    and (
      locked_at is null
    or
      locked_at < NOW() - interval '4 hours'
    )
    returning *;
$$;


--
-- Name: api_token_role(uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.api_token_role(p_token uuid) RETURNS public.member_role
    LANGUAGE sql STABLE
    AS $$
  SELECT CASE
           WHEN t.created_by IS NULL THEN t.role
           WHEN u.disabled_at IS NOT NULL THEN NULL
           WHEN 'admin' = ANY (u.platform_roles) THEN t.role
           -- least() skips nulls: a creator without a role leaves the token none.
           WHEN r.role IS NULL THEN NULL
           ELSE least(t.role, r.role)
         END
  FROM api_tokens t
  JOIN projects p ON p.id = t.project_id
  LEFT JOIN users u ON u.id = t.created_by
  LEFT JOIN LATERAL (
    SELECT max(m.role) AS role FROM memberships m
    WHERE m.user_id = t.created_by AND (m.project_id = t.project_id OR m.organization_id = p.organization_id)
  ) r ON true
  WHERE t.id = p_token AND t.kind = 'project' AND t.revoked_at IS NULL
$$;


--
-- Name: api_tokens_revoke_with_creator(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.api_tokens_revoke_with_creator() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  UPDATE api_tokens SET revoked_at = now() WHERE created_by = OLD.id AND revoked_at IS NULL;
  RETURN OLD;
END
$$;


--
-- Name: cni_lease_add(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.cni_lease_add(p jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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


--
-- Name: cni_lease_add_confirmed(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.cni_lease_add_confirmed(p jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
DECLARE
  v_cluster_live boolean;
  v_role member_role;
BEGIN
  PERFORM 1 FROM clusters WHERE id = (p->>'cluster')::uuid FOR KEY SHARE;
  v_cluster_live := FOUND;
  -- After the lock: a token revoked by a deletion that committed meanwhile is seen revoked here.
  IF p ? 'token' THEN
    v_role := api_token_role((p->>'token')::uuid);
    IF v_role IS NULL THEN
      RETURN '{"tokenRevoked": true}'::jsonb;
    END IF;
    IF v_role < 'editor' THEN
      RETURN '{"tokenForbidden": true}'::jsonb;
    END IF;
  END IF;
  IF NOT v_cluster_live THEN
    RETURN '{"clusterGone": true}'::jsonb;
  END IF;
  RETURN cni_lease_add(p);
END
$$;


--
-- Name: cni_lease_add_many(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.cni_lease_add_many(p_items jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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


--
-- Name: cni_lease_add_many_confirmed(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.cni_lease_add_many_confirmed(p_items jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
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
  SELECT array_agg(CASE WHEN x.v ? 'token' AND t.role IS NULL THEN '{"tokenRevoked": true}'::jsonb
                        WHEN x.v ? 'token' AND t.role < 'editor' THEN '{"tokenForbidden": true}'::jsonb
                        WHEN NOT (x.v->>'cluster')::uuid = ANY (coalesce(v_clusters, '{}')) THEN '{"clusterGone": true}'::jsonb
                   END ORDER BY x.i) INTO v_answer
  FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(v, i)
  LEFT JOIN LATERAL (SELECT api_token_role((x.v->>'token')::uuid) AS role WHERE x.v ? 'token') t ON true;
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


--
-- Name: cni_lease_release(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.cni_lease_release(p jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
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


--
-- Name: cni_node_block_ensure(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.cni_node_block_ensure(p jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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


--
-- Name: cni_node_block_ensure_locked(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.cni_node_block_ensure_locked(p jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM 1 FROM clusters WHERE id = (p->>'cluster')::uuid FOR KEY SHARE;
  IF NOT FOUND THEN
    RETURN '{"clusterGone": true}'::jsonb;
  END IF;
  RETURN cni_node_block_ensure(p);
END
$$;


--
-- Name: cni_node_block_return(uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.cni_node_block_return(p_block uuid) RETURNS boolean
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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


--
-- Name: events_refuse_change(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.events_refuse_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  RAISE EXCEPTION 'events is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;


--
-- Name: ipam_allocate(uuid, integer, cidr, text, uuid, uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ipam_allocate(p_pool uuid, p_prefix integer, p_pinned cidr, p_kind text, p_claim uuid, p_child_pool uuid, OUT o_allocation_id uuid, OUT o_cidr cidr, OUT o_size numeric) RETURNS record
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
  v_pool ip_pools%ROWTYPE;
  v_from cidr;
BEGIN
  SELECT * INTO v_pool FROM ip_pools WHERE id = p_pool FOR UPDATE;
  IF NOT FOUND THEN RETURN; END IF;
  IF p_pinned IS NOT NULL THEN
    IF NOT (v_pool.cidr >>= p_pinned) THEN
      RAISE EXCEPTION '% is outside pool %', p_pinned, v_pool.name USING ERRCODE = 'MA001';
    END IF;
    SELECT b.cidr INTO v_from FROM ip_free_blocks b
    WHERE b.pool_id = p_pool
      AND b.cidr = ANY (ARRAY(SELECT set_masklen(p_pinned, k) FROM generate_series(masklen(v_pool.cidr), masklen(p_pinned)) AS k))
    LIMIT 1;
    IF v_from IS NULL THEN
      RAISE EXCEPTION '% is not free in pool %', p_pinned, v_pool.name USING ERRCODE = 'MA002';
    END IF;
    o_cidr := p_pinned;
  ELSE
    IF v_pool.strategy = 'BestFit' THEN
      SELECT b.cidr INTO v_from FROM ip_free_blocks b
      WHERE b.pool_id = p_pool AND b.prefix_length <= p_prefix
      ORDER BY b.prefix_length DESC, b.cidr LIMIT 1;
    ELSE
      SELECT b.cidr INTO v_from
      FROM generate_series(masklen(v_pool.cidr), p_prefix) AS k(len)
      CROSS JOIN LATERAL (
        SELECT fb.cidr FROM ip_free_blocks fb WHERE fb.pool_id = p_pool AND fb.prefix_length = k.len ORDER BY fb.cidr LIMIT 1
      ) b
      ORDER BY b.cidr LIMIT 1;
    END IF;
    IF v_from IS NULL THEN RETURN; END IF;
    o_cidr := set_masklen(v_from, p_prefix);
  END IF;
  DELETE FROM ip_free_blocks WHERE pool_id = p_pool AND cidr = v_from;
  INSERT INTO ip_free_blocks (pool_id, cidr, prefix_length)
    SELECT p_pool, s, masklen(s) FROM ipam_split(v_from, o_cidr) AS s;
  o_size := trunc(power(2::numeric, (CASE family(o_cidr) WHEN 4 THEN 32 ELSE 128 END) - masklen(o_cidr)));
  INSERT INTO ip_allocations (pool_id, project_id, network_id, cidr, kind, claim_id, child_pool_id, size)
    VALUES (p_pool, v_pool.project_id, v_pool.network_id, o_cidr, p_kind, p_claim, p_child_pool, o_size)
    RETURNING id INTO o_allocation_id;
  UPDATE ip_pools SET allocated = allocated + o_size, allocation_count = allocation_count + 1 WHERE id = p_pool;
END
$$;


--
-- Name: ipam_buddy(cidr); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ipam_buddy(b cidr) RETURNS cidr
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  SELECT CASE WHEN set_masklen(set_masklen(b, masklen(b) - 1), masklen(b)) = b
              THEN cidr(set_masklen(broadcast(set_masklen(b, masklen(b) - 1)), masklen(b)))
              ELSE set_masklen(set_masklen(b, masklen(b) - 1), masklen(b)) END
$$;


--
-- Name: ipam_claim_create(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ipam_claim_create(p jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
  v_result jsonb := ipam_claim_try(p);
BEGIN
  IF v_result->>'refused' = 'quotaNameTaken' THEN
    RAISE EXCEPTION 'quota claim name taken' USING ERRCODE = 'MQ002';
  ELSIF v_result->>'refused' = 'quotaExceeded' THEN
    RAISE EXCEPTION 'quota exceeded' USING ERRCODE = 'MQ001', DETAIL = v_result->>'index';
  END IF;
  IF (p->>'dryRun')::boolean AND NOT v_result ? 'exhausted' THEN
    RAISE EXCEPTION 'dry run' USING ERRCODE = 'MD001', DETAIL = v_result::text;
  END IF;
  RETURN v_result;
END
$$;


--
-- Name: ipam_claim_create_many(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ipam_claim_create_many(p_items jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
  v_item jsonb;
  v_out jsonb := '[]'::jsonb;
BEGIN
  -- Every name first (in one order), then every pool the batch may draw from (by id), then the
  -- buckets claim by claim: the order a single create and a deletion take them in.
  PERFORM pg_advisory_xact_lock(h) FROM (
    SELECT DISTINCT hashtextextended('ipclaim:' || (i->>'project') || ':' || (i->>'name'), 0) AS h
    FROM jsonb_array_elements(p_items) i) names
    ORDER BY h;
  PERFORM 1 FROM ip_pools
    WHERE id IN (SELECT (c->>'pool')::uuid FROM jsonb_array_elements(p_items) i, jsonb_array_elements(i->'candidates') c)
    ORDER BY id FOR UPDATE;
  FOR v_item IN SELECT value FROM jsonb_array_elements(p_items) LOOP
    v_out := v_out || jsonb_build_array(ipam_claim_try(v_item));
  END LOOP;
  RETURN v_out;
END
$$;


--
-- Name: ipam_claim_try(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ipam_claim_try(p jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
  v_claim uuid := gen_random_uuid();
  v_project uuid := (p->>'project')::uuid;
  v_requests jsonb := p#>'{quota,requests}';
  v_candidate jsonb;
  v_alloc record;
  v_pool_name text;
  v_created timestamptz;
  v_quota jsonb := NULL;
BEGIN
  -- Lock order: the claim's name, the candidate pools (by id), then the quota bucket — as a claim's
  -- deletion takes its name, its pool, then its bucket. Taking the name first means a create never
  -- waits on the name (a deletion of it in flight) while holding a pool or the bucket.
  PERFORM pg_advisory_xact_lock(hashtextextended('ipclaim:' || (p->>'project') || ':' || (p->>'name'), 0));
  PERFORM 1 FROM ip_pools WHERE id IN (SELECT (c->>'pool')::uuid FROM jsonb_array_elements(p->'candidates') c) ORDER BY id FOR UPDATE;
  IF jsonb_typeof(p->'quota') = 'object' THEN
    v_quota := quota_admit(v_project, p#>>'{quota,name}', v_requests, 'IPClaim', p->>'name', v_claim::text,
                           p#>>'{quota,policy}', p#>>'{actor,label}');
    IF NOT (v_quota->>'granted')::boolean THEN
      -- quota_admit grew the buckets of the requests before the refused one (all of them when the
      -- claim name was taken): give that back.
      IF (v_quota->>'nameTaken')::boolean THEN
        PERFORM quota_unadmit(v_project, v_requests, jsonb_array_length(v_requests), NULL);
        RETURN jsonb_build_object('refused', 'quotaNameTaken');
      END IF;
      PERFORM quota_unadmit(v_project, v_requests, (v_quota->>'index')::int, NULL);
      RETURN jsonb_build_object('refused', 'quotaExceeded', 'index', (v_quota->>'index')::int);
    END IF;
  END IF;
  FOR v_candidate IN SELECT value FROM jsonb_array_elements(p->'candidates') LOOP
    SELECT * INTO v_alloc FROM ipam_allocate((v_candidate->>'pool')::uuid, (v_candidate->>'prefix')::int,
      (p->>'pinned')::cidr, 'Claim', v_claim, NULL);
    IF v_alloc.o_allocation_id IS NOT NULL THEN
      v_pool_name := v_candidate->>'name';
      EXIT;
    END IF;
  END LOOP;
  IF v_pool_name IS NULL THEN
    IF v_quota IS NOT NULL THEN
      PERFORM quota_unadmit(v_project, v_requests, jsonb_array_length(v_requests), (v_quota->>'id')::uuid);
    END IF;
    RETURN jsonb_build_object('exhausted', true);
  END IF;
  INSERT INTO ip_claims (id, project_id, network_id, pool_id, name, family, prefix_length, requested_cidr, reclaim_policy,
                         retention_seconds, owner_ref, labels, spec_hash, allocation_id, allocated_cidr, created_by)
    VALUES (v_claim, v_project, (p->>'network')::uuid, (v_candidate->>'pool')::uuid, p->>'name', (p->>'family')::smallint,
            masklen(v_alloc.o_cidr), (p->>'pinned')::cidr, p->>'reclaimPolicy', (p->>'retentionSeconds')::int,
            CASE WHEN jsonb_typeof(p->'ownerRef') = 'object' THEN p->'ownerRef' END, coalesce(p->'labels', '{}'::jsonb),
            p->>'specHash', v_alloc.o_allocation_id, v_alloc.o_cidr, p#>>'{actor,label}')
    RETURNING created_at INTO v_created;
  INSERT INTO events (actor_type, actor_id, actor_label, project_id, action, object_type, object_id, object_name, after)
    VALUES (p#>>'{actor,type}', p#>>'{actor,id}', p#>>'{actor,label}', v_project, 'ipclaim.create', 'ipclaim', v_claim::text,
            p->>'name', jsonb_build_object('network', p->>'networkName', 'pool', v_pool_name, 'allocatedCidr', v_alloc.o_cidr::text));
  RETURN jsonb_build_object('id', v_claim, 'pool', v_pool_name, 'allocationId', v_alloc.o_allocation_id,
    'allocatedCidr', v_alloc.o_cidr::text, 'prefixLength', masklen(v_alloc.o_cidr), 'createdAt', v_created, 'quota', v_quota);
END
$$;


--
-- Name: ipam_range_blocks(inet, inet); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ipam_range_blocks(lo inet, hi inet) RETURNS SETOF cidr
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
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


--
-- Name: ipam_release(uuid, uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ipam_release(p_pool uuid, p_allocation uuid) RETURNS cidr
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
  v_root cidr;
  v_released cidr;
  v_size numeric;
  v_cur cidr;
  v_buddy cidr;
BEGIN
  SELECT cidr INTO v_root FROM ip_pools WHERE id = p_pool FOR UPDATE;
  IF NOT FOUND THEN RETURN NULL; END IF;
  DELETE FROM ip_allocations WHERE id = p_allocation AND pool_id = p_pool RETURNING cidr, size INTO v_released, v_size;
  IF v_released IS NULL THEN RETURN NULL; END IF;
  v_cur := v_released;
  WHILE masklen(v_cur) > masklen(v_root) LOOP
    v_buddy := ipam_buddy(v_cur);
    DELETE FROM ip_free_blocks WHERE pool_id = p_pool AND cidr = v_buddy;
    EXIT WHEN NOT FOUND;
    v_cur := set_masklen(v_cur, masklen(v_cur) - 1);
  END LOOP;
  INSERT INTO ip_free_blocks (pool_id, cidr, prefix_length) VALUES (p_pool, v_cur, masklen(v_cur));
  UPDATE ip_pools SET allocated = allocated - v_size, allocation_count = allocation_count - 1 WHERE id = p_pool;
  RETURN v_released;
END
$$;


--
-- Name: ipam_split(cidr, cidr); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ipam_split(f cidr, t cidr) RETURNS SETOF cidr
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  SELECT ipam_buddy(set_masklen(t, l)) FROM generate_series(masklen(f) + 1, masklen(t)) AS l
$$;


--
-- Name: ipam_upper_half(cidr); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ipam_upper_half(p cidr) RETURNS cidr
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  SELECT cidr(set_masklen(broadcast(p), masklen(p) + 1))
$$;


--
-- Name: machine_allocations_immutable(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.machine_allocations_immutable() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF NEW.machine_id <> OLD.machine_id OR NEW.capacity_id <> OLD.capacity_id OR NEW.epoch <> OLD.epoch THEN
    RAISE EXCEPTION 'machine_allocations spec is immutable' USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF OLD.status = 'Released' AND NEW.status <> 'Released' THEN
    RAISE EXCEPTION 'a Released allocation is terminal' USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$;


--
-- Name: machine_capacity_device_ref_immutable(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.machine_capacity_device_ref_immutable() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF NEW.device_ref <> OLD.device_ref THEN
    RAISE EXCEPTION 'machine_capacity.device_ref is immutable (% → % refused)', OLD.device_ref, NEW.device_ref
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF NEW.asset_epoch < OLD.asset_epoch THEN
    RAISE EXCEPTION 'machine_capacity.asset_epoch only grows (% → % refused)', OLD.asset_epoch, NEW.asset_epoch
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$;


--
-- Name: meridian_add_job(text, json, text, timestamp with time zone, integer, text, integer, text[], text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.meridian_add_job(identifier text, payload json DEFAULT NULL::json, queue_name text DEFAULT NULL::text, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, max_attempts integer DEFAULT NULL::integer, job_key text DEFAULT NULL::text, priority integer DEFAULT NULL::integer, flags text[] DEFAULT NULL::text[], job_key_mode text DEFAULT 'replace'::text) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
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


--
-- Name: project_deletion_wake_on_release(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.project_deletion_wake_on_release() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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


--
-- Name: project_refuse_new_objects(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.project_refuse_new_objects() RETURNS trigger
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
  v_slug text;
BEGIN
  IF NEW.project_id IS NULL OR current_setting('meridian.loading_backup', true) = 'on' THEN
    RETURN NEW;
  END IF;
  SELECT slug INTO v_slug FROM projects WHERE id = NEW.project_id AND phase <> 'Active';
  IF FOUND THEN
    RAISE EXCEPTION 'project "%" is being deleted: nothing new can be created in it', v_slug
      USING ERRCODE = 'MP001', DETAIL = v_slug, TABLE = TG_TABLE_NAME;
  END IF;
  RETURN NEW;
END;
$$;


--
-- Name: quota_admit(uuid, text, jsonb, text, text, text, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.quota_admit(p_project uuid, p_name text, p_requests jsonb, p_kind text, p_ref_name text, p_ref_uid text, p_policy text, p_created_by text) RETURNS jsonb
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
  v_req jsonb;
  v_index int := 0;
  v_limit numeric;
  v_allocated numeric;
  v_buckets jsonb := '[]'::jsonb;
  v_allocations jsonb := '[]'::jsonb;
  v_message text;
  v_id uuid;
BEGIN
  FOR v_req IN SELECT value FROM jsonb_array_elements(p_requests) LOOP
    UPDATE allowance_buckets
      SET allocated = allocated + (v_req->>'amount')::bigint, claim_count = claim_count + 1, updated_at = now()
      WHERE project_id = p_project AND resource_type = v_req->>'resourceType' AND allocated + (v_req->>'amount')::bigint <= "limit"
      RETURNING "limit", allocated INTO v_limit, v_allocated;
    IF NOT FOUND THEN
      RETURN jsonb_build_object('granted', false, 'index', v_index);
    END IF;
    v_message := 'granted ' || (v_req->>'amount') || ' ' || (v_req->>'resourceType') || ' (allocated ' || v_allocated || ' of ' || v_limit || ')';
    v_buckets := v_buckets || jsonb_build_object('resourceType', v_req->>'resourceType', 'limit', v_limit, 'allocated', v_allocated);
    v_allocations := v_allocations || jsonb_build_object('resourceType', v_req->>'resourceType', 'amount', (v_req->>'amount')::bigint,
      'status', 'Granted', 'reason', 'QuotaAvailable', 'message', v_message);
    v_index := v_index + 1;
  END LOOP;
  -- The name check is the live-name unique index itself (ON CONFLICT), not a query the planner
  -- could answer by scanning the project's claims.
  INSERT INTO resource_claims (project_id, name, requests, status, reason, message, allocations, ref_kind, ref_name, ref_uid, policy_name, created_by)
    VALUES (p_project, p_name, p_requests, 'Granted', 'QuotaAvailable',
            (SELECT string_agg(a->>'message', '; ') FROM jsonb_array_elements(v_allocations) a),
            v_allocations, p_kind, p_ref_name, p_ref_uid, p_policy, p_created_by)
    ON CONFLICT (project_id, name) WHERE status = 'Granted' AND released_at IS NULL DO NOTHING
    RETURNING id INTO v_id;
  IF v_id IS NULL THEN
    -- A live claim holds the name. The same object's: a unique violation, as the insert would raise.
    IF EXISTS (SELECT 1 FROM resource_claims c
               WHERE c.project_id = p_project AND c.name = p_name AND c.status = 'Granted' AND c.released_at IS NULL
                 AND (c.ref_kind, c.ref_name) IS NOT DISTINCT FROM (p_kind, p_ref_name)) THEN
      RAISE EXCEPTION 'duplicate key value violates unique constraint "resource_claims_live_name"'
        USING ERRCODE = 'unique_violation', CONSTRAINT = 'resource_claims_live_name';
    END IF;
    RETURN jsonb_build_object('granted', false, 'nameTaken', true);
  END IF;
  RETURN jsonb_build_object('granted', true, 'id', v_id, 'buckets', v_buckets);
END
$$;


--
-- Name: quota_unadmit(uuid, jsonb, integer, uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.quota_unadmit(p_project uuid, p_requests jsonb, p_count integer, p_claim uuid) RETURNS void
    LANGUAGE sql
    AS $$
  UPDATE allowance_buckets b
    SET allocated = b.allocated - (r.value->>'amount')::bigint, claim_count = b.claim_count - 1, updated_at = now()
    FROM jsonb_array_elements(p_requests) WITH ORDINALITY AS r(value, n)
    WHERE r.n <= p_count AND b.project_id = p_project AND b.resource_type = r.value->>'resourceType';
  DELETE FROM resource_claims WHERE id = p_claim;
$$;


--
-- Name: __drizzle_migrations; Type: TABLE; Schema: drizzle; Owner: -
--

CREATE TABLE drizzle.__drizzle_migrations (
    id integer NOT NULL,
    hash text NOT NULL,
    created_at bigint
);


--
-- Name: __drizzle_migrations_id_seq; Type: SEQUENCE; Schema: drizzle; Owner: -
--

CREATE SEQUENCE drizzle.__drizzle_migrations_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: __drizzle_migrations_id_seq; Type: SEQUENCE OWNED BY; Schema: drizzle; Owner: -
--

ALTER SEQUENCE drizzle.__drizzle_migrations_id_seq OWNED BY drizzle.__drizzle_migrations.id;


--
-- Name: _private_job_queues; Type: TABLE; Schema: graphile_worker; Owner: -
--

CREATE TABLE graphile_worker._private_job_queues (
    id integer NOT NULL,
    queue_name text NOT NULL,
    locked_at timestamp with time zone,
    locked_by text,
    is_available boolean GENERATED ALWAYS AS ((locked_at IS NULL)) STORED NOT NULL,
    CONSTRAINT job_queues_queue_name_check CHECK ((length(queue_name) <= 128))
);


--
-- Name: _private_known_crontabs; Type: TABLE; Schema: graphile_worker; Owner: -
--

CREATE TABLE graphile_worker._private_known_crontabs (
    identifier text NOT NULL,
    known_since timestamp with time zone NOT NULL,
    last_execution timestamp with time zone
);


--
-- Name: _private_tasks; Type: TABLE; Schema: graphile_worker; Owner: -
--

CREATE TABLE graphile_worker._private_tasks (
    id integer NOT NULL,
    identifier text NOT NULL,
    CONSTRAINT tasks_identifier_check CHECK ((length(identifier) <= 128))
);


--
-- Name: job_queues_id_seq; Type: SEQUENCE; Schema: graphile_worker; Owner: -
--

ALTER TABLE graphile_worker._private_job_queues ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME graphile_worker.job_queues_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: jobs; Type: VIEW; Schema: graphile_worker; Owner: -
--

CREATE VIEW graphile_worker.jobs AS
 SELECT jobs.id,
    job_queues.queue_name,
    tasks.identifier AS task_identifier,
    jobs.priority,
    jobs.run_at,
    jobs.attempts,
    jobs.max_attempts,
    jobs.last_error,
    jobs.created_at,
    jobs.updated_at,
    jobs.key,
    jobs.locked_at,
    jobs.locked_by,
    jobs.revision,
    jobs.flags
   FROM ((graphile_worker._private_jobs jobs
     JOIN graphile_worker._private_tasks tasks ON ((tasks.id = jobs.task_id)))
     LEFT JOIN graphile_worker._private_job_queues job_queues ON ((job_queues.id = jobs.job_queue_id)));


--
-- Name: jobs_id_seq1; Type: SEQUENCE; Schema: graphile_worker; Owner: -
--

ALTER TABLE graphile_worker._private_jobs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME graphile_worker.jobs_id_seq1
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: migrations; Type: TABLE; Schema: graphile_worker; Owner: -
--

CREATE TABLE graphile_worker.migrations (
    id integer NOT NULL,
    ts timestamp with time zone DEFAULT now() NOT NULL,
    breaking boolean DEFAULT false NOT NULL
);


--
-- Name: tasks_id_seq; Type: SEQUENCE; Schema: graphile_worker; Owner: -
--

ALTER TABLE graphile_worker._private_tasks ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME graphile_worker.tasks_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: allowance_buckets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.allowance_buckets (
    project_id uuid NOT NULL,
    resource_type text NOT NULL,
    "limit" bigint DEFAULT 0 NOT NULL,
    allocated bigint DEFAULT 0 NOT NULL,
    claim_count integer DEFAULT 0 NOT NULL,
    grant_count integer DEFAULT 0 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT allowance_buckets_sane CHECK (((allocated >= 0) AND ("limit" >= 0) AND (claim_count >= 0) AND (grant_count >= 0)))
);


--
-- Name: api_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_tokens (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid,
    cluster_name text,
    name text NOT NULL,
    prefix text NOT NULL,
    token_hash text NOT NULL,
    role public.member_role DEFAULT 'editor'::public.member_role NOT NULL,
    created_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone,
    revoked_at timestamp with time zone,
    kind public.token_kind DEFAULT 'project'::public.token_kind NOT NULL,
    user_id uuid,
    CONSTRAINT api_tokens_kind_scope CHECK ((((kind = 'project'::public.token_kind) AND (project_id IS NOT NULL) AND (user_id IS NULL)) OR ((kind = 'operator'::public.token_kind) AND (project_id IS NULL) AND (user_id IS NOT NULL) AND (cluster_name IS NULL))))
);


--
-- Name: claim_creation_policies; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.claim_creation_policies (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    trigger_kind text NOT NULL,
    constraints jsonb DEFAULT '[]'::jsonb NOT NULL,
    claim_name_template text NOT NULL,
    requests jsonb NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    ready boolean DEFAULT false NOT NULL,
    ready_reason text DEFAULT 'Pending'::text NOT NULL,
    ready_message text DEFAULT ''::text NOT NULL,
    generation integer DEFAULT 1 NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: clusters; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.clusters (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    name text NOT NULL,
    network_id uuid NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    node_block_prefix_v4 smallint DEFAULT 26 NOT NULL,
    node_block_prefix_v6 smallint DEFAULT 120 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.events (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor_type text NOT NULL,
    actor_id text,
    actor_label text NOT NULL,
    project_id uuid,
    action text NOT NULL,
    object_type text NOT NULL,
    object_id text,
    object_name text,
    reason text,
    before jsonb,
    after jsonb
);


--
-- Name: events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: events_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.events_id_seq OWNED BY public.events.id;


--
-- Name: grant_creation_policies; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.grant_creation_policies (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    trigger_kind text DEFAULT 'Project'::text NOT NULL,
    constraints jsonb DEFAULT '[]'::jsonb NOT NULL,
    grant_name_template text NOT NULL,
    allowances jsonb NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    ready boolean DEFAULT false NOT NULL,
    ready_reason text DEFAULT 'Pending'::text NOT NULL,
    ready_message text DEFAULT ''::text NOT NULL,
    generation integer DEFAULT 1 NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: installations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.installations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    machine_id uuid NOT NULL,
    allocation_id uuid NOT NULL,
    image_digest text NOT NULL,
    predecessor_id uuid,
    operation_id text NOT NULL,
    status text DEFAULT 'Pending'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    completed_at timestamp with time zone
);


--
-- Name: ip_allocations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ip_allocations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    pool_id uuid NOT NULL,
    project_id uuid NOT NULL,
    network_id uuid NOT NULL,
    cidr cidr NOT NULL,
    kind text NOT NULL,
    claim_id uuid,
    child_pool_id uuid,
    size numeric(40,0) NOT NULL,
    retained_name text,
    retained_until timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: ip_claims; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ip_claims (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    network_id uuid NOT NULL,
    pool_id uuid NOT NULL,
    name text NOT NULL,
    family smallint NOT NULL,
    prefix_length smallint NOT NULL,
    requested_cidr cidr,
    reclaim_policy text DEFAULT 'Delete'::text NOT NULL,
    retention_seconds integer DEFAULT 604800 NOT NULL,
    owner_ref jsonb,
    labels jsonb DEFAULT '{}'::jsonb NOT NULL,
    spec_hash text NOT NULL,
    allocation_id uuid NOT NULL,
    allocated_cidr cidr NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: ip_free_blocks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ip_free_blocks (
    pool_id uuid NOT NULL,
    cidr cidr NOT NULL,
    prefix_length smallint NOT NULL
);


--
-- Name: ip_pools; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ip_pools (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    network_id uuid NOT NULL,
    parent_pool_id uuid,
    name text NOT NULL,
    kind text DEFAULT 'Root'::text NOT NULL,
    cidr cidr NOT NULL,
    family smallint NOT NULL,
    min_prefix_length smallint NOT NULL,
    max_prefix_length smallint NOT NULL,
    default_prefix_length smallint NOT NULL,
    strategy text DEFAULT 'FirstFit'::text NOT NULL,
    reserve_leading numeric(40,0) DEFAULT '0'::numeric NOT NULL,
    reserve_trailing numeric(40,0) DEFAULT '0'::numeric NOT NULL,
    capacity numeric(40,0) NOT NULL,
    allocated numeric(40,0) DEFAULT '0'::numeric NOT NULL,
    allocation_count integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT ip_pools_counters_sane CHECK (((allocated >= (0)::numeric) AND (allocated <= capacity))),
    CONSTRAINT ip_pools_family CHECK ((family = ANY (ARRAY[4, 6]))),
    CONSTRAINT ip_pools_reservations_fit CHECK (((reserve_leading >= (0)::numeric) AND (reserve_trailing >= (0)::numeric) AND (((capacity + reserve_leading) + reserve_trailing) = trunc(power((2)::numeric, ((
CASE family
    WHEN 4 THEN 32
    ELSE 128
END - masklen((cidr)::inet)))::numeric)))))
);


--
-- Name: locations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.locations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    display_name text NOT NULL,
    ready boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: machine_allocations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.machine_allocations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    machine_id uuid NOT NULL,
    capacity_id uuid NOT NULL,
    epoch bigint NOT NULL,
    status text NOT NULL,
    release_reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    released_at timestamp with time zone
);


--
-- Name: machine_capacity; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.machine_capacity (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    device_ref text NOT NULL,
    class_id uuid NOT NULL,
    location_id uuid NOT NULL,
    health text DEFAULT 'Healthy'::text NOT NULL,
    available boolean DEFAULT true NOT NULL,
    observed_at timestamp with time zone DEFAULT now() NOT NULL,
    state text DEFAULT 'Available'::text NOT NULL,
    state_reason text,
    asset_epoch bigint DEFAULT 0 NOT NULL,
    fencing_seq bigint DEFAULT 0 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT machine_capacity_state CHECK ((state = ANY (ARRAY['Available'::text, 'Bound'::text, 'Cleaning'::text, 'Quarantined'::text, 'Retired'::text])))
);


--
-- Name: machine_classes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.machine_classes (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    cores integer NOT NULL,
    memory_gib integer NOT NULL,
    arch text NOT NULL,
    requires_approval boolean DEFAULT false NOT NULL
);


--
-- Name: machine_profiles; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.machine_profiles (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    image_ref text NOT NULL,
    image_digest text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: machines; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.machines (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    name text NOT NULL,
    class_id uuid NOT NULL,
    profile_id uuid NOT NULL,
    location_id uuid NOT NULL,
    desired_power text DEFAULT 'on'::text NOT NULL,
    interfaces jsonb DEFAULT '[]'::jsonb NOT NULL,
    phase text NOT NULL,
    phase_reason text,
    requires_approval boolean DEFAULT false NOT NULL,
    approved_by uuid,
    approved_at timestamp with time zone,
    deletion_requested_at timestamp with time zone,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    phase_changed_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: memberships; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memberships (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    organization_id uuid,
    project_id uuid,
    role public.member_role NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT membership_scope CHECK (((organization_id IS NULL) <> (project_id IS NULL)))
);


--
-- Name: metric_counters; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.metric_counters (
    metric text NOT NULL,
    labels text NOT NULL,
    value bigint DEFAULT 0 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: networks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.networks (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    created_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: node_blocks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.node_blocks (
    pool_id uuid NOT NULL,
    cluster_id uuid NOT NULL,
    node text NOT NULL,
    family smallint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: organizations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.organizations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    slug text NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: pod_leases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.pod_leases (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    cluster_id uuid NOT NULL,
    cni_network text NOT NULL,
    container_id text NOT NULL,
    ifname text NOT NULL,
    family smallint NOT NULL,
    pool_id uuid NOT NULL,
    allocation_id uuid NOT NULL,
    address cidr NOT NULL,
    pod_namespace text,
    pod_name text,
    node text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    checked_at timestamp with time zone
);


--
-- Name: project_deletion_blockers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.project_deletion_blockers (
    project_id uuid NOT NULL,
    object_kind text NOT NULL,
    object_id text NOT NULL,
    object_name text NOT NULL,
    waiting_on text NOT NULL,
    status text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone,
    last_error text,
    since timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: project_fleet_settings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.project_fleet_settings (
    project_id uuid NOT NULL,
    approval_required boolean DEFAULT false NOT NULL
);


--
-- Name: projects; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.projects (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    organization_id uuid NOT NULL,
    slug text NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    phase text DEFAULT 'Active'::text NOT NULL,
    deletion_requested_at timestamp with time zone,
    deletion_requested_by text,
    deletion_attempts integer DEFAULT 0 NOT NULL,
    deletion_next_pass_at timestamp with time zone,
    CONSTRAINT projects_deletion_requested CHECK (((phase = 'Deleting'::text) = (deletion_requested_at IS NOT NULL))),
    CONSTRAINT projects_phase CHECK ((phase = ANY (ARRAY['Active'::text, 'Deleting'::text])))
);


--
-- Name: provider_operations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_operations (
    id text NOT NULL,
    kind text NOT NULL,
    machine_id uuid,
    capacity_id uuid NOT NULL,
    device_ref text NOT NULL,
    binding_id uuid NOT NULL,
    epoch bigint NOT NULL,
    fencing_token bigint NOT NULL,
    request jsonb NOT NULL,
    state text DEFAULT 'Admitted'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last_error text,
    result jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    acknowledged_at timestamp with time zone,
    acknowledged_by text,
    acknowledgement text
);


--
-- Name: quota_increase_requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quota_increase_requests (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    resource_type text NOT NULL,
    amount bigint NOT NULL,
    reason text NOT NULL,
    status text DEFAULT 'Pending'::text NOT NULL,
    requested_by text NOT NULL,
    decided_by text,
    decided_at timestamp with time zone,
    decision_reason text,
    approved_amount bigint,
    grant_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT quota_increase_requests_amount CHECK ((amount > 0))
);


--
-- Name: resource_claims; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.resource_claims (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    name text NOT NULL,
    requests jsonb NOT NULL,
    status text NOT NULL,
    reason text NOT NULL,
    message text NOT NULL,
    allocations jsonb NOT NULL,
    ref_kind text NOT NULL,
    ref_name text NOT NULL,
    ref_uid text,
    policy_name text,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    released_at timestamp with time zone
);


--
-- Name: resource_grants; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.resource_grants (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    project_id uuid NOT NULL,
    name text NOT NULL,
    allowances jsonb NOT NULL,
    active boolean DEFAULT true NOT NULL,
    active_reason text DEFAULT 'AllResourceTypesRegistered'::text NOT NULL,
    active_message text DEFAULT ''::text NOT NULL,
    source text NOT NULL,
    source_ref text,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: resource_registrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.resource_registrations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    resource_type text NOT NULL,
    consumer_kind text DEFAULT 'Project'::text NOT NULL,
    type text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    base_unit text NOT NULL,
    display_unit text NOT NULL,
    unit_conversion_factor bigint DEFAULT 1 NOT NULL,
    claiming_kinds text[] NOT NULL,
    active boolean DEFAULT true NOT NULL,
    active_reason text DEFAULT 'RegistrationActive'::text NOT NULL,
    active_message text DEFAULT ''::text NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: service_availability; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.service_availability (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    location_id uuid NOT NULL,
    service text NOT NULL,
    status text NOT NULL,
    reason text,
    observed_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sessions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_seen_at timestamp with time zone DEFAULT now() NOT NULL,
    user_agent text NOT NULL,
    address text NOT NULL,
    revoked_at timestamp with time zone
);


--
-- Name: settings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.settings (
    key text NOT NULL,
    value text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: sign_in_failures; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sign_in_failures (
    account text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    user_id uuid,
    failures integer DEFAULT 0 NOT NULL,
    refused integer DEFAULT 0 NOT NULL,
    last_client text NOT NULL,
    first_at timestamp with time zone DEFAULT now() NOT NULL,
    last_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: sign_in_throttle; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sign_in_throttle (
    key text NOT NULL,
    failures integer DEFAULT 0 NOT NULL,
    last_failure_at timestamp with time zone DEFAULT now() NOT NULL,
    blocked_until timestamp with time zone
);


--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text NOT NULL,
    name text NOT NULL,
    password_hash text,
    platform_roles public.platform_role[] DEFAULT '{}'::public.platform_role[] NOT NULL,
    disabled_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: worker_heartbeats; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.worker_heartbeats (
    worker_id text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    last_seen_at timestamp with time zone DEFAULT now() NOT NULL,
    graphile_worker_ids text[] DEFAULT '{}'::text[] NOT NULL
);


--
-- Name: __drizzle_migrations id; Type: DEFAULT; Schema: drizzle; Owner: -
--

ALTER TABLE ONLY drizzle.__drizzle_migrations ALTER COLUMN id SET DEFAULT nextval('drizzle.__drizzle_migrations_id_seq'::regclass);


--
-- Name: events id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events ALTER COLUMN id SET DEFAULT nextval('public.events_id_seq'::regclass);


--
-- Data for Name: __drizzle_migrations; Type: TABLE DATA; Schema: drizzle; Owner: -
--

INSERT INTO drizzle.__drizzle_migrations VALUES (1, 'b4ec0fd563e59ff73f456fffb4fb6caed6cf05531796d68ede65854c70bce6fe', 1796047053697);
INSERT INTO drizzle.__drizzle_migrations VALUES (2, 'bcf1bbc52cace8060ae83fc74410b80b141e03e8c5bbad5340a18a09f6532ece', 1796047056969);
INSERT INTO drizzle.__drizzle_migrations VALUES (3, '8ac2d14ca0755e93f00bc850af1c2a2b98c4ca82c959f92605a00c7836852df4', 1796047237053);
INSERT INTO drizzle.__drizzle_migrations VALUES (4, 'f5355217fb5d395e43b86f2c12934a64e1f9fa9f762b53a3a832f783eaf8202c', 1796048010534);
INSERT INTO drizzle.__drizzle_migrations VALUES (5, 'b9e5fe8c15ecdec21b83f83b1c3924205180b6e6469b399e3bc3e15ae735d7bb', 1796048013390);
INSERT INTO drizzle.__drizzle_migrations VALUES (6, '5029ace449661c6f0c97827580a34198f945116f9dbb7d407f412a8f79cbd6c8', 1796048632181);
INSERT INTO drizzle.__drizzle_migrations VALUES (7, '1b11f3505b73a61b0bbd61399cc8c18a3e31c091c11867d4dcd4c82ea759632f', 1796049120246);
INSERT INTO drizzle.__drizzle_migrations VALUES (8, 'fa7a1f26d63ea34abef2147cff194b7765d1bcff1e0c8f281d19ecaeb83e7f0a', 1796049127256);
INSERT INTO drizzle.__drizzle_migrations VALUES (9, 'd7099ccdf29383bf150b09c4aba408a37a5ab0e5253cd67ba40604f87cd73c1e', 1796051614439);
INSERT INTO drizzle.__drizzle_migrations VALUES (10, '4e4dec797c85fd7736b240733d9bcf1d4d806372aafe58dc3b08905c65f9b0ca', 1796051618347);
INSERT INTO drizzle.__drizzle_migrations VALUES (11, '5e997c0835de0152488f99d1eba3bb39742a459a74e893d63c9731defbce2b38', 1796057205430);
INSERT INTO drizzle.__drizzle_migrations VALUES (12, '54b60ce455fc030ed0620efa35ad664f52aa9567f14053ec0de39112788d40de', 1796057206430);
INSERT INTO drizzle.__drizzle_migrations VALUES (13, 'fdeeaa39fb0a608d979f1301f9d882dbeeedd10e15f519d60686b99a740b247f', 1796057207430);
INSERT INTO drizzle.__drizzle_migrations VALUES (14, '6e749ddd1f63e4586dca997849d118e7f9c5433b375b17c407decde31c255be7', 1796058748253);
INSERT INTO drizzle.__drizzle_migrations VALUES (15, '5a96529648d2d65295ed6a680245990634428a01e36fcf45de93db07896bce3c', 1796058762384);
INSERT INTO drizzle.__drizzle_migrations VALUES (16, '2d6f598bc53b5d8d7f4b669721a366dafd0d2da935308e43a7a7807eb585c77c', 1796058763384);
INSERT INTO drizzle.__drizzle_migrations VALUES (17, '7cb7003a1a352012edf25972e6b24de83f8ba33bf9b701b4a1bb9f53e29e8d39', 1796058764384);
INSERT INTO drizzle.__drizzle_migrations VALUES (18, '9fcd27fa8a9851da5fc2dcd6f20f1369a6fe8ba034e923c4c303f4b667c59c5f', 1796075884810);
INSERT INTO drizzle.__drizzle_migrations VALUES (19, 'd4037f297de5b3c8618d97816f7ed9e5c9c404541f0064f779acaea5da765d17', 1796075885810);
INSERT INTO drizzle.__drizzle_migrations VALUES (20, '1381ae32f8661c0ba7ba1db84ced44e0919768c37885125adc2cb5c2d3ad371d', 1796075886810);
INSERT INTO drizzle.__drizzle_migrations VALUES (21, 'c6bdce942828daadc24b7d494f9c67dbeebb048b5825281b14ecb8d33022016b', 1796075887810);
INSERT INTO drizzle.__drizzle_migrations VALUES (22, '71706e1ef04a10bdc1862d07172837f76034a2227b4e28e6f4e1ca1c36b2c3ab', 1796075888810);
INSERT INTO drizzle.__drizzle_migrations VALUES (23, 'f84aab28c7d68a41241eca4a0ab3a1a2d835af16be55f6767084c4d88864ae7c', 1796075889810);
INSERT INTO drizzle.__drizzle_migrations VALUES (24, '2cd4cbd7ad1a2a5acbc22840784c0e03a5bf709ea93f284572e2cb808a903de6', 1796102415336);
INSERT INTO drizzle.__drizzle_migrations VALUES (25, 'b07386e2fdf83d15d03e3182e256a6519190da82488cfe0e3f697a199d4565dc', 1796112411386);
INSERT INTO drizzle.__drizzle_migrations VALUES (26, 'b1a1966295c77788492b731b20745f38219eb66e7eae0f31ed678f7b18fb7a9c', 1796198400000);
INSERT INTO drizzle.__drizzle_migrations VALUES (27, 'fc328e3ac83a48362d8b4babf549691f364c9c67ff581f59fd0aca91766b7ac8', 1796284800000);
INSERT INTO drizzle.__drizzle_migrations VALUES (28, 'be4639a0b30e1ebe212b794a6b8ff118422ed4f6971b1944ff031c1249051070', 1796371200000);
INSERT INTO drizzle.__drizzle_migrations VALUES (29, 'd6adcf3f8f82ac087b6514d110ac561265218be7b97a2e6158c56547341585de', 1796457600000);
INSERT INTO drizzle.__drizzle_migrations VALUES (30, '94cd0b67271495f227bbf11a1a28a9481476e8b7989a8a213a275bad4ef1938d', 1796630400000);
INSERT INTO drizzle.__drizzle_migrations VALUES (31, '686ed297eec7afd4f5abeaf5f97fbd5bad2ab1264aa7b284abd32ba22872ea72', 1796716800000);


--
-- Data for Name: _private_job_queues; Type: TABLE DATA; Schema: graphile_worker; Owner: -
--



--
-- Data for Name: _private_jobs; Type: TABLE DATA; Schema: graphile_worker; Owner: -
--

INSERT INTO graphile_worker._private_jobs OVERRIDING SYSTEM VALUE VALUES (1, NULL, 1, '{"poolId" : "7e5c5093-aad7-4031-a602-6edf7c8847a8"}', 0, '2026-12-01 19:39:05.194079+00', 0, 25, NULL, '2026-12-01 19:34:05.194079+00', '2026-12-01 19:34:05.194079+00', 'cni-return-block:7e5c5093-aad7-4031-a602-6edf7c8847a8', NULL, NULL, 0, NULL, DEFAULT);
INSERT INTO graphile_worker._private_jobs OVERRIDING SYSTEM VALUE VALUES (2, NULL, 1, '{"poolId" : "66232bd3-8766-4e8a-94f4-f23cdb9c3e71"}', 0, '2026-12-01 19:39:05.218102+00', 0, 25, NULL, '2026-12-01 19:34:05.218102+00', '2026-12-01 19:34:05.218102+00', 'cni-return-block:66232bd3-8766-4e8a-94f4-f23cdb9c3e71', NULL, NULL, 0, NULL, DEFAULT);
INSERT INTO graphile_worker._private_jobs OVERRIDING SYSTEM VALUE VALUES (3, NULL, 1, '{"poolId" : "4c0fecce-a2f2-44cd-a6f2-7ce25df57efa"}', 0, '2026-12-01 19:39:05.249751+00', 0, 25, NULL, '2026-12-01 19:34:05.249751+00', '2026-12-01 19:34:05.249751+00', 'cni-return-block:4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', NULL, NULL, 0, NULL, DEFAULT);
INSERT INTO graphile_worker._private_jobs OVERRIDING SYSTEM VALUE VALUES (4, NULL, 1, '{"poolId" : "98b18acc-c7c6-4dcf-ae91-985f333316b3"}', 0, '2026-12-01 19:39:05.253153+00', 0, 25, NULL, '2026-12-01 19:34:05.253153+00', '2026-12-01 19:34:05.253153+00', 'cni-return-block:98b18acc-c7c6-4dcf-ae91-985f333316b3', NULL, NULL, 0, NULL, DEFAULT);


--
-- Data for Name: _private_known_crontabs; Type: TABLE DATA; Schema: graphile_worker; Owner: -
--



--
-- Data for Name: _private_tasks; Type: TABLE DATA; Schema: graphile_worker; Owner: -
--

INSERT INTO graphile_worker._private_tasks OVERRIDING SYSTEM VALUE VALUES (1, 'cni__return_block');


--
-- Data for Name: migrations; Type: TABLE DATA; Schema: graphile_worker; Owner: -
--

INSERT INTO graphile_worker.migrations VALUES (1, '2026-12-01 19:34:02.686775+00', true);
INSERT INTO graphile_worker.migrations VALUES (2, '2026-12-01 19:34:02.719026+00', false);
INSERT INTO graphile_worker.migrations VALUES (3, '2026-12-01 19:34:02.739199+00', true);
INSERT INTO graphile_worker.migrations VALUES (4, '2026-12-01 19:34:02.745033+00', false);
INSERT INTO graphile_worker.migrations VALUES (5, '2026-12-01 19:34:02.749584+00', false);
INSERT INTO graphile_worker.migrations VALUES (6, '2026-12-01 19:34:02.753672+00', false);
INSERT INTO graphile_worker.migrations VALUES (7, '2026-12-01 19:34:02.757575+00', false);
INSERT INTO graphile_worker.migrations VALUES (8, '2026-12-01 19:34:02.760881+00', false);
INSERT INTO graphile_worker.migrations VALUES (9, '2026-12-01 19:34:02.775199+00', false);
INSERT INTO graphile_worker.migrations VALUES (10, '2026-12-01 19:34:02.781099+00', false);
INSERT INTO graphile_worker.migrations VALUES (11, '2026-12-01 19:34:02.783075+00', true);
INSERT INTO graphile_worker.migrations VALUES (12, '2026-12-01 19:34:02.840883+00', false);
INSERT INTO graphile_worker.migrations VALUES (13, '2026-12-01 19:34:02.84428+00', true);
INSERT INTO graphile_worker.migrations VALUES (14, '2026-12-01 19:34:02.851659+00', true);
INSERT INTO graphile_worker.migrations VALUES (15, '2026-12-01 19:34:02.85454+00', false);
INSERT INTO graphile_worker.migrations VALUES (16, '2026-12-01 19:34:02.8566+00', true);
INSERT INTO graphile_worker.migrations VALUES (17, '2026-12-01 19:34:02.862023+00', false);
INSERT INTO graphile_worker.migrations VALUES (18, '2026-12-01 19:34:02.865707+00', false);
INSERT INTO graphile_worker.migrations VALUES (19, '2026-12-01 19:34:02.869437+00', true);


--
-- Data for Name: allowance_buckets; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.allowance_buckets VALUES ('76bcdaec-8800-4f65-b459-2360d29f722f', 'metal.datumapis.com/machines', 10, 0, 0, 1, '2026-12-01 19:34:02.927018+00');
INSERT INTO public.allowance_buckets VALUES ('829d8062-418a-4490-b899-ecab330743e7', 'metal.datumapis.com/machines', 10, 0, 0, 1, '2026-12-01 19:34:02.985997+00');
INSERT INTO public.allowance_buckets VALUES ('829d8062-418a-4490-b899-ecab330743e7', 'ipam.miloapis.com/ipclaims', 100, 0, 0, 1, '2026-12-01 19:34:02.985997+00');
INSERT INTO public.allowance_buckets VALUES ('8aa58f72-e367-4fa0-996c-d054f58ecf88', 'metal.datumapis.com/machines', 10, 0, 0, 1, '2026-12-01 19:34:03.007247+00');
INSERT INTO public.allowance_buckets VALUES ('8aa58f72-e367-4fa0-996c-d054f58ecf88', 'ipam.miloapis.com/ipclaims', 100, 0, 0, 1, '2026-12-01 19:34:03.007247+00');
INSERT INTO public.allowance_buckets VALUES ('76bcdaec-8800-4f65-b459-2360d29f722f', 'ipam.miloapis.com/ipclaims', 100, 5, 5, 1, '2026-12-01 19:34:05.110998+00');


--
-- Data for Name: api_tokens; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.api_tokens VALUES ('6c591721-a6d4-477c-82fd-62e84528fcc2', '76bcdaec-8800-4f65-b459-2360d29f722f', 'fixture-cluster', 'fixture-cni', 'mrd_bJFrSX', '590cc8677fed5e27a8882c95f92599f55500a2cfbf6ad2a299edcc5bab6e0119', 'editor', NULL, '2026-12-01 19:34:05.150388+00', NULL, NULL, 'project', NULL);


--
-- Data for Name: claim_creation_policies; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.claim_creation_policies VALUES ('ce7a2ca5-03fa-4d4e-877a-ce9fcce61fde', 'ipclaims', 'Each IP claim holds one unit of ipam.miloapis.com/ipclaims', 'IPClaim', '[]', 'ipclaim-{{requestInfo.name}}', '[{"amount": 1, "resourceType": "ipam.miloapis.com/ipclaims"}]', true, true, 'Compiled', 'all expressions compiled', 1, 'migration', '2026-12-01 19:34:01.613694+00', '2026-12-01 19:34:01.613694+00');
INSERT INTO public.claim_creation_policies VALUES ('7b888f27-86ab-4400-81e9-f7a1b685350f', 'machines', 'Each machine holds one unit of metal.datumapis.com/machines', 'Machine', '[]', 'machine-{{trigger.metadata.name}}', '[{"amount": 1, "resourceType": "metal.datumapis.com/machines"}]', true, true, 'Compiled', 'all expressions compiled', 1, 'migration', '2026-12-01 19:34:01.613694+00', '2026-12-01 19:34:01.613694+00');


--
-- Data for Name: clusters; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.clusters VALUES ('0082128a-32c5-41cc-9145-2c7a14ac9444', '76bcdaec-8800-4f65-b459-2360d29f722f', 'fixture-cluster', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '', 26, 120, '2026-12-01 19:34:05.132962+00');


--
-- Data for Name: events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.events VALUES (1, '2026-12-01 19:34:02.905205+00', 'system', NULL, 'seed', NULL, 'organization.create', 'organization', '8b6ab386-00ec-4a24-bbab-3e348cf2d280', 'acme', NULL, NULL, '{"name": "Acme Corporation", "slug": "acme"}');
INSERT INTO public.events VALUES (2, '2026-12-01 19:34:02.920014+00', 'system', NULL, 'seed', NULL, 'organization.create', 'organization', '95e2521c-8c40-4234-943d-1866e5084b5a', 'globex', NULL, NULL, '{"name": "Globex Industries", "slug": "globex"}');
INSERT INTO public.events VALUES (3, '2026-12-01 19:34:02.927018+00', 'system', NULL, 'seed', '76bcdaec-8800-4f65-b459-2360d29f722f', 'project.create', 'project', '76bcdaec-8800-4f65-b459-2360d29f722f', 'acme-prod', NULL, NULL, '{"name": "Acme production", "slug": "acme-prod", "organizationId": "8b6ab386-00ec-4a24-bbab-3e348cf2d280"}');
INSERT INTO public.events VALUES (4, '2026-12-01 19:34:02.927018+00', 'system', NULL, 'seed', '76bcdaec-8800-4f65-b459-2360d29f722f', 'quota.grant.create', 'resourcegrant', '21316120-30d1-4a4b-b672-096ba13202cf', 'default-acme-prod', NULL, NULL, '{"active": true, "source": "Policy", "sourceRef": "default-project-quota", "allowances": [{"amount": 100, "resourceType": "ipam.miloapis.com/ipclaims"}, {"amount": 10, "resourceType": "metal.datumapis.com/machines"}]}');
INSERT INTO public.events VALUES (5, '2026-12-01 19:34:02.985997+00', 'system', NULL, 'seed', '829d8062-418a-4490-b899-ecab330743e7', 'project.create', 'project', '829d8062-418a-4490-b899-ecab330743e7', 'acme-dev', NULL, NULL, '{"name": "Acme development", "slug": "acme-dev", "organizationId": "8b6ab386-00ec-4a24-bbab-3e348cf2d280"}');
INSERT INTO public.events VALUES (6, '2026-12-01 19:34:02.985997+00', 'system', NULL, 'seed', '829d8062-418a-4490-b899-ecab330743e7', 'quota.grant.create', 'resourcegrant', 'c973ef05-ae27-4325-b213-511422c31067', 'default-acme-dev', NULL, NULL, '{"active": true, "source": "Policy", "sourceRef": "default-project-quota", "allowances": [{"amount": 100, "resourceType": "ipam.miloapis.com/ipclaims"}, {"amount": 10, "resourceType": "metal.datumapis.com/machines"}]}');
INSERT INTO public.events VALUES (7, '2026-12-01 19:34:03.007247+00', 'system', NULL, 'seed', '8aa58f72-e367-4fa0-996c-d054f58ecf88', 'project.create', 'project', '8aa58f72-e367-4fa0-996c-d054f58ecf88', 'globex-web', NULL, NULL, '{"name": "Globex web", "slug": "globex-web", "organizationId": "95e2521c-8c40-4234-943d-1866e5084b5a"}');
INSERT INTO public.events VALUES (8, '2026-12-01 19:34:03.007247+00', 'system', NULL, 'seed', '8aa58f72-e367-4fa0-996c-d054f58ecf88', 'quota.grant.create', 'resourcegrant', 'fe9f8e57-64df-4d3c-99f9-5c3005dd392c', 'default-globex-web', NULL, NULL, '{"active": true, "source": "Policy", "sourceRef": "default-project-quota", "allowances": [{"amount": 100, "resourceType": "ipam.miloapis.com/ipclaims"}, {"amount": 10, "resourceType": "metal.datumapis.com/machines"}]}');
INSERT INTO public.events VALUES (9, '2026-12-01 19:34:03.358278+00', 'system', NULL, 'seed', NULL, 'user.create', 'user', '42a9c90c-0344-4f15-a56c-32359bdc1d92', 'tenant@example.com', NULL, NULL, '{"email": "tenant@example.com", "platformRoles": []}');
INSERT INTO public.events VALUES (10, '2026-12-01 19:34:03.375602+00', 'system', NULL, 'seed', NULL, 'membership.set', 'user', '42a9c90c-0344-4f15-a56c-32359bdc1d92', NULL, NULL, NULL, '{"role": "owner", "organizationId": "8b6ab386-00ec-4a24-bbab-3e348cf2d280"}');
INSERT INTO public.events VALUES (11, '2026-12-01 19:34:03.658408+00', 'system', NULL, 'seed', NULL, 'user.create', 'user', 'e8b6849b-bbb8-4e94-95bd-923e43540727', 'viewer@example.com', NULL, NULL, '{"email": "viewer@example.com", "platformRoles": []}');
INSERT INTO public.events VALUES (12, '2026-12-01 19:34:03.679194+00', 'system', NULL, 'seed', '829d8062-418a-4490-b899-ecab330743e7', 'membership.set', 'user', 'e8b6849b-bbb8-4e94-95bd-923e43540727', NULL, NULL, NULL, '{"role": "viewer", "projectId": "829d8062-418a-4490-b899-ecab330743e7"}');
INSERT INTO public.events VALUES (13, '2026-12-01 19:34:04.103727+00', 'system', NULL, 'seed', NULL, 'user.create', 'user', 'cdee5182-f8b3-40e0-b92d-a6a90b03a586', 'globex@example.com', NULL, NULL, '{"email": "globex@example.com", "platformRoles": []}');
INSERT INTO public.events VALUES (14, '2026-12-01 19:34:04.107075+00', 'system', NULL, 'seed', NULL, 'membership.set', 'user', 'cdee5182-f8b3-40e0-b92d-a6a90b03a586', NULL, NULL, NULL, '{"role": "owner", "organizationId": "95e2521c-8c40-4234-943d-1866e5084b5a"}');
INSERT INTO public.events VALUES (15, '2026-12-01 19:34:04.323684+00', 'system', NULL, 'seed', NULL, 'user.create', 'user', '7e8460f7-0287-4ba3-9276-88fab1719a0d', 'operator@example.com', NULL, NULL, '{"email": "operator@example.com", "platformRoles": ["operator"]}');
INSERT INTO public.events VALUES (16, '2026-12-01 19:34:04.507454+00', 'system', NULL, 'seed', NULL, 'user.create', 'user', 'fb4a5296-56bb-49b7-a071-c305ed84ff08', 'qa@example.com', NULL, NULL, '{"email": "qa@example.com", "platformRoles": ["qa"]}');
INSERT INTO public.events VALUES (17, '2026-12-01 19:34:04.831628+00', 'system', NULL, 'seed', NULL, 'user.create', 'user', '697fb20e-64fb-446b-af1b-0b3adf3eb555', 'admin@example.com', NULL, NULL, '{"email": "admin@example.com", "platformRoles": ["admin"]}');
INSERT INTO public.events VALUES (18, '2026-12-01 19:34:04.997582+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'network.create', 'network', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', 'fixture-vpc', NULL, NULL, '{"cidrs": ["198.51.100.0/22", "2001:db8:100::/48"]}');
INSERT INTO public.events VALUES (19, '2026-12-01 19:34:05.055674+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'ipclaim.create', 'ipclaim', '86442426-cc9d-4cef-91ae-2b77e7125e87', 'fixture-claim-0', NULL, NULL, '{"pool": "fixture-vpc-v4", "network": "fixture-vpc", "allocatedCidr": "198.51.100.0/28"}');
INSERT INTO public.events VALUES (20, '2026-12-01 19:34:05.083557+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'ipclaim.create', 'ipclaim', 'a86fa420-5a96-42b5-ae9e-fa665964974f', 'fixture-claim-1', NULL, NULL, '{"pool": "fixture-vpc-v4", "network": "fixture-vpc", "allocatedCidr": "198.51.100.32/27"}');
INSERT INTO public.events VALUES (21, '2026-12-01 19:34:05.089544+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'ipclaim.create', 'ipclaim', 'c2d0cd4c-f105-43e9-99d2-8e5add082c4e', 'fixture-claim-2', NULL, NULL, '{"pool": "fixture-vpc-v4", "network": "fixture-vpc", "allocatedCidr": "198.51.100.16/29"}');
INSERT INTO public.events VALUES (22, '2026-12-01 19:34:05.102875+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'ipclaim.create', 'ipclaim', '0a307e5e-c5ce-4b79-b71a-577dc9d71674', 'fixture-v6', NULL, NULL, '{"pool": "fixture-vpc-v6-1", "network": "fixture-vpc", "allocatedCidr": "2001:db8:100::/64"}');
INSERT INTO public.events VALUES (23, '2026-12-01 19:34:05.110998+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'ipclaim.create', 'ipclaim', '0509d7ed-ad74-4ae1-bc3b-1ca0b230b19f', 'fixture-gw', NULL, NULL, '{"pool": "fixture-vpc-v4", "network": "fixture-vpc", "allocatedCidr": "198.51.103.254/32"}');
INSERT INTO public.events VALUES (24, '2026-12-01 19:34:05.132962+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'cluster.create', 'cluster', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'fixture-cluster', NULL, NULL, '{"network": "fixture-vpc"}');
INSERT INTO public.events VALUES (25, '2026-12-01 19:34:05.155444+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'token.create', 'apiToken', '6c591721-a6d4-477c-82fd-62e84528fcc2', 'fixture-cni', NULL, NULL, '{"role": "editor", "prefix": "mrd_bJFrSX", "clusterName": "fixture-cluster"}');
INSERT INTO public.events VALUES (26, '2026-12-01 19:34:05.227449+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'cni.add', 'podLease', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'fixture-cluster/node-a-ctr0/eth0', NULL, NULL, '{"pod": "default/pod-0", "node": "node-a", "addresses": ["198.51.100.66/32", "2001:db8:100:1::2/128"]}');
INSERT INTO public.events VALUES (27, '2026-12-01 19:34:05.241338+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'cni.add', 'podLease', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'fixture-cluster/node-a-ctr1/eth0', NULL, NULL, '{"pod": "default/pod-1", "node": "node-a", "addresses": ["198.51.100.67/32", "2001:db8:100:1::3/128"]}');
INSERT INTO public.events VALUES (28, '2026-12-01 19:34:05.245334+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'cni.add', 'podLease', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'fixture-cluster/node-a-ctr2/eth0', NULL, NULL, '{"pod": "default/pod-2", "node": "node-a", "addresses": ["198.51.100.68/32", "2001:db8:100:1::4/128"]}');
INSERT INTO public.events VALUES (29, '2026-12-01 19:34:05.2564+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'cni.add', 'podLease', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'fixture-cluster/node-b-ctr0/eth0', NULL, NULL, '{"pod": "default/pod-0", "node": "node-b", "addresses": ["198.51.100.130/32", "2001:db8:100:1::102/128"]}');
INSERT INTO public.events VALUES (30, '2026-12-01 19:34:05.259997+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'cni.add', 'podLease', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'fixture-cluster/node-b-ctr1/eth0', NULL, NULL, '{"pod": "default/pod-1", "node": "node-b", "addresses": ["198.51.100.131/32", "2001:db8:100:1::103/128"]}');
INSERT INTO public.events VALUES (31, '2026-12-01 19:34:05.263043+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'cni.add', 'podLease', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'fixture-cluster/node-b-ctr2/eth0', NULL, NULL, '{"pod": "default/pod-2", "node": "node-b", "addresses": ["198.51.100.132/32", "2001:db8:100:1::104/128"]}');
INSERT INTO public.events VALUES (32, '2026-12-01 19:34:05.265734+00', 'system', NULL, 'fixture', '76bcdaec-8800-4f65-b459-2360d29f722f', 'cni.del', 'podLease', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'fixture-cluster/node-b-ctr2/eth0', NULL, '{"addresses": ["198.51.100.132/32", "2001:db8:100:1::104/128"]}', NULL);


--
-- Data for Name: grant_creation_policies; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.grant_creation_policies VALUES ('d8164ebc-aa6c-47b1-8e11-89d383791756', 'default-project-quota', 'Every new project gets 100 IP claims and 10 machines', 'Project', '[]', 'default-{{trigger.metadata.name}}', '[{"amount": 100, "resourceType": "ipam.miloapis.com/ipclaims"}, {"amount": 10, "resourceType": "metal.datumapis.com/machines"}]', true, true, 'Compiled', 'all expressions compiled', 1, 'migration', '2026-12-01 19:34:01.613694+00', '2026-12-01 19:34:01.613694+00');


--
-- Data for Name: installations; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ip_allocations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ip_allocations VALUES ('1f5e3936-5fe2-49d2-80af-c23cdf98764a', '9f883a29-6e0b-47c9-b581-80cde6667d04', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.100.0/28', 'Claim', '86442426-cc9d-4cef-91ae-2b77e7125e87', NULL, 16, NULL, NULL, '2026-12-01 19:34:05.055674+00');
INSERT INTO public.ip_allocations VALUES ('d24cf55c-8401-48bc-9d19-e58506a6c535', '9f883a29-6e0b-47c9-b581-80cde6667d04', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.100.32/27', 'Claim', 'a86fa420-5a96-42b5-ae9e-fa665964974f', NULL, 32, NULL, NULL, '2026-12-01 19:34:05.083557+00');
INSERT INTO public.ip_allocations VALUES ('f7d60c10-7088-4517-8463-8d0c370beb1c', '9f883a29-6e0b-47c9-b581-80cde6667d04', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.100.16/29', 'Claim', 'c2d0cd4c-f105-43e9-99d2-8e5add082c4e', NULL, 8, NULL, NULL, '2026-12-01 19:34:05.089544+00');
INSERT INTO public.ip_allocations VALUES ('c57f8bd6-d45c-4976-a57c-5db419f49e83', '4143abb2-5964-476d-b899-26d095f19fe7', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '2001:db8:100::/64', 'Claim', '0a307e5e-c5ce-4b79-b71a-577dc9d71674', NULL, 18446744073709551616, NULL, NULL, '2026-12-01 19:34:05.102875+00');
INSERT INTO public.ip_allocations VALUES ('b1ba9ca0-6bf0-4f6c-8922-875d5c404252', '9f883a29-6e0b-47c9-b581-80cde6667d04', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.103.254/32', 'Claim', '0509d7ed-ad74-4ae1-bc3b-1ca0b230b19f', NULL, 1, NULL, NULL, '2026-12-01 19:34:05.110998+00');
INSERT INTO public.ip_allocations VALUES ('cd993c16-e10e-43a7-94af-453c4e19d66c', '9f883a29-6e0b-47c9-b581-80cde6667d04', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.100.64/26', 'PoolCarve', NULL, '7e5c5093-aad7-4031-a602-6edf7c8847a8', 64, NULL, NULL, '2026-12-01 19:34:05.194079+00');
INSERT INTO public.ip_allocations VALUES ('bc797e64-82d1-4903-b01a-0503e5ae5fd4', '7e5c5093-aad7-4031-a602-6edf7c8847a8', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.100.64/31', 'Reservation', NULL, NULL, 2, NULL, NULL, '2026-12-01 19:34:05.194079+00');
INSERT INTO public.ip_allocations VALUES ('7186a9fe-a786-4cdd-8bcc-2488fe3998b8', '7e5c5093-aad7-4031-a602-6edf7c8847a8', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.100.127/32', 'Reservation', NULL, NULL, 1, NULL, NULL, '2026-12-01 19:34:05.194079+00');
INSERT INTO public.ip_allocations VALUES ('aa322af2-b96e-4907-ae0e-e688083e381a', '4143abb2-5964-476d-b899-26d095f19fe7', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '2001:db8:100:1::/120', 'PoolCarve', NULL, '66232bd3-8766-4e8a-94f4-f23cdb9c3e71', 256, NULL, NULL, '2026-12-01 19:34:05.218102+00');
INSERT INTO public.ip_allocations VALUES ('5e47cf03-61b3-449c-ab78-feddf99253ab', '66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '2001:db8:100:1::/127', 'Reservation', NULL, NULL, 2, NULL, NULL, '2026-12-01 19:34:05.218102+00');
INSERT INTO public.ip_allocations VALUES ('65334119-7aa6-40ce-88e9-ecc44fd33233', '7e5c5093-aad7-4031-a602-6edf7c8847a8', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.100.66/32', 'PodAddress', NULL, NULL, 1, NULL, NULL, '2026-12-01 19:34:05.227449+00');
INSERT INTO public.ip_allocations VALUES ('16fab269-3569-4374-840f-d5e470039736', '66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '2001:db8:100:1::2/128', 'PodAddress', NULL, NULL, 1, NULL, NULL, '2026-12-01 19:34:05.227449+00');
INSERT INTO public.ip_allocations VALUES ('16fa1c0d-1f2b-4413-bc6e-d09240ba527e', '7e5c5093-aad7-4031-a602-6edf7c8847a8', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.100.67/32', 'PodAddress', NULL, NULL, 1, NULL, NULL, '2026-12-01 19:34:05.241338+00');
INSERT INTO public.ip_allocations VALUES ('d6645a29-25f4-4bab-8d69-83dfef18fc2a', '66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '2001:db8:100:1::3/128', 'PodAddress', NULL, NULL, 1, NULL, NULL, '2026-12-01 19:34:05.241338+00');
INSERT INTO public.ip_allocations VALUES ('a448479f-f92a-40ad-81ea-2da46a5e3260', '7e5c5093-aad7-4031-a602-6edf7c8847a8', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.100.68/32', 'PodAddress', NULL, NULL, 1, NULL, NULL, '2026-12-01 19:34:05.245334+00');
INSERT INTO public.ip_allocations VALUES ('3daaca02-22dd-4bf8-9557-b1f8ede44a5b', '66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '2001:db8:100:1::4/128', 'PodAddress', NULL, NULL, 1, NULL, NULL, '2026-12-01 19:34:05.245334+00');
INSERT INTO public.ip_allocations VALUES ('1e01afb4-bd2d-4c27-9539-f2f1323b418c', '9f883a29-6e0b-47c9-b581-80cde6667d04', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.100.128/26', 'PoolCarve', NULL, '4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', 64, NULL, NULL, '2026-12-01 19:34:05.249751+00');
INSERT INTO public.ip_allocations VALUES ('47c546ab-e7b4-45e6-8132-bf53e3105647', '4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.100.128/31', 'Reservation', NULL, NULL, 2, NULL, NULL, '2026-12-01 19:34:05.249751+00');
INSERT INTO public.ip_allocations VALUES ('d35c519d-8a1e-4892-8067-9277c4e20e1b', '4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.100.191/32', 'Reservation', NULL, NULL, 1, NULL, NULL, '2026-12-01 19:34:05.249751+00');
INSERT INTO public.ip_allocations VALUES ('1adb68d5-f129-4d65-9381-0083c29b52f5', '4143abb2-5964-476d-b899-26d095f19fe7', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '2001:db8:100:1::100/120', 'PoolCarve', NULL, '98b18acc-c7c6-4dcf-ae91-985f333316b3', 256, NULL, NULL, '2026-12-01 19:34:05.253153+00');
INSERT INTO public.ip_allocations VALUES ('de8e11de-7737-415d-b343-703f27f2d1d3', '98b18acc-c7c6-4dcf-ae91-985f333316b3', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '2001:db8:100:1::100/127', 'Reservation', NULL, NULL, 2, NULL, NULL, '2026-12-01 19:34:05.253153+00');
INSERT INTO public.ip_allocations VALUES ('a443f43e-531f-4ce5-816d-de2babb8a94d', '4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.100.130/32', 'PodAddress', NULL, NULL, 1, NULL, NULL, '2026-12-01 19:34:05.2564+00');
INSERT INTO public.ip_allocations VALUES ('c725870f-3eb1-4fef-bc6a-df62e5a6945d', '98b18acc-c7c6-4dcf-ae91-985f333316b3', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '2001:db8:100:1::102/128', 'PodAddress', NULL, NULL, 1, NULL, NULL, '2026-12-01 19:34:05.2564+00');
INSERT INTO public.ip_allocations VALUES ('04ac59f9-0c92-4b49-9306-48d65b31c026', '4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '198.51.100.131/32', 'PodAddress', NULL, NULL, 1, NULL, NULL, '2026-12-01 19:34:05.259997+00');
INSERT INTO public.ip_allocations VALUES ('6cb0ce4a-520d-473a-a801-1137a5600255', '98b18acc-c7c6-4dcf-ae91-985f333316b3', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '2001:db8:100:1::103/128', 'PodAddress', NULL, NULL, 1, NULL, NULL, '2026-12-01 19:34:05.259997+00');


--
-- Data for Name: ip_claims; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ip_claims VALUES ('86442426-cc9d-4cef-91ae-2b77e7125e87', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '9f883a29-6e0b-47c9-b581-80cde6667d04', 'fixture-claim-0', 4, 28, NULL, 'Delete', 604800, NULL, '{}', '93fce9937b6b32a7419207ce8e6bab0e', '1f5e3936-5fe2-49d2-80af-c23cdf98764a', '198.51.100.0/28', 'fixture', '2026-12-01 19:34:05.055674+00');
INSERT INTO public.ip_claims VALUES ('a86fa420-5a96-42b5-ae9e-fa665964974f', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '9f883a29-6e0b-47c9-b581-80cde6667d04', 'fixture-claim-1', 4, 27, NULL, 'Delete', 604800, NULL, '{}', 'ef75b7c9028a7bd470ef9b6c16e372c2', 'd24cf55c-8401-48bc-9d19-e58506a6c535', '198.51.100.32/27', 'fixture', '2026-12-01 19:34:05.083557+00');
INSERT INTO public.ip_claims VALUES ('c2d0cd4c-f105-43e9-99d2-8e5add082c4e', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '9f883a29-6e0b-47c9-b581-80cde6667d04', 'fixture-claim-2', 4, 29, NULL, 'Delete', 604800, NULL, '{}', '17d261648ceb34487b3caa037db1d74a', 'f7d60c10-7088-4517-8463-8d0c370beb1c', '198.51.100.16/29', 'fixture', '2026-12-01 19:34:05.089544+00');
INSERT INTO public.ip_claims VALUES ('0a307e5e-c5ce-4b79-b71a-577dc9d71674', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '4143abb2-5964-476d-b899-26d095f19fe7', 'fixture-v6', 6, 64, NULL, 'Delete', 604800, NULL, '{}', 'ea64a844033b2cd5799a036f030d039b', 'c57f8bd6-d45c-4976-a57c-5db419f49e83', '2001:db8:100::/64', 'fixture', '2026-12-01 19:34:05.102875+00');
INSERT INTO public.ip_claims VALUES ('0509d7ed-ad74-4ae1-bc3b-1ca0b230b19f', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '9f883a29-6e0b-47c9-b581-80cde6667d04', 'fixture-gw', 4, 32, '198.51.103.254/32', 'Retain', 3600, NULL, '{}', '710bb1c88832ecacc72685b34cab6665', 'b1ba9ca0-6bf0-4f6c-8922-875d5c404252', '198.51.103.254/32', 'fixture', '2026-12-01 19:34:05.110998+00');


--
-- Data for Name: ip_free_blocks; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ip_free_blocks VALUES ('9f883a29-6e0b-47c9-b581-80cde6667d04', '198.51.101.0/24', 24);
INSERT INTO public.ip_free_blocks VALUES ('9f883a29-6e0b-47c9-b581-80cde6667d04', '198.51.100.24/29', 29);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:8000::/49', 49);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:4000::/50', 50);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:2000::/51', 51);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1000::/52', 52);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:800::/53', 53);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:400::/54', 54);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:200::/55', 55);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:100::/56', 56);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:80::/57', 57);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:40::/58', 58);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:20::/59', 59);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:10::/60', 60);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:8::/61', 61);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:4::/62', 62);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:2::/63', 63);
INSERT INTO public.ip_free_blocks VALUES ('9f883a29-6e0b-47c9-b581-80cde6667d04', '198.51.102.0/24', 24);
INSERT INTO public.ip_free_blocks VALUES ('9f883a29-6e0b-47c9-b581-80cde6667d04', '198.51.103.0/25', 25);
INSERT INTO public.ip_free_blocks VALUES ('9f883a29-6e0b-47c9-b581-80cde6667d04', '198.51.103.128/26', 26);
INSERT INTO public.ip_free_blocks VALUES ('9f883a29-6e0b-47c9-b581-80cde6667d04', '198.51.103.192/27', 27);
INSERT INTO public.ip_free_blocks VALUES ('9f883a29-6e0b-47c9-b581-80cde6667d04', '198.51.103.224/28', 28);
INSERT INTO public.ip_free_blocks VALUES ('9f883a29-6e0b-47c9-b581-80cde6667d04', '198.51.103.240/29', 29);
INSERT INTO public.ip_free_blocks VALUES ('9f883a29-6e0b-47c9-b581-80cde6667d04', '198.51.103.248/30', 30);
INSERT INTO public.ip_free_blocks VALUES ('9f883a29-6e0b-47c9-b581-80cde6667d04', '198.51.103.252/31', 31);
INSERT INTO public.ip_free_blocks VALUES ('9f883a29-6e0b-47c9-b581-80cde6667d04', '198.51.103.255/32', 32);
INSERT INTO public.ip_free_blocks VALUES ('7e5c5093-aad7-4031-a602-6edf7c8847a8', '198.51.100.72/29', 29);
INSERT INTO public.ip_free_blocks VALUES ('7e5c5093-aad7-4031-a602-6edf7c8847a8', '198.51.100.80/28', 28);
INSERT INTO public.ip_free_blocks VALUES ('7e5c5093-aad7-4031-a602-6edf7c8847a8', '198.51.100.96/28', 28);
INSERT INTO public.ip_free_blocks VALUES ('7e5c5093-aad7-4031-a602-6edf7c8847a8', '198.51.100.112/29', 29);
INSERT INTO public.ip_free_blocks VALUES ('7e5c5093-aad7-4031-a602-6edf7c8847a8', '198.51.100.120/30', 30);
INSERT INTO public.ip_free_blocks VALUES ('7e5c5093-aad7-4031-a602-6edf7c8847a8', '198.51.100.124/31', 31);
INSERT INTO public.ip_free_blocks VALUES ('7e5c5093-aad7-4031-a602-6edf7c8847a8', '198.51.100.126/32', 32);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:8000::/65', 65);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:4000::/66', 66);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:2000::/67', 67);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:1000::/68', 68);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:800::/69', 69);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:400::/70', 70);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:200::/71', 71);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:100::/72', 72);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:80::/73', 73);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:40::/74', 74);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:20::/75', 75);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:10::/76', 76);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:8::/77', 77);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:4::/78', 78);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:2::/79', 79);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:1::/80', 80);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:8000::/81', 81);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:4000::/82', 82);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:2000::/83', 83);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:1000::/84', 84);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:800::/85', 85);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:400::/86', 86);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:200::/87', 87);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:100::/88', 88);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:80::/89', 89);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:40::/90', 90);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:20::/91', 91);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:10::/92', 92);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:8::/93', 93);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:4::/94', 94);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:2::/95', 95);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1:0:1::/96', 96);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::8000:0/97', 97);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::4000:0/98', 98);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::2000:0/99', 99);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::1000:0/100', 100);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::800:0/101', 101);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::400:0/102', 102);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::200:0/103', 103);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::100:0/104', 104);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::80:0/105', 105);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::40:0/106', 106);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::20:0/107', 107);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::10:0/108', 108);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::8:0/109', 109);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::4:0/110', 110);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::2:0/111', 111);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::1:0/112', 112);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::8000/113', 113);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::4000/114', 114);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::2000/115', 115);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::1000/116', 116);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::800/117', 117);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::400/118', 118);
INSERT INTO public.ip_free_blocks VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '2001:db8:100:1::200/119', 119);
INSERT INTO public.ip_free_blocks VALUES ('66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '2001:db8:100:1::8/125', 125);
INSERT INTO public.ip_free_blocks VALUES ('66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '2001:db8:100:1::10/124', 124);
INSERT INTO public.ip_free_blocks VALUES ('66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '2001:db8:100:1::20/123', 123);
INSERT INTO public.ip_free_blocks VALUES ('66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '2001:db8:100:1::40/122', 122);
INSERT INTO public.ip_free_blocks VALUES ('66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '2001:db8:100:1::80/121', 121);
INSERT INTO public.ip_free_blocks VALUES ('7e5c5093-aad7-4031-a602-6edf7c8847a8', '198.51.100.70/31', 31);
INSERT INTO public.ip_free_blocks VALUES ('7e5c5093-aad7-4031-a602-6edf7c8847a8', '198.51.100.69/32', 32);
INSERT INTO public.ip_free_blocks VALUES ('66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '2001:db8:100:1::6/127', 127);
INSERT INTO public.ip_free_blocks VALUES ('66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '2001:db8:100:1::5/128', 128);
INSERT INTO public.ip_free_blocks VALUES ('9f883a29-6e0b-47c9-b581-80cde6667d04', '198.51.100.192/26', 26);
INSERT INTO public.ip_free_blocks VALUES ('4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '198.51.100.136/29', 29);
INSERT INTO public.ip_free_blocks VALUES ('4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '198.51.100.144/28', 28);
INSERT INTO public.ip_free_blocks VALUES ('4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '198.51.100.160/28', 28);
INSERT INTO public.ip_free_blocks VALUES ('4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '198.51.100.176/29', 29);
INSERT INTO public.ip_free_blocks VALUES ('4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '198.51.100.184/30', 30);
INSERT INTO public.ip_free_blocks VALUES ('4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '198.51.100.188/31', 31);
INSERT INTO public.ip_free_blocks VALUES ('4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '198.51.100.190/32', 32);
INSERT INTO public.ip_free_blocks VALUES ('98b18acc-c7c6-4dcf-ae91-985f333316b3', '2001:db8:100:1::108/125', 125);
INSERT INTO public.ip_free_blocks VALUES ('98b18acc-c7c6-4dcf-ae91-985f333316b3', '2001:db8:100:1::110/124', 124);
INSERT INTO public.ip_free_blocks VALUES ('98b18acc-c7c6-4dcf-ae91-985f333316b3', '2001:db8:100:1::120/123', 123);
INSERT INTO public.ip_free_blocks VALUES ('98b18acc-c7c6-4dcf-ae91-985f333316b3', '2001:db8:100:1::140/122', 122);
INSERT INTO public.ip_free_blocks VALUES ('98b18acc-c7c6-4dcf-ae91-985f333316b3', '2001:db8:100:1::180/121', 121);
INSERT INTO public.ip_free_blocks VALUES ('4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '198.51.100.132/30', 30);
INSERT INTO public.ip_free_blocks VALUES ('98b18acc-c7c6-4dcf-ae91-985f333316b3', '2001:db8:100:1::104/126', 126);


--
-- Data for Name: ip_pools; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ip_pools VALUES ('7e5c5093-aad7-4031-a602-6edf7c8847a8', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '9f883a29-6e0b-47c9-b581-80cde6667d04', 'node-fixture-cluster-node-a-198-51-100-64-26', 'NodeBlock', '198.51.100.64/26', 4, 32, 32, 32, 'FirstFit', 2, 1, 61, 3, 3, '2026-12-01 19:34:05.194079+00');
INSERT INTO public.ip_pools VALUES ('66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '4143abb2-5964-476d-b899-26d095f19fe7', 'node-fixture-cluster-node-a-2001-db8-100-1---120', 'NodeBlock', '2001:db8:100:1::/120', 6, 128, 128, 128, 'FirstFit', 2, 0, 254, 3, 3, '2026-12-01 19:34:05.218102+00');
INSERT INTO public.ip_pools VALUES ('9f883a29-6e0b-47c9-b581-80cde6667d04', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', NULL, 'fixture-vpc-v4', 'Root', '198.51.100.0/22', 4, 22, 32, 28, 'FirstFit', 0, 0, 1024, 185, 6, '2026-12-01 19:34:04.997582+00');
INSERT INTO public.ip_pools VALUES ('4143abb2-5964-476d-b899-26d095f19fe7', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', NULL, 'fixture-vpc-v6-1', 'Root', '2001:db8:100::/48', 6, 48, 128, 64, 'FirstFit', 0, 0, 1208925819614629174706176, 18446744073709552128, 3, '2026-12-01 19:34:04.997582+00');
INSERT INTO public.ip_pools VALUES ('4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '9f883a29-6e0b-47c9-b581-80cde6667d04', 'node-fixture-cluster-node-b-198-51-100-128-26', 'NodeBlock', '198.51.100.128/26', 4, 32, 32, 32, 'FirstFit', 2, 1, 61, 2, 2, '2026-12-01 19:34:05.249751+00');
INSERT INTO public.ip_pools VALUES ('98b18acc-c7c6-4dcf-ae91-985f333316b3', '76bcdaec-8800-4f65-b459-2360d29f722f', '4dee4d38-8193-4ab8-b9e2-8f878d286c99', '4143abb2-5964-476d-b899-26d095f19fe7', 'node-fixture-cluster-node-b-2001-db8-100-1--100-120', 'NodeBlock', '2001:db8:100:1::100/120', 6, 128, 128, 128, 'FirstFit', 2, 0, 254, 2, 2, '2026-12-01 19:34:05.253153+00');


--
-- Data for Name: locations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.locations VALUES ('10f06477-66ee-45e2-b31e-3b70ebc76809', 'ams1', 'Amsterdam 1', true, '2026-12-01 19:34:04.836915+00');
INSERT INTO public.locations VALUES ('f19db845-d6dd-4b36-95fb-9e3a381ed4e6', 'fra1', 'Frankfurt 1', true, '2026-12-01 19:34:04.847292+00');
INSERT INTO public.locations VALUES ('ffcf018e-3e8e-4b80-902d-b49701510365', 'lon1', 'London 1', true, '2026-12-01 19:34:04.852011+00');


--
-- Data for Name: machine_allocations; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: machine_capacity; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.machine_capacity VALUES ('cc6608d3-2bb5-496e-bbc0-136606e11b61', 'dev-ams1-c1small-01', '48070cb1-7529-4744-9d92-64fb66bbbd48', '10f06477-66ee-45e2-b31e-3b70ebc76809', 'Healthy', true, '2026-12-01 19:34:04.879391+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.879391+00');
INSERT INTO public.machine_capacity VALUES ('6d30609e-1b86-43c1-b170-ab66dcbeffed', 'dev-ams1-c1small-02', '48070cb1-7529-4744-9d92-64fb66bbbd48', '10f06477-66ee-45e2-b31e-3b70ebc76809', 'Healthy', true, '2026-12-01 19:34:04.887496+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.887496+00');
INSERT INTO public.machine_capacity VALUES ('31e217ef-dfbd-456b-9ed6-f6cecfd519d4', 'dev-ams1-c1small-03', '48070cb1-7529-4744-9d92-64fb66bbbd48', '10f06477-66ee-45e2-b31e-3b70ebc76809', 'Healthy', true, '2026-12-01 19:34:04.891422+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.891422+00');
INSERT INTO public.machine_capacity VALUES ('5ee6789c-69f2-4c91-a653-e53750ff888a', 'dev-ams1-c1small-04', '48070cb1-7529-4744-9d92-64fb66bbbd48', '10f06477-66ee-45e2-b31e-3b70ebc76809', 'Healthy', true, '2026-12-01 19:34:04.895425+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.895425+00');
INSERT INTO public.machine_capacity VALUES ('ed3196c5-a0fe-4db5-9cf4-c22204a41328', 'dev-ams1-c1small-05', '48070cb1-7529-4744-9d92-64fb66bbbd48', '10f06477-66ee-45e2-b31e-3b70ebc76809', 'Healthy', true, '2026-12-01 19:34:04.899289+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.899289+00');
INSERT INTO public.machine_capacity VALUES ('288de5b7-c7fb-4954-a45c-5950566c8d0d', 'dev-ams1-c1small-06', '48070cb1-7529-4744-9d92-64fb66bbbd48', '10f06477-66ee-45e2-b31e-3b70ebc76809', 'Healthy', true, '2026-12-01 19:34:04.903472+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.903472+00');
INSERT INTO public.machine_capacity VALUES ('f84ebfd6-c8f7-4d0f-a966-c21f89f9313a', 'dev-ams1-c1large-01', '59c21350-d574-40d5-a513-1b7cf2225e87', '10f06477-66ee-45e2-b31e-3b70ebc76809', 'Healthy', true, '2026-12-01 19:34:04.906519+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.906519+00');
INSERT INTO public.machine_capacity VALUES ('b0de91dd-1c56-431e-92f7-fef803ee1b98', 'dev-ams1-c1large-02', '59c21350-d574-40d5-a513-1b7cf2225e87', '10f06477-66ee-45e2-b31e-3b70ebc76809', 'Healthy', true, '2026-12-01 19:34:04.911455+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.911455+00');
INSERT INTO public.machine_capacity VALUES ('a86e1e58-05e0-4152-9d15-e1c704de94d3', 'dev-ams1-c1large-03', '59c21350-d574-40d5-a513-1b7cf2225e87', '10f06477-66ee-45e2-b31e-3b70ebc76809', 'Healthy', true, '2026-12-01 19:34:04.91395+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.91395+00');
INSERT INTO public.machine_capacity VALUES ('46214cca-ac88-46a9-aed7-928c25878db9', 'dev-ams1-a1medium-01', '9135c988-1369-45e1-8499-de92564aac18', '10f06477-66ee-45e2-b31e-3b70ebc76809', 'Healthy', true, '2026-12-01 19:34:04.923469+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.923469+00');
INSERT INTO public.machine_capacity VALUES ('117cc36f-f4b2-4003-a2ed-9d4bb8523785', 'dev-ams1-a1medium-02', '9135c988-1369-45e1-8499-de92564aac18', '10f06477-66ee-45e2-b31e-3b70ebc76809', 'Healthy', true, '2026-12-01 19:34:04.925143+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.925143+00');
INSERT INTO public.machine_capacity VALUES ('c8e8e45f-985a-4c8f-9b99-391be07bfdee', 'dev-ams1-a1medium-03', '9135c988-1369-45e1-8499-de92564aac18', '10f06477-66ee-45e2-b31e-3b70ebc76809', 'Healthy', true, '2026-12-01 19:34:04.928084+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.928084+00');
INSERT INTO public.machine_capacity VALUES ('cbf6bc3d-c6c6-40c7-8911-d250ff72c173', 'dev-fra1-c1small-01', '48070cb1-7529-4744-9d92-64fb66bbbd48', 'f19db845-d6dd-4b36-95fb-9e3a381ed4e6', 'Healthy', true, '2026-12-01 19:34:04.931433+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.931433+00');
INSERT INTO public.machine_capacity VALUES ('a3e91c1e-7b01-4b21-9e8d-760bd7ebbd4b', 'dev-fra1-c1small-02', '48070cb1-7529-4744-9d92-64fb66bbbd48', 'f19db845-d6dd-4b36-95fb-9e3a381ed4e6', 'Healthy', true, '2026-12-01 19:34:04.934294+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.934294+00');
INSERT INTO public.machine_capacity VALUES ('16df2bc4-c1b1-4043-a9fe-600c571489fc', 'dev-fra1-c1small-03', '48070cb1-7529-4744-9d92-64fb66bbbd48', 'f19db845-d6dd-4b36-95fb-9e3a381ed4e6', 'Healthy', true, '2026-12-01 19:34:04.935969+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.935969+00');
INSERT INTO public.machine_capacity VALUES ('e0074b0e-fc3e-4b83-84d2-328940499448', 'dev-fra1-c1small-04', '48070cb1-7529-4744-9d92-64fb66bbbd48', 'f19db845-d6dd-4b36-95fb-9e3a381ed4e6', 'Healthy', true, '2026-12-01 19:34:04.939202+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.939202+00');
INSERT INTO public.machine_capacity VALUES ('8453c0e3-f325-4898-be01-33e966db4c6d', 'dev-fra1-c1small-05', '48070cb1-7529-4744-9d92-64fb66bbbd48', 'f19db845-d6dd-4b36-95fb-9e3a381ed4e6', 'Healthy', true, '2026-12-01 19:34:04.942428+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.942428+00');
INSERT INTO public.machine_capacity VALUES ('e4ee348f-c8b9-40ff-9cde-b8dd99208cac', 'dev-fra1-c1small-06', '48070cb1-7529-4744-9d92-64fb66bbbd48', 'f19db845-d6dd-4b36-95fb-9e3a381ed4e6', 'Healthy', true, '2026-12-01 19:34:04.946397+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.946397+00');
INSERT INTO public.machine_capacity VALUES ('74a0e8d7-d4bb-49ab-8082-d7eaac2a0976', 'dev-fra1-c1large-01', '59c21350-d574-40d5-a513-1b7cf2225e87', 'f19db845-d6dd-4b36-95fb-9e3a381ed4e6', 'Healthy', true, '2026-12-01 19:34:04.951362+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.951362+00');
INSERT INTO public.machine_capacity VALUES ('bc66534a-df37-45ba-bad6-5a1762aebcd6', 'dev-fra1-c1large-02', '59c21350-d574-40d5-a513-1b7cf2225e87', 'f19db845-d6dd-4b36-95fb-9e3a381ed4e6', 'Healthy', true, '2026-12-01 19:34:04.953162+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.953162+00');
INSERT INTO public.machine_capacity VALUES ('c476742d-e4e9-4c12-b573-59c8f20e3e92', 'dev-fra1-c1large-03', '59c21350-d574-40d5-a513-1b7cf2225e87', 'f19db845-d6dd-4b36-95fb-9e3a381ed4e6', 'Healthy', true, '2026-12-01 19:34:04.955968+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.955968+00');
INSERT INTO public.machine_capacity VALUES ('1dca9bc5-e11d-499c-aae1-5b02b179bed3', 'dev-fra1-a1medium-01', '9135c988-1369-45e1-8499-de92564aac18', 'f19db845-d6dd-4b36-95fb-9e3a381ed4e6', 'Healthy', true, '2026-12-01 19:34:04.959295+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.959295+00');
INSERT INTO public.machine_capacity VALUES ('515a3c57-962c-4e7a-b5f3-e49403ae5dbf', 'dev-fra1-a1medium-02', '9135c988-1369-45e1-8499-de92564aac18', 'f19db845-d6dd-4b36-95fb-9e3a381ed4e6', 'Healthy', true, '2026-12-01 19:34:04.961544+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.961544+00');
INSERT INTO public.machine_capacity VALUES ('e8ec55f3-2b8d-4f57-9093-1efb6fec50bc', 'dev-fra1-a1medium-03', '9135c988-1369-45e1-8499-de92564aac18', 'f19db845-d6dd-4b36-95fb-9e3a381ed4e6', 'Healthy', true, '2026-12-01 19:34:04.968211+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.968211+00');
INSERT INTO public.machine_capacity VALUES ('276b9752-32ab-4436-b106-f7d860eaf548', 'dev-lon1-c1small-01', '48070cb1-7529-4744-9d92-64fb66bbbd48', 'ffcf018e-3e8e-4b80-902d-b49701510365', 'Healthy', true, '2026-12-01 19:34:04.971617+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.971617+00');
INSERT INTO public.machine_capacity VALUES ('2c0708bf-8c4b-400d-a5fd-cc3a250b451b', 'dev-lon1-c1small-02', '48070cb1-7529-4744-9d92-64fb66bbbd48', 'ffcf018e-3e8e-4b80-902d-b49701510365', 'Healthy', true, '2026-12-01 19:34:04.975339+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.975339+00');
INSERT INTO public.machine_capacity VALUES ('868cb93d-c9a8-4a31-8a57-72b2ba88d4e7', 'dev-lon1-c1small-03', '48070cb1-7529-4744-9d92-64fb66bbbd48', 'ffcf018e-3e8e-4b80-902d-b49701510365', 'Healthy', true, '2026-12-01 19:34:04.979393+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.979393+00');
INSERT INTO public.machine_capacity VALUES ('a7ac85bb-eebb-437a-aa73-0b20c373d907', 'dev-lon1-c1small-04', '48070cb1-7529-4744-9d92-64fb66bbbd48', 'ffcf018e-3e8e-4b80-902d-b49701510365', 'Healthy', true, '2026-12-01 19:34:04.983311+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.983311+00');
INSERT INTO public.machine_capacity VALUES ('bb5657c8-04a4-46f7-849b-a8c5110998a5', 'dev-lon1-c1large-01', '59c21350-d574-40d5-a513-1b7cf2225e87', 'ffcf018e-3e8e-4b80-902d-b49701510365', 'Healthy', true, '2026-12-01 19:34:04.987564+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.987564+00');
INSERT INTO public.machine_capacity VALUES ('b2a920c8-9624-4b64-bca1-2b76bf45920b', 'dev-lon1-c1large-02', '59c21350-d574-40d5-a513-1b7cf2225e87', 'ffcf018e-3e8e-4b80-902d-b49701510365', 'Healthy', true, '2026-12-01 19:34:04.991872+00', 'Available', NULL, 0, 0, '2026-12-01 19:34:04.991872+00');


--
-- Data for Name: machine_classes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.machine_classes VALUES ('48070cb1-7529-4744-9d92-64fb66bbbd48', 'c1.small', 8, 32, 'x86_64', false);
INSERT INTO public.machine_classes VALUES ('59c21350-d574-40d5-a513-1b7cf2225e87', 'c1.large', 32, 256, 'x86_64', false);
INSERT INTO public.machine_classes VALUES ('9135c988-1369-45e1-8499-de92564aac18', 'a1.medium', 64, 128, 'arm64', true);


--
-- Data for Name: machine_profiles; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.machine_profiles VALUES ('75bb878a-624a-4296-a0dc-4d6d2fe05a0a', 'ubuntu-24.04', 'registry.example.com/os/ubuntu@sha256:a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1', 'sha256:a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1', '2026-12-01 19:34:04.874234+00');
INSERT INTO public.machine_profiles VALUES ('8c3fc80c-e0b5-4588-9546-9013715096ca', 'debian-12', 'registry.example.com/os/debian@sha256:d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3', 'sha256:d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3', '2026-12-01 19:34:04.874234+00');


--
-- Data for Name: machines; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: memberships; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.memberships VALUES ('390ef4bf-ad24-4296-b8ad-87a19e6bb54c', '42a9c90c-0344-4f15-a56c-32359bdc1d92', '8b6ab386-00ec-4a24-bbab-3e348cf2d280', NULL, 'owner', '2026-12-01 19:34:03.364195+00');
INSERT INTO public.memberships VALUES ('ca75493c-f4d1-4de8-9e96-b4fce79ab7df', 'e8b6849b-bbb8-4e94-95bd-923e43540727', NULL, '829d8062-418a-4490-b899-ecab330743e7', 'viewer', '2026-12-01 19:34:03.671544+00');
INSERT INTO public.memberships VALUES ('da6ec687-df5e-4f2a-ae22-c50c49bf5df2', 'cdee5182-f8b3-40e0-b92d-a6a90b03a586', '95e2521c-8c40-4234-943d-1866e5084b5a', NULL, 'owner', '2026-12-01 19:34:04.105896+00');


--
-- Data for Name: metric_counters; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: networks; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.networks VALUES ('4dee4d38-8193-4ab8-b9e2-8f878d286c99', '76bcdaec-8800-4f65-b459-2360d29f722f', 'fixture-vpc', '', NULL, '2026-12-01 19:34:04.997582+00');


--
-- Data for Name: node_blocks; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.node_blocks VALUES ('7e5c5093-aad7-4031-a602-6edf7c8847a8', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'node-a', 4, '2026-12-01 19:34:05.194079+00');
INSERT INTO public.node_blocks VALUES ('66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'node-a', 6, '2026-12-01 19:34:05.218102+00');
INSERT INTO public.node_blocks VALUES ('4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'node-b', 4, '2026-12-01 19:34:05.249751+00');
INSERT INTO public.node_blocks VALUES ('98b18acc-c7c6-4dcf-ae91-985f333316b3', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'node-b', 6, '2026-12-01 19:34:05.253153+00');


--
-- Data for Name: organizations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.organizations VALUES ('8b6ab386-00ec-4a24-bbab-3e348cf2d280', 'acme', 'Acme Corporation', '2026-12-01 19:34:02.905205+00');
INSERT INTO public.organizations VALUES ('95e2521c-8c40-4234-943d-1866e5084b5a', 'globex', 'Globex Industries', '2026-12-01 19:34:02.920014+00');


--
-- Data for Name: pod_leases; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.pod_leases VALUES ('52196e3b-f48d-41f5-bd1b-bfdd8bfb8a5e', '76bcdaec-8800-4f65-b459-2360d29f722f', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'k8s-pod-network', 'node-a-ctr0', 'eth0', 4, '7e5c5093-aad7-4031-a602-6edf7c8847a8', '65334119-7aa6-40ce-88e9-ecc44fd33233', '198.51.100.66/32', 'default', 'pod-0', 'node-a', '2026-12-01 19:34:05.227449+00', NULL);
INSERT INTO public.pod_leases VALUES ('9dfe2525-4aa5-4676-b6e9-fcf8e87fc85c', '76bcdaec-8800-4f65-b459-2360d29f722f', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'k8s-pod-network', 'node-a-ctr0', 'eth0', 6, '66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '16fab269-3569-4374-840f-d5e470039736', '2001:db8:100:1::2/128', 'default', 'pod-0', 'node-a', '2026-12-01 19:34:05.227449+00', NULL);
INSERT INTO public.pod_leases VALUES ('39d39e27-72aa-459c-bcd9-94077590c266', '76bcdaec-8800-4f65-b459-2360d29f722f', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'k8s-pod-network', 'node-a-ctr1', 'eth0', 4, '7e5c5093-aad7-4031-a602-6edf7c8847a8', '16fa1c0d-1f2b-4413-bc6e-d09240ba527e', '198.51.100.67/32', 'default', 'pod-1', 'node-a', '2026-12-01 19:34:05.241338+00', NULL);
INSERT INTO public.pod_leases VALUES ('0b0000b0-70a5-4751-b664-cd098a6ccc77', '76bcdaec-8800-4f65-b459-2360d29f722f', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'k8s-pod-network', 'node-a-ctr1', 'eth0', 6, '66232bd3-8766-4e8a-94f4-f23cdb9c3e71', 'd6645a29-25f4-4bab-8d69-83dfef18fc2a', '2001:db8:100:1::3/128', 'default', 'pod-1', 'node-a', '2026-12-01 19:34:05.241338+00', NULL);
INSERT INTO public.pod_leases VALUES ('9f54edf7-008e-43e2-816e-835828c4a861', '76bcdaec-8800-4f65-b459-2360d29f722f', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'k8s-pod-network', 'node-a-ctr2', 'eth0', 4, '7e5c5093-aad7-4031-a602-6edf7c8847a8', 'a448479f-f92a-40ad-81ea-2da46a5e3260', '198.51.100.68/32', 'default', 'pod-2', 'node-a', '2026-12-01 19:34:05.245334+00', NULL);
INSERT INTO public.pod_leases VALUES ('8663afaa-96ee-4c4a-add4-df3201130f27', '76bcdaec-8800-4f65-b459-2360d29f722f', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'k8s-pod-network', 'node-a-ctr2', 'eth0', 6, '66232bd3-8766-4e8a-94f4-f23cdb9c3e71', '3daaca02-22dd-4bf8-9557-b1f8ede44a5b', '2001:db8:100:1::4/128', 'default', 'pod-2', 'node-a', '2026-12-01 19:34:05.245334+00', NULL);
INSERT INTO public.pod_leases VALUES ('573e2389-415d-4139-90e0-1477ce1008af', '76bcdaec-8800-4f65-b459-2360d29f722f', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'k8s-pod-network', 'node-b-ctr0', 'eth0', 4, '4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', 'a443f43e-531f-4ce5-816d-de2babb8a94d', '198.51.100.130/32', 'default', 'pod-0', 'node-b', '2026-12-01 19:34:05.2564+00', NULL);
INSERT INTO public.pod_leases VALUES ('404906c7-1782-40cb-8cbe-51bbb9cdb2bb', '76bcdaec-8800-4f65-b459-2360d29f722f', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'k8s-pod-network', 'node-b-ctr0', 'eth0', 6, '98b18acc-c7c6-4dcf-ae91-985f333316b3', 'c725870f-3eb1-4fef-bc6a-df62e5a6945d', '2001:db8:100:1::102/128', 'default', 'pod-0', 'node-b', '2026-12-01 19:34:05.2564+00', NULL);
INSERT INTO public.pod_leases VALUES ('725a2f06-6a87-4263-9ac0-e0a561f84717', '76bcdaec-8800-4f65-b459-2360d29f722f', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'k8s-pod-network', 'node-b-ctr1', 'eth0', 4, '4c0fecce-a2f2-44cd-a6f2-7ce25df57efa', '04ac59f9-0c92-4b49-9306-48d65b31c026', '198.51.100.131/32', 'default', 'pod-1', 'node-b', '2026-12-01 19:34:05.259997+00', NULL);
INSERT INTO public.pod_leases VALUES ('ec408856-3efb-4a9c-919e-e7aea131b91f', '76bcdaec-8800-4f65-b459-2360d29f722f', '0082128a-32c5-41cc-9145-2c7a14ac9444', 'k8s-pod-network', 'node-b-ctr1', 'eth0', 6, '98b18acc-c7c6-4dcf-ae91-985f333316b3', '6cb0ce4a-520d-473a-a801-1137a5600255', '2001:db8:100:1::103/128', 'default', 'pod-1', 'node-b', '2026-12-01 19:34:05.259997+00', NULL);


--
-- Data for Name: project_deletion_blockers; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: project_fleet_settings; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: projects; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.projects VALUES ('76bcdaec-8800-4f65-b459-2360d29f722f', '8b6ab386-00ec-4a24-bbab-3e348cf2d280', 'acme-prod', 'Acme production', '2026-12-01 19:34:02.927018+00', 'Active', NULL, NULL, 0, NULL);
INSERT INTO public.projects VALUES ('829d8062-418a-4490-b899-ecab330743e7', '8b6ab386-00ec-4a24-bbab-3e348cf2d280', 'acme-dev', 'Acme development', '2026-12-01 19:34:02.985997+00', 'Active', NULL, NULL, 0, NULL);
INSERT INTO public.projects VALUES ('8aa58f72-e367-4fa0-996c-d054f58ecf88', '95e2521c-8c40-4234-943d-1866e5084b5a', 'globex-web', 'Globex web', '2026-12-01 19:34:03.007247+00', 'Active', NULL, NULL, 0, NULL);


--
-- Data for Name: provider_operations; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: quota_increase_requests; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: resource_claims; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.resource_claims VALUES ('9182c298-add1-471c-8e0a-6ec314b96a89', '76bcdaec-8800-4f65-b459-2360d29f722f', 'ipclaim-fixture-claim-0', '[{"amount": 1, "resourceType": "ipam.miloapis.com/ipclaims"}]', 'Granted', 'QuotaAvailable', 'granted 1 ipam.miloapis.com/ipclaims (allocated 1 of 100)', '[{"amount": 1, "reason": "QuotaAvailable", "status": "Granted", "message": "granted 1 ipam.miloapis.com/ipclaims (allocated 1 of 100)", "resourceType": "ipam.miloapis.com/ipclaims"}]', 'IPClaim', 'fixture-claim-0', '86442426-cc9d-4cef-91ae-2b77e7125e87', 'ipclaims', 'fixture', '2026-12-01 19:34:05.055674+00', NULL);
INSERT INTO public.resource_claims VALUES ('c13435e0-919e-466c-8f4d-4ac7b08d4c30', '76bcdaec-8800-4f65-b459-2360d29f722f', 'ipclaim-fixture-claim-1', '[{"amount": 1, "resourceType": "ipam.miloapis.com/ipclaims"}]', 'Granted', 'QuotaAvailable', 'granted 1 ipam.miloapis.com/ipclaims (allocated 2 of 100)', '[{"amount": 1, "reason": "QuotaAvailable", "status": "Granted", "message": "granted 1 ipam.miloapis.com/ipclaims (allocated 2 of 100)", "resourceType": "ipam.miloapis.com/ipclaims"}]', 'IPClaim', 'fixture-claim-1', 'a86fa420-5a96-42b5-ae9e-fa665964974f', 'ipclaims', 'fixture', '2026-12-01 19:34:05.083557+00', NULL);
INSERT INTO public.resource_claims VALUES ('8aea9aee-b47b-44b0-909b-9b1f1461c393', '76bcdaec-8800-4f65-b459-2360d29f722f', 'ipclaim-fixture-claim-2', '[{"amount": 1, "resourceType": "ipam.miloapis.com/ipclaims"}]', 'Granted', 'QuotaAvailable', 'granted 1 ipam.miloapis.com/ipclaims (allocated 3 of 100)', '[{"amount": 1, "reason": "QuotaAvailable", "status": "Granted", "message": "granted 1 ipam.miloapis.com/ipclaims (allocated 3 of 100)", "resourceType": "ipam.miloapis.com/ipclaims"}]', 'IPClaim', 'fixture-claim-2', 'c2d0cd4c-f105-43e9-99d2-8e5add082c4e', 'ipclaims', 'fixture', '2026-12-01 19:34:05.089544+00', NULL);
INSERT INTO public.resource_claims VALUES ('4fd14845-0188-4121-bc1b-4488949d487a', '76bcdaec-8800-4f65-b459-2360d29f722f', 'ipclaim-fixture-v6', '[{"amount": 1, "resourceType": "ipam.miloapis.com/ipclaims"}]', 'Granted', 'QuotaAvailable', 'granted 1 ipam.miloapis.com/ipclaims (allocated 4 of 100)', '[{"amount": 1, "reason": "QuotaAvailable", "status": "Granted", "message": "granted 1 ipam.miloapis.com/ipclaims (allocated 4 of 100)", "resourceType": "ipam.miloapis.com/ipclaims"}]', 'IPClaim', 'fixture-v6', '0a307e5e-c5ce-4b79-b71a-577dc9d71674', 'ipclaims', 'fixture', '2026-12-01 19:34:05.102875+00', NULL);
INSERT INTO public.resource_claims VALUES ('88d199b3-496d-46a3-a6ef-1b605d0a47b4', '76bcdaec-8800-4f65-b459-2360d29f722f', 'ipclaim-fixture-gw', '[{"amount": 1, "resourceType": "ipam.miloapis.com/ipclaims"}]', 'Granted', 'QuotaAvailable', 'granted 1 ipam.miloapis.com/ipclaims (allocated 5 of 100)', '[{"amount": 1, "reason": "QuotaAvailable", "status": "Granted", "message": "granted 1 ipam.miloapis.com/ipclaims (allocated 5 of 100)", "resourceType": "ipam.miloapis.com/ipclaims"}]', 'IPClaim', 'fixture-gw', '0509d7ed-ad74-4ae1-bc3b-1ca0b230b19f', 'ipclaims', 'fixture', '2026-12-01 19:34:05.110998+00', NULL);


--
-- Data for Name: resource_grants; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.resource_grants VALUES ('21316120-30d1-4a4b-b672-096ba13202cf', '76bcdaec-8800-4f65-b459-2360d29f722f', 'default-acme-prod', '[{"amount": 100, "resourceType": "ipam.miloapis.com/ipclaims"}, {"amount": 10, "resourceType": "metal.datumapis.com/machines"}]', true, 'AllResourceTypesRegistered', '', 'Policy', 'default-project-quota', 'seed', '2026-12-01 19:34:02.927018+00', '2026-12-01 19:34:02.927018+00');
INSERT INTO public.resource_grants VALUES ('c973ef05-ae27-4325-b213-511422c31067', '829d8062-418a-4490-b899-ecab330743e7', 'default-acme-dev', '[{"amount": 100, "resourceType": "ipam.miloapis.com/ipclaims"}, {"amount": 10, "resourceType": "metal.datumapis.com/machines"}]', true, 'AllResourceTypesRegistered', '', 'Policy', 'default-project-quota', 'seed', '2026-12-01 19:34:02.985997+00', '2026-12-01 19:34:02.985997+00');
INSERT INTO public.resource_grants VALUES ('fe9f8e57-64df-4d3c-99f9-5c3005dd392c', '8aa58f72-e367-4fa0-996c-d054f58ecf88', 'default-globex-web', '[{"amount": 100, "resourceType": "ipam.miloapis.com/ipclaims"}, {"amount": 10, "resourceType": "metal.datumapis.com/machines"}]', true, 'AllResourceTypesRegistered', '', 'Policy', 'default-project-quota', 'seed', '2026-12-01 19:34:03.007247+00', '2026-12-01 19:34:03.007247+00');


--
-- Data for Name: resource_registrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.resource_registrations VALUES ('89b537ff-b652-408f-98c3-52d39b9c5385', 'ipam.miloapis.com/ipclaims', 'Project', 'Entity', 'IP claims (address blocks) a project holds at once', 'claims', 'claims', 1, '{IPClaim}', true, 'RegistrationActive', '', 'migration', '2026-12-01 19:34:01.613694+00', '2026-12-01 19:34:01.613694+00');
INSERT INTO public.resource_registrations VALUES ('d4b69199-97fa-4762-85db-87db262968ff', 'metal.datumapis.com/machines', 'Project', 'Entity', 'Bare-metal machines a project holds at once', 'machines', 'machines', 1, '{Machine}', true, 'RegistrationActive', '', 'migration', '2026-12-01 19:34:01.613694+00', '2026-12-01 19:34:01.613694+00');


--
-- Data for Name: service_availability; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.service_availability VALUES ('07793476-04a5-4959-b312-5f1de535e292', '10f06477-66ee-45e2-b31e-3b70ebc76809', 'machines', 'Available', NULL, '2026-12-01 19:34:04.843261+00');
INSERT INTO public.service_availability VALUES ('5d69986c-587f-4595-9a30-042d89e1c6cf', 'f19db845-d6dd-4b36-95fb-9e3a381ed4e6', 'machines', 'Available', NULL, '2026-12-01 19:34:04.849951+00');
INSERT INTO public.service_availability VALUES ('c14fcd87-c16b-461a-9323-cdfee91dcf16', 'ffcf018e-3e8e-4b80-902d-b49701510365', 'machines', 'Unavailable', 'power maintenance', '2026-12-01 19:34:04.85343+00');


--
-- Data for Name: sessions; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: settings; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.settings VALUES ('demo_seeded_at', '2026-12-01T19:34:04.993Z', '2026-12-01 19:34:04.994284+00');


--
-- Data for Name: sign_in_failures; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: sign_in_throttle; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: users; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.users VALUES ('42a9c90c-0344-4f15-a56c-32359bdc1d92', 'tenant@example.com', 'Tina Tenant', 'scrypt$32768$8$1$Mi4cq+S6wMVZK1/5cMJtgw==$yT+tQiEJPQIAnE/qX7jwpk5xNi9l6RK7xwq/vztbiLE=', '{}', NULL, '2026-12-01 19:34:03.354936+00');
INSERT INTO public.users VALUES ('e8b6849b-bbb8-4e94-95bd-923e43540727', 'viewer@example.com', 'Victor Viewer', 'scrypt$32768$8$1$JMcECalMXKy1uAJDCQUOww==$buZxsCyO9vWkCbFxU93yQ/uP2haxSJSimnnIWRMvk0Y=', '{}', NULL, '2026-12-01 19:34:03.64985+00');
INSERT INTO public.users VALUES ('cdee5182-f8b3-40e0-b92d-a6a90b03a586', 'globex@example.com', 'Greta Globex', 'scrypt$32768$8$1$risoARcIVMg0GA3wZN6INA==$AJrsbV7gQzUZMuNuT5aIuh1iN5EmRipQBlJNqcg+l2Q=', '{}', NULL, '2026-12-01 19:34:04.097959+00');
INSERT INTO public.users VALUES ('7e8460f7-0287-4ba3-9276-88fab1719a0d', 'operator@example.com', 'Olga Operator', 'scrypt$32768$8$1$bka3otZTY3JxuGDOLhgRZA==$US3aEBQyfMU83WpveIPnutAPjIRgUTSp5kLLSkiDHlw=', '{operator}', NULL, '2026-12-01 19:34:04.318922+00');
INSERT INTO public.users VALUES ('fb4a5296-56bb-49b7-a071-c305ed84ff08', 'qa@example.com', 'Quentin QA', 'scrypt$32768$8$1$6lSUGybQUkT1SY3HHAg3aA==$u6eH+PACqnCt8Fzk+4YOGou2Kkjeayhvovmmi7C3xi8=', '{qa}', NULL, '2026-12-01 19:34:04.50509+00');
INSERT INTO public.users VALUES ('697fb20e-64fb-446b-af1b-0b3adf3eb555', 'admin@example.com', 'Ada Admin', 'scrypt$32768$8$1$cEF0p9FvnY/O7bxpqm1Nqg==$5/4pKKx3au8Id3SqLLFcLigDgUZnkY1FXwn0zcJ9z54=', '{admin}', NULL, '2026-12-01 19:34:04.826941+00');


--
-- Data for Name: worker_heartbeats; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Name: __drizzle_migrations_id_seq; Type: SEQUENCE SET; Schema: drizzle; Owner: -
--

SELECT pg_catalog.setval('drizzle.__drizzle_migrations_id_seq', 31, true);


--
-- Name: job_queues_id_seq; Type: SEQUENCE SET; Schema: graphile_worker; Owner: -
--

SELECT pg_catalog.setval('graphile_worker.job_queues_id_seq', 1, false);


--
-- Name: jobs_id_seq1; Type: SEQUENCE SET; Schema: graphile_worker; Owner: -
--

SELECT pg_catalog.setval('graphile_worker.jobs_id_seq1', 4, true);


--
-- Name: tasks_id_seq; Type: SEQUENCE SET; Schema: graphile_worker; Owner: -
--

SELECT pg_catalog.setval('graphile_worker.tasks_id_seq', 4, true);


--
-- Name: events_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.events_id_seq', 32, true);


--
-- Name: __drizzle_migrations __drizzle_migrations_pkey; Type: CONSTRAINT; Schema: drizzle; Owner: -
--

ALTER TABLE ONLY drizzle.__drizzle_migrations
    ADD CONSTRAINT __drizzle_migrations_pkey PRIMARY KEY (id);


--
-- Name: _private_job_queues job_queues_pkey1; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker._private_job_queues
    ADD CONSTRAINT job_queues_pkey1 PRIMARY KEY (id);


--
-- Name: _private_job_queues job_queues_queue_name_key; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker._private_job_queues
    ADD CONSTRAINT job_queues_queue_name_key UNIQUE (queue_name);


--
-- Name: _private_jobs jobs_key_key1; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker._private_jobs
    ADD CONSTRAINT jobs_key_key1 UNIQUE (key);


--
-- Name: _private_jobs jobs_pkey1; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker._private_jobs
    ADD CONSTRAINT jobs_pkey1 PRIMARY KEY (id);


--
-- Name: _private_known_crontabs known_crontabs_pkey; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker._private_known_crontabs
    ADD CONSTRAINT known_crontabs_pkey PRIMARY KEY (identifier);


--
-- Name: migrations migrations_pkey; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker.migrations
    ADD CONSTRAINT migrations_pkey PRIMARY KEY (id);


--
-- Name: _private_tasks tasks_identifier_key; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker._private_tasks
    ADD CONSTRAINT tasks_identifier_key UNIQUE (identifier);


--
-- Name: _private_tasks tasks_pkey; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker._private_tasks
    ADD CONSTRAINT tasks_pkey PRIMARY KEY (id);


--
-- Name: allowance_buckets allowance_buckets_project_id_resource_type_pk; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.allowance_buckets
    ADD CONSTRAINT allowance_buckets_project_id_resource_type_pk PRIMARY KEY (project_id, resource_type);


--
-- Name: api_tokens api_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_pkey PRIMARY KEY (id);


--
-- Name: api_tokens api_tokens_token_hash_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_token_hash_unique UNIQUE (token_hash);


--
-- Name: claim_creation_policies claim_creation_policies_name_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_creation_policies
    ADD CONSTRAINT claim_creation_policies_name_unique UNIQUE (name);


--
-- Name: claim_creation_policies claim_creation_policies_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_creation_policies
    ADD CONSTRAINT claim_creation_policies_pkey PRIMARY KEY (id);


--
-- Name: claim_creation_policies claim_creation_policies_trigger_kind_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_creation_policies
    ADD CONSTRAINT claim_creation_policies_trigger_kind_unique UNIQUE (trigger_kind);


--
-- Name: clusters clusters_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.clusters
    ADD CONSTRAINT clusters_pkey PRIMARY KEY (id);


--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (id);


--
-- Name: grant_creation_policies grant_creation_policies_name_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.grant_creation_policies
    ADD CONSTRAINT grant_creation_policies_name_unique UNIQUE (name);


--
-- Name: grant_creation_policies grant_creation_policies_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.grant_creation_policies
    ADD CONSTRAINT grant_creation_policies_pkey PRIMARY KEY (id);


--
-- Name: installations installations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.installations
    ADD CONSTRAINT installations_pkey PRIMARY KEY (id);


--
-- Name: ip_allocations ip_allocations_no_overlap; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ip_allocations
    ADD CONSTRAINT ip_allocations_no_overlap EXCLUDE USING gist (pool_id WITH =, cidr inet_ops WITH &&);


--
-- Name: ip_allocations ip_allocations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ip_allocations
    ADD CONSTRAINT ip_allocations_pkey PRIMARY KEY (id);


--
-- Name: ip_claims ip_claims_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ip_claims
    ADD CONSTRAINT ip_claims_pkey PRIMARY KEY (id);


--
-- Name: ip_free_blocks ip_free_blocks_no_overlap; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ip_free_blocks
    ADD CONSTRAINT ip_free_blocks_no_overlap EXCLUDE USING gist (pool_id WITH =, cidr inet_ops WITH &&);


--
-- Name: ip_pools ip_pools_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ip_pools
    ADD CONSTRAINT ip_pools_pkey PRIMARY KEY (id);


--
-- Name: ip_pools ip_pools_roots_no_overlap; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ip_pools
    ADD CONSTRAINT ip_pools_roots_no_overlap EXCLUDE USING gist (project_id WITH =, cidr inet_ops WITH &&) WHERE ((parent_pool_id IS NULL));


--
-- Name: locations locations_name_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.locations
    ADD CONSTRAINT locations_name_unique UNIQUE (name);


--
-- Name: locations locations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.locations
    ADD CONSTRAINT locations_pkey PRIMARY KEY (id);


--
-- Name: machine_allocations machine_allocations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machine_allocations
    ADD CONSTRAINT machine_allocations_pkey PRIMARY KEY (id);


--
-- Name: machine_capacity machine_capacity_device_ref_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machine_capacity
    ADD CONSTRAINT machine_capacity_device_ref_unique UNIQUE (device_ref);


--
-- Name: machine_capacity machine_capacity_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machine_capacity
    ADD CONSTRAINT machine_capacity_pkey PRIMARY KEY (id);


--
-- Name: machine_classes machine_classes_name_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machine_classes
    ADD CONSTRAINT machine_classes_name_unique UNIQUE (name);


--
-- Name: machine_classes machine_classes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machine_classes
    ADD CONSTRAINT machine_classes_pkey PRIMARY KEY (id);


--
-- Name: machine_profiles machine_profiles_name_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machine_profiles
    ADD CONSTRAINT machine_profiles_name_unique UNIQUE (name);


--
-- Name: machine_profiles machine_profiles_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machine_profiles
    ADD CONSTRAINT machine_profiles_pkey PRIMARY KEY (id);


--
-- Name: machines machines_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machines
    ADD CONSTRAINT machines_pkey PRIMARY KEY (id);


--
-- Name: memberships memberships_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_pkey PRIMARY KEY (id);


--
-- Name: metric_counters metric_counters_metric_labels_pk; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.metric_counters
    ADD CONSTRAINT metric_counters_metric_labels_pk PRIMARY KEY (metric, labels);


--
-- Name: networks networks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.networks
    ADD CONSTRAINT networks_pkey PRIMARY KEY (id);


--
-- Name: node_blocks node_blocks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.node_blocks
    ADD CONSTRAINT node_blocks_pkey PRIMARY KEY (pool_id);


--
-- Name: organizations organizations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.organizations
    ADD CONSTRAINT organizations_pkey PRIMARY KEY (id);


--
-- Name: organizations organizations_slug_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.organizations
    ADD CONSTRAINT organizations_slug_unique UNIQUE (slug);


--
-- Name: pod_leases pod_leases_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pod_leases
    ADD CONSTRAINT pod_leases_pkey PRIMARY KEY (id);


--
-- Name: project_deletion_blockers project_deletion_blockers_project_id_object_kind_object_id_pk; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.project_deletion_blockers
    ADD CONSTRAINT project_deletion_blockers_project_id_object_kind_object_id_pk PRIMARY KEY (project_id, object_kind, object_id);


--
-- Name: project_fleet_settings project_fleet_settings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.project_fleet_settings
    ADD CONSTRAINT project_fleet_settings_pkey PRIMARY KEY (project_id);


--
-- Name: projects projects_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT projects_pkey PRIMARY KEY (id);


--
-- Name: projects projects_slug_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT projects_slug_unique UNIQUE (slug);


--
-- Name: provider_operations provider_operations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_operations
    ADD CONSTRAINT provider_operations_pkey PRIMARY KEY (id);


--
-- Name: quota_increase_requests quota_increase_requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quota_increase_requests
    ADD CONSTRAINT quota_increase_requests_pkey PRIMARY KEY (id);


--
-- Name: resource_claims resource_claims_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.resource_claims
    ADD CONSTRAINT resource_claims_pkey PRIMARY KEY (id);


--
-- Name: resource_grants resource_grants_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.resource_grants
    ADD CONSTRAINT resource_grants_pkey PRIMARY KEY (id);


--
-- Name: resource_registrations resource_registrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.resource_registrations
    ADD CONSTRAINT resource_registrations_pkey PRIMARY KEY (id);


--
-- Name: resource_registrations resource_registrations_resource_type_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.resource_registrations
    ADD CONSTRAINT resource_registrations_resource_type_unique UNIQUE (resource_type);


--
-- Name: service_availability service_availability_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.service_availability
    ADD CONSTRAINT service_availability_pkey PRIMARY KEY (id);


--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);


--
-- Name: settings settings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.settings
    ADD CONSTRAINT settings_pkey PRIMARY KEY (key);


--
-- Name: sign_in_failures sign_in_failures_account_window_start_pk; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sign_in_failures
    ADD CONSTRAINT sign_in_failures_account_window_start_pk PRIMARY KEY (account, window_start);


--
-- Name: sign_in_throttle sign_in_throttle_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sign_in_throttle
    ADD CONSTRAINT sign_in_throttle_pkey PRIMARY KEY (key);


--
-- Name: users users_email_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_email_unique UNIQUE (email);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: worker_heartbeats worker_heartbeats_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.worker_heartbeats
    ADD CONSTRAINT worker_heartbeats_pkey PRIMARY KEY (worker_id);


--
-- Name: jobs_main_index; Type: INDEX; Schema: graphile_worker; Owner: -
--

CREATE INDEX jobs_main_index ON graphile_worker._private_jobs USING btree (priority, run_at) INCLUDE (id, task_id, job_queue_id) WHERE (is_available = true);


--
-- Name: jobs_no_queue_index; Type: INDEX; Schema: graphile_worker; Owner: -
--

CREATE INDEX jobs_no_queue_index ON graphile_worker._private_jobs USING btree (priority, run_at) INCLUDE (id, task_id) WHERE ((is_available = true) AND (job_queue_id IS NULL));


--
-- Name: api_tokens_created_by; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_tokens_created_by ON public.api_tokens USING btree (created_by) WHERE (created_by IS NOT NULL);


--
-- Name: api_tokens_project; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_tokens_project ON public.api_tokens USING btree (project_id);


--
-- Name: api_tokens_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_tokens_user ON public.api_tokens USING btree (user_id) WHERE (user_id IS NOT NULL);


--
-- Name: clusters_id_project; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX clusters_id_project ON public.clusters USING btree (id, project_id);


--
-- Name: clusters_network; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX clusters_network ON public.clusters USING btree (network_id);


--
-- Name: clusters_project_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX clusters_project_name ON public.clusters USING btree (project_id, name);


--
-- Name: events_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_at ON public.events USING btree (at);


--
-- Name: events_object; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_object ON public.events USING btree (object_type, object_id);


--
-- Name: events_project_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_project_at ON public.events USING btree (project_id, at);


--
-- Name: ip_allocations_claim; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ip_allocations_claim ON public.ip_allocations USING btree (claim_id) WHERE (claim_id IS NOT NULL);


--
-- Name: ip_allocations_pool_cidr; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ip_allocations_pool_cidr ON public.ip_allocations USING btree (pool_id, cidr);


--
-- Name: ip_allocations_retained_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX ip_allocations_retained_name ON public.ip_allocations USING btree (project_id, retained_name) WHERE (retained_name IS NOT NULL);


--
-- Name: ip_claims_network; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ip_claims_network ON public.ip_claims USING btree (network_id, created_at);


--
-- Name: ip_claims_pool; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ip_claims_pool ON public.ip_claims USING btree (pool_id);


--
-- Name: ip_claims_project_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX ip_claims_project_name ON public.ip_claims USING btree (project_id, name);


--
-- Name: ip_free_blocks_by_size; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ip_free_blocks_by_size ON public.ip_free_blocks USING btree (pool_id, prefix_length, cidr);


--
-- Name: ip_free_blocks_pk; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX ip_free_blocks_pk ON public.ip_free_blocks USING btree (pool_id, cidr);


--
-- Name: ip_pools_id_scope; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX ip_pools_id_scope ON public.ip_pools USING btree (id, project_id, network_id);


--
-- Name: ip_pools_network_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX ip_pools_network_name ON public.ip_pools USING btree (network_id, name);


--
-- Name: ip_pools_network_roots; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ip_pools_network_roots ON public.ip_pools USING btree (network_id, family) WHERE (parent_pool_id IS NULL);


--
-- Name: ip_pools_parent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ip_pools_parent ON public.ip_pools USING btree (parent_pool_id);


--
-- Name: ip_pools_project; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ip_pools_project ON public.ip_pools USING btree (project_id);


--
-- Name: machine_allocations_live_capacity; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX machine_allocations_live_capacity ON public.machine_allocations USING btree (capacity_id) WHERE (status <> 'Released'::text);


--
-- Name: machine_allocations_live_machine; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX machine_allocations_live_machine ON public.machine_allocations USING btree (machine_id) WHERE (status <> 'Released'::text);


--
-- Name: machine_capacity_pick; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX machine_capacity_pick ON public.machine_capacity USING btree (class_id, location_id, state);


--
-- Name: machines_live_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX machines_live_name ON public.machines USING btree (project_id, name) WHERE (phase <> 'Released'::text);


--
-- Name: machines_phase; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX machines_phase ON public.machines USING btree (phase, class_id, location_id, created_at);


--
-- Name: machines_project_name; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX machines_project_name ON public.machines USING btree (project_id, name, created_at);


--
-- Name: memberships_project; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memberships_project ON public.memberships USING btree (project_id);


--
-- Name: memberships_user_org; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX memberships_user_org ON public.memberships USING btree (user_id, organization_id) WHERE (organization_id IS NOT NULL);


--
-- Name: memberships_user_project; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX memberships_user_project ON public.memberships USING btree (user_id, project_id) WHERE (project_id IS NOT NULL);


--
-- Name: networks_project_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX networks_project_name ON public.networks USING btree (project_id, name);


--
-- Name: node_blocks_cluster_node; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX node_blocks_cluster_node ON public.node_blocks USING btree (cluster_id, node, family);


--
-- Name: pod_leases_attachment; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX pod_leases_attachment ON public.pod_leases USING btree (cluster_id, cni_network, container_id, ifname, family);


--
-- Name: pod_leases_node_cluster; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX pod_leases_node_cluster ON public.pod_leases USING btree (node, cluster_id);


--
-- Name: pod_leases_project; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX pod_leases_project ON public.pod_leases USING btree (project_id, created_at);


--
-- Name: projects_deleting; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX projects_deleting ON public.projects USING btree (phase) WHERE (phase <> 'Active'::text);


--
-- Name: provider_operations_capacity; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX provider_operations_capacity ON public.provider_operations USING btree (capacity_id, fencing_token);


--
-- Name: provider_operations_machine; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX provider_operations_machine ON public.provider_operations USING btree (machine_id);


--
-- Name: provider_operations_state; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX provider_operations_state ON public.provider_operations USING btree (state, updated_at);


--
-- Name: quota_increase_requests_one_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX quota_increase_requests_one_pending ON public.quota_increase_requests USING btree (project_id, resource_type) WHERE (status = 'Pending'::text);


--
-- Name: quota_increase_requests_project; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quota_increase_requests_project ON public.quota_increase_requests USING btree (project_id, created_at);


--
-- Name: quota_increase_requests_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quota_increase_requests_status ON public.quota_increase_requests USING btree (status, created_at);


--
-- Name: resource_claims_live_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX resource_claims_live_name ON public.resource_claims USING btree (project_id, name) WHERE ((status = 'Granted'::text) AND (released_at IS NULL));


--
-- Name: resource_claims_live_ref; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX resource_claims_live_ref ON public.resource_claims USING btree (project_id, ref_kind, ref_name) WHERE ((status = 'Granted'::text) AND (released_at IS NULL));


--
-- Name: resource_claims_project_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX resource_claims_project_created ON public.resource_claims USING btree (project_id, created_at);


--
-- Name: resource_grants_project_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX resource_grants_project_name ON public.resource_grants USING btree (project_id, name);


--
-- Name: service_availability_location; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX service_availability_location ON public.service_availability USING btree (location_id, service);


--
-- Name: sessions_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sessions_user ON public.sessions USING btree (user_id, last_seen_at);


--
-- Name: sign_in_failures_window; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sign_in_failures_window ON public.sign_in_failures USING btree (window_start);


--
-- Name: sign_in_throttle_last_failure; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sign_in_throttle_last_failure ON public.sign_in_throttle USING btree (last_failure_at);


--
-- Name: api_tokens api_tokens_project_active; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER api_tokens_project_active BEFORE INSERT ON public.api_tokens FOR EACH ROW EXECUTE FUNCTION public.project_refuse_new_objects();


--
-- Name: clusters clusters_project_active; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER clusters_project_active BEFORE INSERT ON public.clusters FOR EACH ROW EXECUTE FUNCTION public.project_refuse_new_objects();


--
-- Name: events events_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER events_append_only BEFORE DELETE OR UPDATE ON public.events FOR EACH ROW EXECUTE FUNCTION public.events_refuse_change();


--
-- Name: ip_claims ip_claims_project_active; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ip_claims_project_active BEFORE INSERT ON public.ip_claims FOR EACH ROW EXECUTE FUNCTION public.project_refuse_new_objects();


--
-- Name: ip_pools ip_pools_project_active; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ip_pools_project_active BEFORE INSERT ON public.ip_pools FOR EACH ROW EXECUTE FUNCTION public.project_refuse_new_objects();


--
-- Name: machine_allocations machine_allocations_immutable; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER machine_allocations_immutable BEFORE UPDATE ON public.machine_allocations FOR EACH ROW EXECUTE FUNCTION public.machine_allocations_immutable();


--
-- Name: machine_capacity machine_capacity_immutable; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER machine_capacity_immutable BEFORE UPDATE ON public.machine_capacity FOR EACH ROW EXECUTE FUNCTION public.machine_capacity_device_ref_immutable();


--
-- Name: machines machines_project_active; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER machines_project_active BEFORE INSERT ON public.machines FOR EACH ROW EXECUTE FUNCTION public.project_refuse_new_objects();


--
-- Name: machines machines_released_wakes_project_deletion; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER machines_released_wakes_project_deletion AFTER UPDATE OF phase ON public.machines FOR EACH ROW WHEN (((new.phase = 'Released'::text) AND (old.phase IS DISTINCT FROM 'Released'::text))) EXECUTE FUNCTION public.project_deletion_wake_on_release();


--
-- Name: memberships memberships_project_active; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER memberships_project_active BEFORE INSERT ON public.memberships FOR EACH ROW EXECUTE FUNCTION public.project_refuse_new_objects();


--
-- Name: networks networks_project_active; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER networks_project_active BEFORE INSERT ON public.networks FOR EACH ROW EXECUTE FUNCTION public.project_refuse_new_objects();


--
-- Name: quota_increase_requests quota_increase_requests_project_active; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER quota_increase_requests_project_active BEFORE INSERT ON public.quota_increase_requests FOR EACH ROW EXECUTE FUNCTION public.project_refuse_new_objects();


--
-- Name: resource_grants resource_grants_project_active; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER resource_grants_project_active BEFORE INSERT ON public.resource_grants FOR EACH ROW EXECUTE FUNCTION public.project_refuse_new_objects();


--
-- Name: users users_revoke_created_tokens; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER users_revoke_created_tokens BEFORE DELETE ON public.users FOR EACH ROW EXECUTE FUNCTION public.api_tokens_revoke_with_creator();


--
-- Name: allowance_buckets allowance_buckets_project_id_projects_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.allowance_buckets
    ADD CONSTRAINT allowance_buckets_project_id_projects_id_fk FOREIGN KEY (project_id) REFERENCES public.projects(id) ON DELETE CASCADE;


--
-- Name: api_tokens api_tokens_created_by_users_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_created_by_users_id_fk FOREIGN KEY (created_by) REFERENCES public.users(id) ON DELETE SET NULL;


--
-- Name: api_tokens api_tokens_project_id_projects_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_project_id_projects_id_fk FOREIGN KEY (project_id) REFERENCES public.projects(id) ON DELETE CASCADE;


--
-- Name: api_tokens api_tokens_user_id_users_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_user_id_users_id_fk FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: clusters clusters_network_id_networks_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.clusters
    ADD CONSTRAINT clusters_network_id_networks_id_fk FOREIGN KEY (network_id) REFERENCES public.networks(id) ON DELETE RESTRICT;


--
-- Name: clusters clusters_project_id_projects_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.clusters
    ADD CONSTRAINT clusters_project_id_projects_id_fk FOREIGN KEY (project_id) REFERENCES public.projects(id) ON DELETE CASCADE;


--
-- Name: installations installations_allocation_id_machine_allocations_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.installations
    ADD CONSTRAINT installations_allocation_id_machine_allocations_id_fk FOREIGN KEY (allocation_id) REFERENCES public.machine_allocations(id) ON DELETE CASCADE;


--
-- Name: installations installations_machine_id_machines_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.installations
    ADD CONSTRAINT installations_machine_id_machines_id_fk FOREIGN KEY (machine_id) REFERENCES public.machines(id) ON DELETE CASCADE;


--
-- Name: ip_allocations ip_allocations_pool_scope_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ip_allocations
    ADD CONSTRAINT ip_allocations_pool_scope_fk FOREIGN KEY (pool_id, project_id, network_id) REFERENCES public.ip_pools(id, project_id, network_id) ON DELETE CASCADE;


--
-- Name: ip_claims ip_claims_network_id_networks_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ip_claims
    ADD CONSTRAINT ip_claims_network_id_networks_id_fk FOREIGN KEY (network_id) REFERENCES public.networks(id) ON DELETE CASCADE;


--
-- Name: ip_claims ip_claims_pool_id_ip_pools_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ip_claims
    ADD CONSTRAINT ip_claims_pool_id_ip_pools_id_fk FOREIGN KEY (pool_id) REFERENCES public.ip_pools(id) ON DELETE CASCADE;


--
-- Name: ip_claims ip_claims_project_id_projects_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ip_claims
    ADD CONSTRAINT ip_claims_project_id_projects_id_fk FOREIGN KEY (project_id) REFERENCES public.projects(id) ON DELETE CASCADE;


--
-- Name: ip_free_blocks ip_free_blocks_pool_id_ip_pools_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ip_free_blocks
    ADD CONSTRAINT ip_free_blocks_pool_id_ip_pools_id_fk FOREIGN KEY (pool_id) REFERENCES public.ip_pools(id) ON DELETE CASCADE;


--
-- Name: ip_pools ip_pools_network_id_networks_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ip_pools
    ADD CONSTRAINT ip_pools_network_id_networks_id_fk FOREIGN KEY (network_id) REFERENCES public.networks(id) ON DELETE CASCADE;


--
-- Name: ip_pools ip_pools_parent_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ip_pools
    ADD CONSTRAINT ip_pools_parent_fk FOREIGN KEY (parent_pool_id) REFERENCES public.ip_pools(id) ON DELETE CASCADE;


--
-- Name: ip_pools ip_pools_project_id_projects_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ip_pools
    ADD CONSTRAINT ip_pools_project_id_projects_id_fk FOREIGN KEY (project_id) REFERENCES public.projects(id) ON DELETE CASCADE;


--
-- Name: machine_allocations machine_allocations_capacity_id_machine_capacity_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machine_allocations
    ADD CONSTRAINT machine_allocations_capacity_id_machine_capacity_id_fk FOREIGN KEY (capacity_id) REFERENCES public.machine_capacity(id);


--
-- Name: machine_allocations machine_allocations_machine_id_machines_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machine_allocations
    ADD CONSTRAINT machine_allocations_machine_id_machines_id_fk FOREIGN KEY (machine_id) REFERENCES public.machines(id) ON DELETE CASCADE;


--
-- Name: machine_capacity machine_capacity_class_id_machine_classes_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machine_capacity
    ADD CONSTRAINT machine_capacity_class_id_machine_classes_id_fk FOREIGN KEY (class_id) REFERENCES public.machine_classes(id);


--
-- Name: machine_capacity machine_capacity_location_id_locations_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machine_capacity
    ADD CONSTRAINT machine_capacity_location_id_locations_id_fk FOREIGN KEY (location_id) REFERENCES public.locations(id);


--
-- Name: machines machines_approved_by_users_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machines
    ADD CONSTRAINT machines_approved_by_users_id_fk FOREIGN KEY (approved_by) REFERENCES public.users(id) ON DELETE SET NULL;


--
-- Name: machines machines_class_id_machine_classes_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machines
    ADD CONSTRAINT machines_class_id_machine_classes_id_fk FOREIGN KEY (class_id) REFERENCES public.machine_classes(id);


--
-- Name: machines machines_location_id_locations_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machines
    ADD CONSTRAINT machines_location_id_locations_id_fk FOREIGN KEY (location_id) REFERENCES public.locations(id);


--
-- Name: machines machines_profile_id_machine_profiles_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machines
    ADD CONSTRAINT machines_profile_id_machine_profiles_id_fk FOREIGN KEY (profile_id) REFERENCES public.machine_profiles(id);


--
-- Name: machines machines_project_id_projects_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.machines
    ADD CONSTRAINT machines_project_id_projects_id_fk FOREIGN KEY (project_id) REFERENCES public.projects(id) ON DELETE CASCADE;


--
-- Name: memberships memberships_organization_id_organizations_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_organization_id_organizations_id_fk FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;


--
-- Name: memberships memberships_project_id_projects_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_project_id_projects_id_fk FOREIGN KEY (project_id) REFERENCES public.projects(id) ON DELETE CASCADE;


--
-- Name: memberships memberships_user_id_users_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_user_id_users_id_fk FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: networks networks_created_by_users_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.networks
    ADD CONSTRAINT networks_created_by_users_id_fk FOREIGN KEY (created_by) REFERENCES public.users(id) ON DELETE SET NULL;


--
-- Name: networks networks_project_id_projects_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.networks
    ADD CONSTRAINT networks_project_id_projects_id_fk FOREIGN KEY (project_id) REFERENCES public.projects(id) ON DELETE CASCADE;


--
-- Name: node_blocks node_blocks_cluster_id_clusters_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.node_blocks
    ADD CONSTRAINT node_blocks_cluster_id_clusters_id_fk FOREIGN KEY (cluster_id) REFERENCES public.clusters(id) ON DELETE CASCADE;


--
-- Name: node_blocks node_blocks_pool_id_ip_pools_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.node_blocks
    ADD CONSTRAINT node_blocks_pool_id_ip_pools_id_fk FOREIGN KEY (pool_id) REFERENCES public.ip_pools(id) ON DELETE CASCADE;


--
-- Name: pod_leases pod_leases_allocation_id_ip_allocations_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pod_leases
    ADD CONSTRAINT pod_leases_allocation_id_ip_allocations_id_fk FOREIGN KEY (allocation_id) REFERENCES public.ip_allocations(id) ON DELETE CASCADE;


--
-- Name: pod_leases pod_leases_cluster_scope_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pod_leases
    ADD CONSTRAINT pod_leases_cluster_scope_fk FOREIGN KEY (cluster_id, project_id) REFERENCES public.clusters(id, project_id) ON DELETE CASCADE;


--
-- Name: project_deletion_blockers project_deletion_blockers_project_id_projects_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.project_deletion_blockers
    ADD CONSTRAINT project_deletion_blockers_project_id_projects_id_fk FOREIGN KEY (project_id) REFERENCES public.projects(id) ON DELETE CASCADE;


--
-- Name: project_fleet_settings project_fleet_settings_project_id_projects_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.project_fleet_settings
    ADD CONSTRAINT project_fleet_settings_project_id_projects_id_fk FOREIGN KEY (project_id) REFERENCES public.projects(id) ON DELETE CASCADE;


--
-- Name: projects projects_organization_id_organizations_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT projects_organization_id_organizations_id_fk FOREIGN KEY (organization_id) REFERENCES public.organizations(id);


--
-- Name: provider_operations provider_operations_capacity_id_machine_capacity_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_operations
    ADD CONSTRAINT provider_operations_capacity_id_machine_capacity_id_fk FOREIGN KEY (capacity_id) REFERENCES public.machine_capacity(id);


--
-- Name: provider_operations provider_operations_machine_id_machines_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_operations
    ADD CONSTRAINT provider_operations_machine_id_machines_id_fk FOREIGN KEY (machine_id) REFERENCES public.machines(id) ON DELETE SET NULL;


--
-- Name: quota_increase_requests quota_increase_requests_grant_id_resource_grants_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quota_increase_requests
    ADD CONSTRAINT quota_increase_requests_grant_id_resource_grants_id_fk FOREIGN KEY (grant_id) REFERENCES public.resource_grants(id) ON DELETE SET NULL;


--
-- Name: quota_increase_requests quota_increase_requests_project_id_projects_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quota_increase_requests
    ADD CONSTRAINT quota_increase_requests_project_id_projects_id_fk FOREIGN KEY (project_id) REFERENCES public.projects(id) ON DELETE CASCADE;


--
-- Name: resource_claims resource_claims_project_id_projects_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.resource_claims
    ADD CONSTRAINT resource_claims_project_id_projects_id_fk FOREIGN KEY (project_id) REFERENCES public.projects(id) ON DELETE CASCADE;


--
-- Name: resource_grants resource_grants_project_id_projects_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.resource_grants
    ADD CONSTRAINT resource_grants_project_id_projects_id_fk FOREIGN KEY (project_id) REFERENCES public.projects(id) ON DELETE CASCADE;


--
-- Name: service_availability service_availability_location_id_locations_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.service_availability
    ADD CONSTRAINT service_availability_location_id_locations_id_fk FOREIGN KEY (location_id) REFERENCES public.locations(id) ON DELETE CASCADE;


--
-- Name: sessions sessions_user_id_users_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_user_id_users_id_fk FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: sign_in_failures sign_in_failures_user_id_users_id_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sign_in_failures
    ADD CONSTRAINT sign_in_failures_user_id_users_id_fk FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE SET NULL;


--
-- Name: _private_job_queues; Type: ROW SECURITY; Schema: graphile_worker; Owner: -
--

ALTER TABLE graphile_worker._private_job_queues ENABLE ROW LEVEL SECURITY;

--
-- Name: _private_jobs; Type: ROW SECURITY; Schema: graphile_worker; Owner: -
--

ALTER TABLE graphile_worker._private_jobs ENABLE ROW LEVEL SECURITY;

--
-- Name: _private_known_crontabs; Type: ROW SECURITY; Schema: graphile_worker; Owner: -
--

ALTER TABLE graphile_worker._private_known_crontabs ENABLE ROW LEVEL SECURITY;

--
-- Name: _private_tasks; Type: ROW SECURITY; Schema: graphile_worker; Owner: -
--

ALTER TABLE graphile_worker._private_tasks ENABLE ROW LEVEL SECURITY;

--
-- PostgreSQL database dump complete
--


