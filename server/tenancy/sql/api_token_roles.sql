-- The role a project token acts with, as a one-row (or empty) table: the lesser of its own role and
-- its creator's current rights in its project: the higher of the creator's project role and owner
-- when they own the project's organization (an organization member holds no role on its projects
-- from that alone), every role for a platform admin, none for a disabled creator (server/tenancy/projects.ts
-- resolveProjectAccess decides a signed-in user's rights by the same rules). A token nobody created
-- (created_by null from the start: the admin CLI, the seed) acts with its own role. This is the one
-- place that says so: token verification (server/tenancy/tokens.ts), api_token_role and the CNI
-- ADD's in-transaction confirmation (cni_lease_add_confirmed, cni_lease_add_many_confirmed) all read
-- it, so a rights change takes effect on the token's next request.
-- A null role: the creator holds no role in the project; no row: the token is revoked or unknown, or
-- is not a project token.
--
-- A set-returning SQL function, so that the planner inlines it where it is read in FROM
-- (`FROM api_token_roles(t.id) r`): it is then planned once with the calling statement, where a
-- scalar SQL function with a FROM clause is planned again at every call.
CREATE OR REPLACE FUNCTION api_token_roles(p_token uuid) RETURNS TABLE (role member_role)
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
    WHERE m.user_id = t.created_by
      AND (m.project_id = t.project_id OR (m.organization_id = p.organization_id AND m.role = 'owner'))
  ) r ON true
  WHERE t.id = p_token AND t.kind = 'project' AND t.revoked_at IS NULL
$$;
