-- One IP claim create that never needs a rollback to refuse (server/ipam/claims.ts createClaim
-- prepares the input: the candidate pools in order with the prefix length each accepts, the
-- rendered quota claim, the audit event's actor). A batch (ipam_claim_create_many) cannot give each
-- claim a subtransaction (each claim re-locking rows a sibling subtransaction locked makes a
-- MultiXact every time), so this locks the claim's name and its candidate pools, decides quota
-- (quota_admit), then allocates (ipam_allocate, each candidate in turn); it writes the claim and its
-- event only when both succeeded, and gives back the quota it took (quota_unadmit) when quota is
-- refused or the network turns out to be exhausted. A claim whose quota its batch already decided
-- (quota_admit_many) comes with that decision as `p_admitted`, naming the IP claim id to use.
-- Returns, by `kind`, the bound claim ({"kind": "bound", ...}), {"kind": "exhausted"}, or
-- {"kind": "refused", "refused": "quotaExceeded", "index": i} / {"kind": "refused", "refused":
-- "quotaNameTaken"}, having then written nothing (net). It still raises for a pinned
-- address outside or not free in its pool ('MA001', 'MA002'; pinned claims are not batched) and on
-- the unexpected (a lost race for the name, a project being deleted): a batch that raises is undone
-- whole and the caller runs its claims one by one.
CREATE OR REPLACE FUNCTION ipam_claim_try(p jsonb, p_admitted jsonb DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql
-- Planned once per session: plan_cache_mode (see server/ipam/sql/ipam_allocate.sql).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_claim uuid := coalesce((p_admitted->>'claim')::uuid, gen_random_uuid());
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
  IF p_admitted IS NOT NULL THEN
    v_quota := p_admitted->'quota';
  ELSIF jsonb_typeof(p->'quota') = 'object' THEN
    v_quota := quota_admit(v_project, p#>>'{quota,name}', v_requests, 'IPClaim', p->>'name', v_claim::text,
                           p#>>'{quota,policy}', p#>>'{actor,label}');
    IF NOT (v_quota->>'granted')::boolean THEN
      -- quota_admit grew the buckets of the requests before the refused one (all of them when the
      -- claim name was taken): give that back.
      IF (v_quota->>'nameTaken')::boolean THEN
        PERFORM quota_unadmit(v_project, v_requests, jsonb_array_length(v_requests), NULL);
        RETURN jsonb_build_object('kind', 'refused', 'refused', 'quotaNameTaken');
      END IF;
      PERFORM quota_unadmit(v_project, v_requests, (v_quota->>'index')::int, NULL);
      RETURN jsonb_build_object('kind', 'refused', 'refused', 'quotaExceeded', 'index', (v_quota->>'index')::int);
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
    RETURN jsonb_build_object('kind', 'exhausted');
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
  RETURN jsonb_build_object('kind', 'bound', 'id', v_claim, 'pool', v_pool_name, 'allocationId', v_alloc.o_allocation_id,
    'allocatedCidr', v_alloc.o_cidr::text, 'prefixLength', masklen(v_alloc.o_cidr), 'createdAt', v_created, 'quota', v_quota);
END
$$;
