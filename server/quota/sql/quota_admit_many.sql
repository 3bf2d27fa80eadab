-- Quota for a batch of IP claim creates at once (server/ipam/sql/ipam_claim_create_many.sql): the
-- items ipam_claim_try takes, each with a `quota` object ({name, requests, policy}) or none. Locks
-- the buckets the batch requests from (ordered by project and type), and when every one of them has
-- room for the batch's whole request, grows each by it in one update and writes every item's Granted
-- resource_claims row in one insert. Returns an array in the items' order: null for an item without
-- quota, else {"claim": the IP claim id its quota claim names, "quota": what quota_admit would have
-- returned} (ipam_claim_try's `p_admitted`); or NULL when some bucket lacks room for the whole batch (then nothing was written, and the claims are
-- decided one by one, as a single create decides, against the buckets this call has locked).
--
-- A bucket row is updated once per batch instead of once per claim, and the claim rows go in one
-- statement: the batch's quota costs about one claim's bookkeeping plus the rows' index entries.
-- The messages are the ones quota_admit writes, with each claim's running total in item order.
-- A quota claim name that a live claim already holds (or two claims of the batch share) fails the
-- insert with a unique violation of resource_claims_live_name: a plain insert, cheaper than one
-- with ON CONFLICT, since the batch is then undone whole and its claims run one by one, each
-- getting its own answer (quota_admit's name check).
CREATE OR REPLACE FUNCTION quota_admit_many(p_items jsonb) RETURNS jsonb
LANGUAGE plpgsql
-- Planned once per session: plan_cache_mode (see server/ipam/sql/ipam_allocate.sql).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_buckets int;
  v_short int;
  v_out jsonb;
BEGIN
  -- The lock order of a single create: buckets by project, then type.
  PERFORM 1 FROM allowance_buckets b
    WHERE (b.project_id, b.resource_type) IN (
      SELECT (i->>'project')::uuid, r->>'resourceType'
      FROM jsonb_array_elements(p_items) i, jsonb_array_elements(i#>'{quota,requests}') r
      WHERE jsonb_typeof(i->'quota') = 'object')
    ORDER BY b.project_id, b.resource_type FOR UPDATE;
  -- A requested type without a bucket has limit 0: short, like a bucket without room.
  SELECT count(*), count(*) FILTER (WHERE b.project_id IS NULL OR b.allocated + t.amount > b."limit")
    INTO v_buckets, v_short
    FROM (SELECT (i->>'project')::uuid AS project, r->>'resourceType' AS type, sum((r->>'amount')::bigint) AS amount
          FROM jsonb_array_elements(p_items) i, jsonb_array_elements(i#>'{quota,requests}') r
          WHERE jsonb_typeof(i->'quota') = 'object'
          GROUP BY 1, 2) t
    LEFT JOIN allowance_buckets b ON b.project_id = t.project AND b.resource_type = t.type;
  IF v_short > 0 OR v_buckets = 0 THEN
    RETURN NULL;
  END IF;

  WITH req AS (
    SELECT i.n AS item, (i.v->>'project')::uuid AS project, r.n AS k, r.v->>'resourceType' AS type, (r.v->>'amount')::bigint AS amount
    FROM jsonb_array_elements(p_items) WITH ORDINALITY i(v, n), jsonb_array_elements(i.v#>'{quota,requests}') WITH ORDINALITY r(v, n)
    WHERE jsonb_typeof(i.v->'quota') = 'object'
  ), grown AS (
    UPDATE allowance_buckets b
      SET allocated = b.allocated + t.amount, claim_count = b.claim_count + t.claims, updated_at = now()
      FROM (SELECT project, type, sum(amount) AS amount, count(*) AS claims FROM req GROUP BY 1, 2) t
      WHERE b.project_id = t.project AND b.resource_type = t.type
      RETURNING b.project_id AS project, b.resource_type AS type, b."limit" AS lim, b.allocated - t.amount AS before
  ), granted AS (
    -- Each request's bucket as it stands after this claim: the bucket before the batch plus the
    -- requests up to this one, in item order.
    SELECT item, k, type, amount, lim, allocated,
           'granted ' || amount || ' ' || type || ' (allocated ' || allocated || ' of ' || lim || ')' AS message
    FROM (SELECT req.item, req.k, req.type, req.amount, g.lim,
                 g.before + sum(req.amount) OVER (PARTITION BY req.project, req.type ORDER BY req.item, req.k) AS allocated
          FROM req JOIN grown g ON g.project = req.project AND g.type = req.type) r
  ), claims AS (
    SELECT item, gen_random_uuid() AS id, gen_random_uuid() AS ref_uid,
           jsonb_agg(jsonb_build_object('resourceType', type, 'limit', lim, 'allocated', allocated) ORDER BY k) AS buckets,
           jsonb_agg(jsonb_build_object('resourceType', type, 'amount', amount, 'status', 'Granted', 'reason', 'QuotaAvailable',
             'message', message) ORDER BY k) AS allocations,
           string_agg(message, '; ' ORDER BY k) AS message
    FROM granted GROUP BY item
  ), written AS (
    INSERT INTO resource_claims (id, project_id, name, requests, status, reason, message, allocations, ref_kind, ref_name, ref_uid, policy_name, created_by)
      SELECT c.id, (i.v->>'project')::uuid, i.v#>>'{quota,name}', i.v#>'{quota,requests}', 'Granted', 'QuotaAvailable', c.message,
             c.allocations, 'IPClaim', i.v->>'name', c.ref_uid::text, i.v#>>'{quota,policy}', i.v#>>'{actor,label}'
      FROM claims c JOIN jsonb_array_elements(p_items) WITH ORDINALITY i(v, n) ON i.n = c.item
  )
  SELECT jsonb_agg(CASE WHEN c.item IS NOT NULL THEN jsonb_build_object('claim', c.ref_uid,
                       'quota', jsonb_build_object('kind', 'granted', 'granted', true, 'id', c.id, 'buckets', c.buckets)) END ORDER BY n)
    INTO v_out
    FROM generate_series(1, jsonb_array_length(p_items)) n LEFT JOIN claims c ON c.item = n;
  RETURN v_out;
END
$$;
