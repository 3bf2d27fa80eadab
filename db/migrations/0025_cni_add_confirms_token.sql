-- Hand-written: drizzle cannot express functions.
--
-- A CNI ADD that names the token it came with ("token": the api_tokens id) checks, in the
-- transaction that writes it, that the token is unrevoked, and writes nothing if it is not. The REST
-- route may then act on a cluster token it verified a moment ago (server/tenancy/tokens.ts keeps
-- verified cluster tokens for 30 s) instead of reading the token again in a statement of its own
-- before every ADD: a revocation committed before the ADD's check refuses the ADD, as one committed
-- before that separate look-up refused it. (A revocation committing while the ADD waits for its
-- node's block locks, after the check, does not stop it: nor did it stop the ADD after the look-up.)
-- Deleting a cluster or its project revokes its tokens in the same transaction, so an unrevoked
-- token's cluster exists.
--
-- The ADDs whose token is revoked answer {"tokenRevoked": true} and change nothing; the others are
-- the ADDs of cni_lease_add (0012, 0016) and cni_lease_add_many (0022), with the same answers.
CREATE OR REPLACE FUNCTION cni_lease_add_confirmed(p jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
  IF p ? 'token' AND NOT EXISTS (SELECT 1 FROM api_tokens t WHERE t.id = (p->>'token')::uuid AND t.revoked_at IS NULL) THEN
    RETURN '{"tokenRevoked": true}'::jsonb;
  END IF;
  RETURN cni_lease_add(p);
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION cni_lease_add_many_confirmed(p_items jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_live boolean[];
  v_answers jsonb;
  v_out jsonb := '[]'::jsonb;
  v_next int := 0;
BEGIN
  SELECT array_agg(NOT (x.v ? 'token') OR t.id IS NOT NULL ORDER BY x.i) INTO v_live
  FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(v, i)
  LEFT JOIN api_tokens t ON t.id = (x.v->>'token')::uuid AND t.revoked_at IS NULL;
  IF true = ALL (v_live) THEN
    RETURN cni_lease_add_many(p_items);
  END IF;
  IF true = ANY (v_live) THEN
    v_answers := cni_lease_add_many((SELECT jsonb_agg(x.v ORDER BY x.i) FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(v, i) WHERE v_live[x.i::int]));
  END IF;
  FOR k IN 1 .. coalesce(array_length(v_live, 1), 0) LOOP
    IF v_live[k] THEN
      v_out := v_out || jsonb_build_array(v_answers->v_next);
      v_next := v_next + 1;
    ELSE
      v_out := v_out || '[{"tokenRevoked": true}]'::jsonb;
    END IF;
  END LOOP;
  RETURN v_out;
END
$$;
