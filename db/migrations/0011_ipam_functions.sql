-- Hand-written: the allocator's and quota admission's write paths as SQL functions, so a claim create
-- is one statement (one round trip, one implicit transaction) instead of seventeen. The logic is the
-- one documented in server/ipam/blocks.ts (canonical buddy free set) and server/quota/admission.ts
-- (conditional bucket update); those modules call these functions.

-- The block of `p`'s masklen + 1 that is the upper half of `p`.
CREATE OR REPLACE FUNCTION ipam_upper_half(p cidr) RETURNS cidr
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT set_masklen(
    (host(p)::inet | (hostmask(set_masklen(z, masklen(p))) & ~hostmask(set_masklen(z, masklen(p) + 1))))::cidr,
    masklen(p) + 1)
  FROM (SELECT CASE family(p) WHEN 4 THEN '0.0.0.0/0'::cidr ELSE '::/0'::cidr END AS z) f
$$;
--> statement-breakpoint
-- The other half of `b`'s parent.
CREATE OR REPLACE FUNCTION ipam_buddy(b cidr) RETURNS cidr
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN set_masklen(set_masklen(b, masklen(b) - 1), masklen(b)) = b
              THEN ipam_upper_half(set_masklen(b, masklen(b) - 1))
              ELSE set_masklen(set_masklen(b, masklen(b) - 1), masklen(b)) END
$$;
--> statement-breakpoint
-- What stays free of block `f` when `t` (inside it) is taken: the buddies on the path from f to t
-- (blocks.ts splitBlock).
CREATE OR REPLACE FUNCTION ipam_split(f cidr, t cidr) RETURNS SETOF cidr
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT ipam_buddy(set_masklen(t, l)) FROM generate_series(masklen(f) + 1, masklen(t)) AS l
$$;
--> statement-breakpoint
-- Allocates from one pool: locks the pool row, picks the source free block (FirstFit: the lowest of
-- the lowest block of each fitting size; BestFit: the smallest fitting block, lowest first; pinned:
-- the free block containing the target), replaces it by its remainder, inserts the allocation (the
-- exclusion constraint checks it) and moves the pool's counters. Returns NULLs when the pool has no
-- room (or does not exist); raises 'MA001' when a pinned target is outside the pool and 'MA002' when
-- it is not entirely free.
CREATE OR REPLACE FUNCTION ipam_allocate(
  p_pool uuid, p_prefix int, p_pinned cidr, p_kind text, p_claim uuid, p_child_pool uuid,
  OUT o_allocation_id uuid, OUT o_cidr cidr, OUT o_size numeric)
LANGUAGE plpgsql AS $$
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
--> statement-breakpoint
-- Releases an allocation of pool `p_pool`: deletes it, merges the block with its free buddies while
-- a buddy is exactly a free block (blocks.ts mergeFree), inserts the merged block and moves the
-- counters back. Locks the pool row. Returns the released CIDR, or NULL when there was no such
-- allocation.
CREATE OR REPLACE FUNCTION ipam_release(p_pool uuid, p_allocation uuid) RETURNS cidr
LANGUAGE plpgsql AS $$
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
--> statement-breakpoint
-- Quota admission's decision (server/quota/admission.ts decideAdmission): per requested type, in
-- the order given (callers sort by type so two claims lock buckets in one order), the conditional
-- update `allocated + n <= limit`; then the Granted claim row, refused when another object's live
-- claim holds the name. Returns {"granted": true, "id", "buckets": [...]}, {"granted": false,
-- "index": i} for the first request without room, or {"granted": false, "nameTaken": true}. A
-- refusal leaves earlier buckets grown: the caller's transaction must roll back (it always does:
-- a denial is thrown).
CREATE OR REPLACE FUNCTION quota_admit(
  p_project uuid, p_name text, p_requests jsonb, p_kind text, p_ref_name text, p_ref_uid text, p_policy text, p_created_by text)
RETURNS jsonb
LANGUAGE plpgsql AS $$
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
  INSERT INTO resource_claims (project_id, name, requests, status, reason, message, allocations, ref_kind, ref_name, ref_uid, policy_name, created_by)
    SELECT p_project, p_name, p_requests, 'Granted', 'QuotaAvailable',
           (SELECT string_agg(a->>'message', '; ') FROM jsonb_array_elements(v_allocations) a),
           v_allocations, p_kind, p_ref_name, p_ref_uid, p_policy, p_created_by
    WHERE NOT EXISTS (
      SELECT 1 FROM resource_claims c
      WHERE c.project_id = p_project AND c.name = p_name AND c.status = 'Granted' AND c.released_at IS NULL
        AND (c.ref_kind, c.ref_name) IS DISTINCT FROM (p_kind, p_ref_name))
    RETURNING id INTO v_id;
  IF v_id IS NULL THEN
    RETURN jsonb_build_object('granted', false, 'nameTaken', true);
  END IF;
  RETURN jsonb_build_object('granted', true, 'id', v_id, 'buckets', v_buckets);
END
$$;
--> statement-breakpoint
-- Creates and binds an IP claim in one statement (server/ipam/claims.ts createClaim prepares the
-- input: the candidate pools in order with the prefix length each accepts, the rendered quota claim,
-- the audit event's actor). Tries each candidate pool with ipam_allocate; inserts the claim and its
-- event; decides quota last (quota_admit). Returns the bound claim, or {"exhausted": true} having
-- written nothing. Raises 'MQ001' (DETAIL: the denied request's index) or 'MQ002' (quota claim name
-- taken) — the statement, and so everything it wrote, is undone — and for a dry run 'MD001' with the
-- would-be result as DETAIL, after doing all of it.
CREATE OR REPLACE FUNCTION ipam_claim_create(p jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_claim uuid := gen_random_uuid();
  v_candidate jsonb;
  v_alloc record;
  v_pool_name text;
  v_created timestamptz;
  v_quota jsonb := NULL;
  v_result jsonb;
BEGIN
  FOR v_candidate IN SELECT value FROM jsonb_array_elements(p->'candidates') LOOP
    SELECT * INTO v_alloc FROM ipam_allocate((v_candidate->>'pool')::uuid, (v_candidate->>'prefix')::int,
      (p->>'pinned')::cidr, 'Claim', v_claim, NULL);
    IF v_alloc.o_allocation_id IS NOT NULL THEN
      v_pool_name := v_candidate->>'name';
      EXIT;
    END IF;
  END LOOP;
  IF v_pool_name IS NULL THEN
    RETURN jsonb_build_object('exhausted', true);
  END IF;
  INSERT INTO ip_claims (id, project_id, network_id, pool_id, name, family, prefix_length, requested_cidr, reclaim_policy,
                         retention_seconds, owner_ref, labels, spec_hash, allocation_id, allocated_cidr, created_by)
    VALUES (v_claim, (p->>'project')::uuid, (p->>'network')::uuid, (v_candidate->>'pool')::uuid, p->>'name', (p->>'family')::smallint,
            masklen(v_alloc.o_cidr), (p->>'pinned')::cidr, p->>'reclaimPolicy', (p->>'retentionSeconds')::int,
            CASE WHEN jsonb_typeof(p->'ownerRef') = 'object' THEN p->'ownerRef' END, coalesce(p->'labels', '{}'::jsonb),
            p->>'specHash', v_alloc.o_allocation_id, v_alloc.o_cidr, p#>>'{actor,label}')
    RETURNING created_at INTO v_created;
  INSERT INTO events (actor_type, actor_id, actor_label, project_id, action, object_type, object_id, object_name, after)
    VALUES (p#>>'{actor,type}', p#>>'{actor,id}', p#>>'{actor,label}', (p->>'project')::uuid, 'ipclaim.create', 'ipclaim', v_claim::text,
            p->>'name', jsonb_build_object('network', p->>'networkName', 'pool', v_pool_name, 'allocatedCidr', v_alloc.o_cidr::text));
  IF jsonb_typeof(p->'quota') = 'object' THEN
    v_quota := quota_admit((p->>'project')::uuid, p#>>'{quota,name}', p#>'{quota,requests}', 'IPClaim', p->>'name', v_claim::text,
                           p#>>'{quota,policy}', p#>>'{actor,label}');
    IF NOT (v_quota->>'granted')::boolean THEN
      IF (v_quota->>'nameTaken')::boolean THEN
        RAISE EXCEPTION 'quota claim name taken' USING ERRCODE = 'MQ002';
      END IF;
      RAISE EXCEPTION 'quota exceeded' USING ERRCODE = 'MQ001', DETAIL = v_quota->>'index';
    END IF;
  END IF;
  v_result := jsonb_build_object('id', v_claim, 'pool', v_pool_name, 'allocationId', v_alloc.o_allocation_id,
    'allocatedCidr', v_alloc.o_cidr::text, 'prefixLength', masklen(v_alloc.o_cidr), 'createdAt', v_created, 'quota', v_quota);
  IF (p->>'dryRun')::boolean THEN
    RAISE EXCEPTION 'dry run' USING ERRCODE = 'MD001', DETAIL = v_result::text;
  END IF;
  RETURN v_result;
END
$$;
