-- Hand-written: IP claim creates in batches (group commit; server/ipam/claim-batch.ts).
--
-- Every claim of a project meets the others on its quota bucket row, and every claim of a network
-- on its pool rows; both locks are held until commit. One by one, each claim waits for the
-- previous claim's commit, and a crowd of waiters on one row costs PostgreSQL more CPU in its lock
-- manager than the claims themselves. A batch takes the rows once and pays one commit.
--
-- A batch cannot use a subtransaction per claim (each claim re-locking rows a sibling
-- subtransaction locked makes a MultiXact every time), so a claim's refusals must not need a
-- rollback: `ipam_claim_try` locks its candidate pools, decides quota, then allocates; it writes
-- the claim and its event only when both succeeded, and gives back the quota it took when the
-- network turns out to be exhausted. It returns the bound claim, {"exhausted": true}, or {"refused": "quotaExceeded",
-- "index": i} / {"refused": "quotaNameTaken"}, having then written nothing (net). It still raises
-- for a pinned address outside or not free in its pool ('MA001', 'MA002'; pinned claims are not
-- batched) and on the unexpected (a lost race for the name, a project being deleted): a batch that
-- raises is undone whole and the caller runs its claims one by one.

-- quota_admit as in 0011, but the quota claim's name is checked by the live-name unique index
-- (ON CONFLICT) rather than by a NOT EXISTS query: on tables without statistics yet the planner
-- answered that query by scanning every live claim of the project through another index.
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
--> statement-breakpoint
-- Gives back what quota_admit took for the first `p_count` requests, and deletes its claim row.
CREATE OR REPLACE FUNCTION quota_unadmit(p_project uuid, p_requests jsonb, p_count int, p_claim uuid) RETURNS void
LANGUAGE sql AS $$
  UPDATE allowance_buckets b
    SET allocated = b.allocated - (r.value->>'amount')::bigint, claim_count = b.claim_count - 1, updated_at = now()
    FROM jsonb_array_elements(p_requests) WITH ORDINALITY AS r(value, n)
    WHERE r.n <= p_count AND b.project_id = p_project AND b.resource_type = r.value->>'resourceType';
  DELETE FROM resource_claims WHERE id = p_claim;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION ipam_claim_try(p jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
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
--> statement-breakpoint
-- One claim as one statement, as before (0011): ipam_claim_try, with a quota refusal raised as
-- 'MQ001' (DETAIL: the denied request's index) or 'MQ002', and a dry run raised as 'MD001' with the
-- would-be result as DETAIL — the statement, and so everything it wrote, is undone.
CREATE OR REPLACE FUNCTION ipam_claim_create(p jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
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
--> statement-breakpoint
-- Many claims (not pinned, not dry runs), in the order given (the caller orders them by project and
-- network, so concurrent batches lock rows in one order); ipam_claim_try's results in that order.
CREATE OR REPLACE FUNCTION ipam_claim_create_many(p_items jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
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
