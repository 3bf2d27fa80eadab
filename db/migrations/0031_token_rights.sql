CREATE INDEX "api_tokens_created_by" ON "api_tokens" USING btree ("created_by") WHERE "api_tokens"."created_by" is not null;--> statement-breakpoint
-- Hand-written: drizzle cannot express functions and triggers.
--
-- A project token acts with the lesser of its own role and its creator's current rights in its
-- project: the higher of the creator's organization and project roles, every role for a platform
-- admin, none for a disabled creator (server/tenancy/projects.ts resolveProjectAccess decides a
-- signed-in user's rights by the same rules). A token nobody created (created_by null from the
-- start: the admin CLI, the seed) acts with its own role. api_token_role is the one place that
-- says so: token verification (server/tenancy/tokens.ts) and the CNI ADD's in-transaction
-- confirmation both read it, so a rights change takes effect on the token's next request.
-- Null: the token is revoked or unknown, is not a project token, or its creator holds no role in
-- the project.
CREATE OR REPLACE FUNCTION api_token_role(p_token uuid) RETURNS member_role
LANGUAGE sql STABLE AS $$
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
--> statement-breakpoint
-- Deleting a user revokes the tokens they created, in the deleting statement, before the foreign
-- key sets created_by null (which would otherwise leave the token acting with its own role).
CREATE OR REPLACE FUNCTION api_tokens_revoke_with_creator() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE api_tokens SET revoked_at = now() WHERE created_by = OLD.id AND revoked_at IS NULL;
  RETURN OLD;
END
$$;
--> statement-breakpoint
CREATE TRIGGER users_revoke_created_tokens BEFORE DELETE ON users FOR EACH ROW EXECUTE FUNCTION api_tokens_revoke_with_creator();
--> statement-breakpoint
-- Tokens whose creator was deleted before this migration: created_by was set null, but the audit
-- log says a user created them (tokens nobody created are recorded with a system actor). They die
-- with their creator, as they would now.
UPDATE api_tokens t SET revoked_at = now()
WHERE t.created_by IS NULL AND t.kind = 'project' AND t.revoked_at IS NULL
  AND EXISTS (SELECT 1 FROM events e WHERE e.object_type = 'apiToken' AND e.object_id = t.id::text AND e.action = 'token.create' AND e.actor_type = 'user');
--> statement-breakpoint
-- The CNI ADD's confirmation (0025, 0026) asks api_token_role instead of revoked_at alone: an ADD
-- whose token has no role any more answers {"tokenRevoked": true} (401), one whose token's role
-- fell below editor (an ADD writes) answers {"tokenForbidden": true} (403); either changes nothing.
-- The rest is 0026's.
CREATE OR REPLACE FUNCTION cni_lease_add_confirmed(p jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
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
--> statement-breakpoint
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
