-- The role a project token acts with (api_token_roles says how it is decided), as a value: null
-- when the token is revoked or unknown, is not a project token, or its creator holds no role in
-- the project (a project role: viewer, editor or owner). For callers that want one value (the token
-- list of the console); statements that read many tokens, and the CNI ADD, read api_token_roles in
-- FROM, where it is inlined.
CREATE OR REPLACE FUNCTION api_token_role(p_token uuid) RETURNS member_role
LANGUAGE sql STABLE
AS $$
  SELECT r.role FROM api_token_roles(p_token) r
$$;
